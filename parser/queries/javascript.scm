; The Read hook does not compile JavaScript's query (ecmascript.scm and this file): parser/walk.py
; (_javascript) finds the same matches (a test checks that they agree), so a change needs the same change there.
; JavaScript only: class fields holding functions (TypeScript names the node
; public_field_definition).
(field_definition) @definition.field
