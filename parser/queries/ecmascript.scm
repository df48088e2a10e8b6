; Shared by JavaScript, TypeScript and TSX.

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(function_expression name: (identifier) @name) @definition.function
(generator_function name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(class name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.method

; const f = () => ..., var f = function () {...}, const C = class {...}
(lexical_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: [(arrow_function) (function_expression) (generator_function)])) @definition.function
(lexical_declaration
  (variable_declarator name: (identifier) @name value: (class))) @definition.class
(variable_declaration
  (variable_declarator name: (identifier) @name value: (class))) @definition.class

; var C = (function (_super) {...}(Base)) (classes as TypeScript emits them for
; ES5) and other immediately-invoked module functions.
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (parenthesized_expression
      [(call_expression function: (function_expression)) (function_expression)]))) @definition.function
(variable_declaration
  (variable_declarator
    name: (identifier) @name
    value: (call_expression
      function: (parenthesized_expression [(function_expression) (arrow_function)])))) @definition.function

; exports.f = function () {}, Foo.prototype.bar = function () {}, this.x = () => {}
(expression_statement
  (assignment_expression
    left: [
      (identifier) @name
      (member_expression property: (property_identifier) @name)
    ]
    right: [
      (arrow_function) (function_expression) (generator_function)
      (parenthesized_expression [(function_expression) (generator_function) (arrow_function)])
      (call_expression
        function: (parenthesized_expression [(function_expression) (generator_function) (arrow_function)]))
    ])) @definition.function

; { key: function () {} } and { key: () => {} }
(pair
  key: [(property_identifier) (string) (number)] @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function

; Top-level constants (not functions, not require() imports).
(program
  (lexical_declaration
    "const"
    (variable_declarator name: (identifier) @name value: (_) @_value)) @definition.constant
  (#not-match? @_value "^(require\\(|(async\\s+)?(function|\\(|[A-Za-z_$][\\w$]*\\s*=>)|class\\b)"))
(program
  (export_statement
    (lexical_declaration
      "const"
      (variable_declarator name: (identifier) @name value: (_) @_value))) @definition.constant
  (#not-match? @_value "^(require\\(|(async\\s+)?(function|\\(|[A-Za-z_$][\\w$]*\\s*=>)|class\\b)"))

(import_statement source: (string (string_fragment) @import))
((call_expression
   function: (identifier) @_require
   arguments: (arguments . (string (string_fragment) @import)))
 (#eq? @_require "require"))
