(function_declaration name: (identifier) @name) @definition.function
(function_declaration name: (dot_index_expression field: (identifier) @name)) @definition.function
(function_declaration name: (method_index_expression method: (identifier) @name)) @definition.method

; M.f = function () ... end
(assignment_statement
  (variable_list name: [
    (identifier) @name
    (dot_index_expression field: (identifier) @name)
  ])
  (expression_list value: (function_definition))) @definition.function

((function_call
   name: (identifier) @_req
   arguments: (arguments . (string content: (string_content) @import)))
 (#eq? @_req "require"))
