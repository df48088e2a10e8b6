(class name: (_) @name) @definition.class
(module name: (_) @name) @definition.module
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(alias name: (_) @name) @definition.method

; Constants at any level: FOO = ...
(assignment left: (constant) @name) @definition.constant

((call
   method: (identifier) @_req
   arguments: (argument_list . (string (string_content) @import)))
 (#any-of? @_req "require" "require_relative" "load"))
