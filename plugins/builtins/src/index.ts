/** @agentcli/plugin-builtins: the built-in commands every agentcli tool lists in `oclif.plugins`. */
export {}
