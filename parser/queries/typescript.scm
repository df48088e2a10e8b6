; TypeScript and TSX only (names come from the `name` field, see ecmascript.scm). The Read hook reads
; these bare patterns and walks the tree (parser/walk.py _typescript): keep them `(type) @capture`.

(interface_declaration) @definition.interface
(type_alias_declaration) @definition.type
(enum_declaration) @definition.enum
(abstract_class_declaration) @definition.class
(internal_module) @definition.module
(module) @definition.module
(function_signature) @definition.function
(method_signature) @definition.method
(abstract_method_signature) @definition.method
; Class fields holding functions.
(public_field_definition) @definition.field
