; The Read hook does not compile this query: parser/walk.py (_php) finds the same matches (a test checks
; that they agree), so a change here needs the same change there.
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(namespace_definition name: (namespace_name) @name) @definition.module

(const_declaration (const_element (name) @name)) @definition.constant

(namespace_use_clause (qualified_name) @import)
(namespace_use_clause (name) @import)
(require_once_expression (_) @import)
(require_expression (_) @import)
(include_once_expression (_) @import)
(include_expression (_) @import)
