; The Read hook walks the tree instead (parser/walk.py _csharp; a test checks they agree): a change here
; needs the same change there.
; Names come from the `name` field (parser/extract.py name_and_kind): naming them
; here made the query slower to compile, which a hook pays on every miss.
(class_declaration) @definition.class
(interface_declaration) @definition.interface
(struct_declaration) @definition.struct
(enum_declaration) @definition.enum
(record_declaration) @definition.record
(delegate_declaration) @definition.type
(namespace_declaration) @definition.module
(file_scoped_namespace_declaration) @definition.module
(method_declaration) @definition.method
(constructor_declaration) @definition.method
(destructor_declaration) @definition.method
(operator_declaration "operator" @name) @definition.method
(property_declaration) @definition.property
(event_declaration) @definition.property
(local_function_statement) @definition.function

; `const` fields: extract.resolve reads the modifiers.
(field_declaration) @definition.const_field

(using_directive (_) @import)
