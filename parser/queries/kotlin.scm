; The Read hook walks the tree instead (parser/walk.py _kotlin_node; a test checks they agree): a change
; here needs the same change there.
; class, interface and enum class are all class_declaration: the outliner
; reads the keyword (parser/extract.py refine_kind). Names come from the
; `name` field; top-level `const val`s are picked by extract.resolve. Naming
; those shapes here made the query several times slower to compile.
(class_declaration) @definition.class
(object_declaration) @definition.object
(companion_object "companion" @name) @definition.object
(function_declaration) @definition.function
(secondary_constructor "constructor" @name) @definition.method
(type_alias type: (identifier) @name) @definition.type
(property_declaration) @definition.const_property

(import (qualified_identifier) @import)
