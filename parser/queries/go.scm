(function_declaration name: (identifier) @name) @definition.function
(method_declaration name: (field_identifier) @name) @definition.method

(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: [
  (type_identifier) (qualified_type) (generic_type) (pointer_type) (function_type)
  (map_type) (slice_type) (array_type) (channel_type) (parenthesized_type)
  (negated_type)
]) @definition.type
(type_alias name: (type_identifier) @name) @definition.type

; Interface methods are the interface's API.
(interface_type (method_elem name: (field_identifier) @name) @definition.method)

(source_file (const_declaration (const_spec name: (identifier) @name) @definition.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @definition.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @definition.variable)))

(import_spec path: (interpreted_string_literal (interpreted_string_literal_content) @import))
