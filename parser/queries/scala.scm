; The Read hook walks the tree instead (parser/walk.py _scala; a test checks they agree): a change here
; needs the same change there.
; Names come from the `name` field (parser/extract.py name_and_kind); a `val` is a
; constant at the top level and in a class body (extract.resolve decides):
; naming those shapes here made the query several times slower to compile.
(class_definition) @definition.class
(object_definition) @definition.object
(trait_definition) @definition.trait
(enum_definition) @definition.enum
(function_definition) @definition.function
(function_declaration) @definition.function
(type_definition) @definition.type
(given_definition) @definition.constant
(val_definition) @definition.val

(import_declaration) @import
