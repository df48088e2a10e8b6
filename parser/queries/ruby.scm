; The Read hook walks the tree instead (parser/walk.py _ruby; a test checks they agree): a change here
; needs the same change there.
; Names come from the `name` field (parser/extract.py name_and_kind); requires are
; collected by walking the top level (extract.ruby_requires): matching `call`
; nodes here made the query ~2.5x slower to compile.
(class) @definition.class
(module) @definition.module
(method) @definition.method
(singleton_method) @definition.method
(alias) @definition.method

; Constants at any level: FOO = ...
(assignment left: (constant) @name) @definition.constant
