; class, interface and enum class are all class_declaration; the keyword
; tells them apart (the outliner prefers the specific kind).
(class_declaration "interface" name: (_) @name) @definition.interface
(class_declaration (modifiers (class_modifier "enum")) name: (_) @name) @definition.enum
(class_declaration name: (_) @name) @definition.class
(object_declaration name: (_) @name) @definition.object
(companion_object "companion" @name) @definition.object
(function_declaration name: (_) @name) @definition.function
(secondary_constructor "constructor" @name) @definition.method
(type_alias type: (identifier) @name) @definition.type

(source_file
  (property_declaration
    (modifiers (property_modifier "const"))
    (variable_declaration (identifier) @name)) @definition.constant)

(import (qualified_identifier) @import)
