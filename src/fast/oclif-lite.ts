import { notProvided } from './fallback.js'

/*
 * What `@oclif/core` is inside the fast bundle (`dist/fast.cjs`): the fast routes' module graph (the command, the
 * framework's `AgentCommand`, its flags and parse wrapper) imports `@oclif/core`, and gets this instead. The flag
 * and argument builders, the parser and the validator are oclif's own modules (so a parse is oclif's parse, to
 * the byte); `Command`, `Errors` and the config are the lite ones; anything else hands the run to oclif's path.
 */

export * as Args from '@oclif/core/args'
export * as Flags from '@oclif/core/flags'
export { Command } from './lite-command.js'
export * as Errors from './lite-errors.js'

/** oclif's `Config`: only oclif's path loads one. */
export const Config = {
  load: (): never => notProvided('Config.load'),
}

/** oclif's `loadHelpClass`: help is oclif's path. */
export function loadHelpClass(..._args: unknown[]): never {
  return notProvided('loadHelpClass')
}

/** oclif's `Help`: help is oclif's path. */
export class Help {
  constructor(..._args: unknown[]) {
    notProvided('Help')
  }
}

/** oclif's `CommandHelp`: help is oclif's path. */
export class CommandHelp {
  constructor(..._args: unknown[]) {
    notProvided('CommandHelp')
  }
}
