import { join } from 'node:path'
import { bundleId } from './baked-compact.js'
import { type CommandMemo, decodeMemo, encodeMemo, type MemoInputs, readMemo } from './command-memo.js'

/**
 * Each command's `--help` as oclif printed it at build time, off a terminal (`agentcli-build`, beside the bundle),
 * a command memo (`./command-memo.ts`) whose entries are help texts, with the Unicode version of the Node that
 * rendered them (text widths follow it).
 */
export const BAKED_HELP_FILE = join('dist', 'agentcli.help.json')

/** The first line's marker; its value is the version of this file's layout. */
export const BAKED_HELP_MARK = 'agentcli_help'

const MEMO: CommandMemo = { file: BAKED_HELP_FILE, mark: BAKED_HELP_MARK }

/** What a stored help text was rendered from, besides the bundle. */
export type HelpInputs = MemoInputs

/**
 * Whether oclif would print help here exactly as it did when the build rendered it: plain (no colour) and 80
 * columns wide. oclif reads the process's own environment, argv and stdout for both (`screen.ts`, supports-color),
 * so this does too: stdout is no terminal, no `OCLIF_COLUMNS` or `settings.columns` sets a width, and no
 * `FORCE_COLOR` or `--color…` argument could turn colour on (an `io` run's sink is not what oclif asks).
 */
export function plainHelpHere(stdoutIsTerminal: boolean): boolean {
  if (stdoutIsTerminal) return false
  // oclif reads the process's environment for both, not the run's (runEnv).
  const env = process.env
  if (env.OCLIF_COLUMNS !== undefined || env.FORCE_COLOR !== undefined) return false
  if ((globalThis as { oclif?: { columns?: unknown } }).oclif?.columns !== undefined) return false
  return !process.argv.some((arg) => arg.includes('color'))
}

/** The file's text: `help` holds each command's descriptions line (null when it has none) and help text. */
export function encodeBakedHelp(
  bundleId: string,
  inputs: HelpInputs,
  help: ReadonlyMap<string, readonly [line: string | null, text: string]>,
): string {
  return encodeMemo(MEMO, bundleId, inputs, help, { facts: { unicode: process.versions.unicode } })
}

/** A file's text read whole (a look at it, a test; a run reads one command's help, {@link bakedHelp}). */
export function decodeBakedHelp(text: string): {
  header: Record<string, unknown>
  inputs: HelpInputs
  help: Map<string, [line: string | null, text: string]>
} {
  const { header, inputs, entries } = decodeMemo(text)
  return { header, inputs, help: entries as Map<string, [string | null, string]> }
}

/**
 * The help text of command `id` the build stored, when this code is the bundle that build wrote (its id) and what
 * the text was rendered from is unchanged: the same package.json, manifest, and the command's descriptions (the
 * first line's shared flags and its own line), on a Node of the same Unicode version. Else undefined: oclif renders it.
 */
export function bakedHelp(root: string, id: string, bundle = bundleId()): string | undefined {
  const found = readMemo(root, MEMO, id, bundle, { unicode: process.versions.unicode })
  return typeof found?.entry === 'string' ? found.entry : undefined
}
