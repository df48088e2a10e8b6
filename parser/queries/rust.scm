(function_item name: (identifier) @name) @definition.function
; Trait methods without a body.
(function_signature_item name: (identifier) @name) @definition.function

(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
; Type aliases anywhere: a module's, a trait's, an impl's associated types (`type Error = io::Error;`), a
; function body's (a test's `type Boxed = ...`).
(type_item name: (type_identifier) @name) @definition.type
(trait_item body: (declaration_list
  (associated_type name: (type_identifier) @name) @definition.type))
(mod_item name: (identifier) @name) @definition.module
(macro_definition name: (identifier) @name) @definition.macro

; impl blocks are named after the type they implement; generics dropped.
(impl_item type: [
  (type_identifier) @name
  (generic_type type: (type_identifier) @name)
  (scoped_type_identifier name: (type_identifier) @name)
  (generic_type type: (scoped_type_identifier name: (type_identifier) @name))
]) @definition.impl
; Anything else (&T, [T], tuples...): the whole type text.
(impl_item type: (_) @name) @definition.impl

; Constants at module, impl or trait level (not the ones local to a fn).
(source_file (const_item name: (identifier) @name) @definition.constant)
(source_file (static_item name: (identifier) @name) @definition.constant)
(declaration_list (const_item name: (identifier) @name) @definition.constant)
(declaration_list (static_item name: (identifier) @name) @definition.constant)

(use_declaration argument: (_) @import)
(extern_crate_declaration name: (identifier) @import)
