; The Read hook walks the tree instead (parser/walk.py _swift_node; a test checks they agree): a change
; here needs the same change there.
; class, struct, enum, actor and extension are all class_declaration; the
; outliner reads the declaration_kind (one bare pattern compiles far faster
; than five spelled-out ones).
(class_declaration) @definition.class
(protocol_declaration name: (_) @name) @definition.protocol
; No @name: naming a child of function_declaration makes this query take
; ~100 ms to compile; the outliner reads the `name` field instead.
(function_declaration) @definition.function
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(init_declaration "init" @name) @definition.method
(deinit_declaration "deinit" @name) @definition.method
; `typealias A = B` has two `name` fields (A and B): only the type_identifier is the name.
(typealias_declaration name: (type_identifier) @name) @definition.type

; Properties of a file or a type (a file's `let` is a constant): the outliner reads the name and the
; parent (parser/extract.py resolve).
(property_declaration) @definition.swift_property

(import_declaration (identifier) @import)
