(class_definition name: (_) @name) @definition.class
(object_definition name: (_) @name) @definition.object
(trait_definition name: (_) @name) @definition.trait
(enum_definition name: (_) @name) @definition.enum
(function_definition name: (_) @name) @definition.function
(function_declaration name: (_) @name) @definition.function
(type_definition name: (_) @name) @definition.type
(given_definition name: (_) @name) @definition.constant

(compilation_unit (val_definition pattern: (identifier) @name) @definition.constant)
(template_body (val_definition pattern: (identifier) @name) @definition.constant)

(import_declaration) @import
