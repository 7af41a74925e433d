/** agentcli/builtins: the built-in commands (`COMMANDS`, `builtins()`), see @agentcli/plugin-builtins. */
export * from '@agentcli/plugin-builtins'
