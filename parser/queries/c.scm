; Function patterns capture the bare node; the outliner follows the
; declarator chain (char *f(), char **g()) to the name and drops
; declarations of variables. Spelled out in the query, the chain makes it
; several times slower to compile, which a hook pays on every run.
(function_definition) @definition.function
; Prototypes (headers are mostly these), also inside #ifdef and extern "C".
(declaration) @definition.function

(struct_specifier name: (type_identifier) @name body: (_)) @definition.struct
(union_specifier name: (type_identifier) @name body: (_)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (_)) @definition.enum
; An enum without a name standing alone in the file (`enum { A = 1, B };`: its members are the file's
; constants) or typing a declaration (`enum { A, B } state;`, in a function too): parser/extract.py
; anonymous_enum names it by its keyword.
(translation_unit (enum_specifier !name body: (_)) @definition.enum)
(preproc_if (enum_specifier !name body: (_)) @definition.enum)
(preproc_ifdef (enum_specifier !name body: (_)) @definition.enum)
(preproc_else (enum_specifier !name body: (_)) @definition.enum)
(preproc_elif (enum_specifier !name body: (_)) @definition.enum)
(declaration_list (enum_specifier !name body: (_)) @definition.enum)
(declaration (enum_specifier !name body: (_)) @definition.enum)
; The name is found by following the declarator: `typedef int (*handler)(void);` names `handler`.
(type_definition) @definition.type
; #define with a value (a bare #define is an include guard or a flag).
; With a value or without (a flag: `#define HAVE_DECLSPEC_DLL`); the outliner leaves out include guards.
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro

(preproc_include path: (_) @import)
