; JavaScript only: class fields holding functions (TypeScript names the node
; public_field_definition).
(field_definition
  property: (_) @name
  value: [(arrow_function) (function_expression)]) @definition.method
