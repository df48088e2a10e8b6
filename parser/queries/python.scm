; Definitions: @definition.<kind> is the whole node, @name its name.
; A decorated definition is captured too, so decorators land in the
; signature; the outliner keeps the outermost node per name.
; The Read hook does not compile this query: parser/walk.py (_python) finds the same matches (a test checks
; that they agree), so a change here needs the same change there.

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function

(decorated_definition
  definition: (class_definition name: (identifier) @name)) @definition.class
(decorated_definition
  definition: (function_definition name: (identifier) @name)) @definition.function

; Module-level UPPER_CASE assignments are constants (also annotated ones).
(module
  (expression_statement
    (assignment left: (identifier) @name) @definition.constant)
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))

; `name = lambda ...` is a function for ctags and for readers.
(expression_statement
  (assignment left: (identifier) @name right: (lambda)) @definition.function)

; PEP 695 `type X = ...`
(type_alias_statement left: (type (identifier) @name)) @definition.type

(import_statement name: (dotted_name) @import)
(import_statement name: (aliased_import name: (dotted_name) @import))
(import_from_statement module_name: (_) @import)
(future_import_statement) @import
