; JavaScript only: class fields holding functions (TypeScript names the node
; public_field_definition).
(field_definition) @definition.field
