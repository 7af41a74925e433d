import Reference from '../../builtins/commands/reference.js'

/** `agentcli reference`: the built-in, so the framework's own CLI describes itself as every agentcli tool does. */
export default Reference
