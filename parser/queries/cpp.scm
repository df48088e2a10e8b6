; Patterns name node types only, and the outliner finds the names
; (parser/extract.py name_and_kind): it follows a declarator chain (int *f(),
; T &Foo::get()) to the function's name, drops declarations that declare no
; function or sit in a function body (`Foo bar(baz);` there is usually a
; variable), forward declarations (`class Foo;`) and bare #defines. Spelling
; those shapes and parents out in the query made it take 25-80 ms to compile,
; which a hook pays on every miss. Names may be qualified (Foo<T>::bar) or
; templated (f<int>): the outliner keeps the last component without
; template arguments.
(function_definition) @definition.function
(declaration) @definition.function
(field_declaration) @definition.function

(class_specifier) @definition.class
(struct_specifier) @definition.struct
(union_specifier) @definition.struct
(enum_specifier) @definition.enum
(namespace_definition) @definition.module
(type_definition) @definition.type
(alias_declaration) @definition.type
(concept_definition) @definition.type
(preproc_def) @definition.constant
(preproc_function_def) @definition.macro

(preproc_include path: (_) @import)
