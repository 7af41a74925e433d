// agentcli/builtins: the built-in commands, shipped inside agentcli (a bundled dependency) so one install brings
// them. A plain re-export, outside src/: the built-ins are compiled after the framework they import, so the
// framework's own TypeScript project cannot import them, and nothing in the framework imports this file.
export * from '@agentcli/plugin-builtins'
