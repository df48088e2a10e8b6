(function_definition name: (word) @name) @definition.function

((command
   name: (command_name) @_cmd
   argument: (_) @import)
 (#any-of? @_cmd "source" "."))
