import Builtin from '../../builtins/commands/doctor.js'

/** `agentcli doctor`: the built-in, as every agentcli tool has it. */
export default Builtin
