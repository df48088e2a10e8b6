; The declarator names may be qualified (Foo::bar) or templated (f<int>):
; the outliner keeps the last component without template arguments.
; Function patterns capture the bare node and the outliner follows the
; declarator chain (int *f(), T &Foo::get()) to the name, dropping
; declarations that declare no function: spelling the chain out in the
; query made it take ~80 ms to compile, which a hook pays on every run.
(function_definition) @definition.function

; Member function declarations inside classes (bodies defined elsewhere).
(field_declaration_list (field_declaration) @definition.function)
(field_declaration_list (declaration) @definition.function)
; File- and namespace-level prototypes, also inside #if blocks and extern "C"
; (not in function bodies, where `Foo bar(baz);` is usually a variable).
(translation_unit (declaration) @definition.function)
(declaration_list (declaration) @definition.function)
(preproc_if (declaration) @definition.function)
(preproc_ifdef (declaration) @definition.function)
(preproc_else (declaration) @definition.function)
(template_declaration (declaration) @definition.function)

(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(type_definition declarator: (type_identifier) @name) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(concept_definition name: (identifier) @name) @definition.type
; #define with a value (a bare #define is an include guard or a flag).
(preproc_def name: (identifier) @name value: (_)) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_include path: (_) @import)
