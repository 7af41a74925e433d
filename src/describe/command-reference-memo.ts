import { join } from 'node:path'
import { bundleId } from './baked-compact.js'
import type { CommandDescription } from './command.js'
import { type CommandMemo, encodeMemo, type MemoInputs, readMemo } from './command-memo.js'
import { descriptionLine } from './descriptions.js'
import type { Reference } from './reference.js'

/**
 * Each visible command's `reference` description and, once, the tool-wide rest of the reference, as the build's
 * full reference held them (`agentcli-build`, beside the bundle): a command memo (`./command-memo.ts`), written only
 * when the build proved the bundle answers from the same three texts (see `storedCompact`).
 */
export const COMMAND_REFERENCE_FILE = join('dist', 'agentcli.command-reference.json')

const MEMO: CommandMemo = { file: COMMAND_REFERENCE_FILE, mark: 'agentcli_command_reference' }

/**
 * The file's text for the full reference `full` of a bundle, computed from `inputs` and the descriptions file (its
 * bytes, `descriptions`).
 */
export function encodeCommandReferences(
  bundle: string,
  inputs: MemoInputs,
  full: Reference,
  descriptions: Buffer,
): string {
  const entries = new Map(
    full.commands.map((c) => {
      const id = c.path.replaceAll(' ', ':')
      return [id, [descriptionLine(descriptions, id).line?.toString('utf8') ?? null, c]] as const
    }),
  )
  return encodeMemo(MEMO, bundle, inputs, entries, { shared: { ...full, commands: [] } })
}

/**
 * The reference `reference <words>` builds when the words name exactly one visible command (`job list`, `job:list`
 * or `"job list"`), without loading oclif's `Config`: the rest of the full reference and that command's description
 * as the build stored them, while this is the bundle it names and package.json, the manifest and the command's
 * descriptions are the texts they came from. Else undefined: the caller builds the reference.
 */
export function storedCommandReference(
  root: string,
  words: readonly string[],
  bundle = bundleId(),
): Reference | undefined {
  // The router's rule (`selectCommands`): words read greedily, so words that are exactly one command's id name it.
  const id = words
    .flatMap((w) => w.split(/[\s:]+/))
    .filter((w) => w.length > 0)
    .join(':')
  if (!id) return undefined
  const found = readMemo(root, MEMO, id, bundle)
  if (!found || typeof found.shared !== 'object' || found.shared === null) return undefined
  return { ...(found.shared as Reference), commands: [found.entry as CommandDescription] }
}
