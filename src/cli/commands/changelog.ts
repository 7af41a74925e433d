import Builtin from '../../builtins/commands/changelog.js'

/** `agentcli changelog`: the built-in, reading the CHANGELOG.md embedded at build time, as every agentcli tool has it. */
export default Builtin
