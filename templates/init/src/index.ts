/**
 * The commands of {{name}}, for oclif's explicit command strategy: the tool's own and the built-ins it ships, so
 * `agentcli-build` writes one bundle (`dist/bundle.cjs`) holding the tool, the framework and oclif once each.
 * A new command goes here as well as in src/commands/.
 */
import { builtins } from 'agentcli/builtins'
import Export from './commands/export.js'
import List from './commands/list.js'
import SetNote from './commands/set.js'

/** Every command of the tool by id. */
export const COMMANDS = {
  // reference, context, doctor and changelog always; turn these on when the tool releases signed archives
  // (`update`, with "agentcli.update" in package.json) or has async commands (`job …`).
  ...builtins({ update: false, jobs: false }),
  export: Export,
  list: List,
  set: SetNote,
}
