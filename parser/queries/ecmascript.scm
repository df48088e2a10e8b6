; Shared by JavaScript, TypeScript and TSX. The Read hook walks the tree instead (parser/walk.py
; _javascript, _typescript; a test checks they agree): a change here needs the same change there.
;
; Patterns name node types only: the outliner takes the `name` field and, for
; the @definition.declarator/assignment/pair captures, looks at the value to
; decide whether they define a function, a class or a top-level constant
; (parser/extract.py resolve). Spelling those shapes out here made the
; TypeScript query take ~50 ms to compile, which a hook pays on every miss.

(function_declaration) @definition.function
(generator_function_declaration) @definition.function
(function_expression) @definition.function
(generator_function) @definition.function
(class_declaration) @definition.class
(class) @definition.class
(method_definition) @definition.method

; const f = () => ..., var C = class {...}, var M = (function () {...}()),
; const LIMIT = 10 (top level)
(variable_declarator) @definition.declarator
; exports.f = function () {}, Foo.prototype.bar = function () {}, this.x = () => {}
(assignment_expression) @definition.assignment
; { key: function () {} } and { key: () => {} }
(pair) @definition.pair

(import_statement source: (string (string_fragment) @import))
((call_expression
   function: (identifier) @_require
   arguments: (arguments . (string (string_fragment) @import)))
 (#eq? @_require "require"))
