import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { bundleId } from './baked-compact.js'
import { DESCRIPTIONS_FILE } from './descriptions.js'

/**
 * Each command's `--help` as oclif printed it at build time, off a terminal (`agentcli-build`, beside the bundle):
 * a first line `{"agentcli_help":1,"bundle_id":"…","unicode":"…"}` (the Unicode version of the Node that rendered it), a
 * second line holding the exact texts it was rendered from
 * (`[package.json, oclif.manifest.json, the descriptions file's first line]`), then one line per command, its id as
 * a JSON string, a tab, and `[its descriptions line, its help text]` as JSON.
 */
export const BAKED_HELP_FILE = join('dist', 'agentcli.help.json')

/** The first line's marker, and the version of this file's layout. */
export const BAKED_HELP_MARK = 'agentcli_help'

/** What a stored help text was rendered from, besides the bundle. */
export type HelpInputs = { pjson: string; manifest: string; descriptionsHeader: string }

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

/**
 * The help text of command `id` the build stored, when this code is the bundle that build wrote (its id) and what
 * the text was rendered from is unchanged: the same package.json, manifest, and the command's descriptions (the
 * first line's shared flags and its own line), on a Node of the same Unicode version. Else undefined: oclif renders it.
 */
export function bakedHelp(root: string, id: string, bundle = bundleId()): string | undefined {
  if (!bundle) return undefined
  try {
    const text = readFileSync(join(root, BAKED_HELP_FILE), 'utf8')
    const first = text.indexOf('\n')
    const second = text.indexOf('\n', first + 1)
    if (first < 0 || second < 0) return undefined
    const header = JSON.parse(text.slice(0, first)) as Record<string, unknown>
    if (header[BAKED_HELP_MARK] !== 1 || header.bundle_id !== bundle) return undefined
    // Text widths (wrapping) follow the Unicode version of the Node that rendered it.
    if (header.unicode !== process.versions.unicode) return undefined
    const key = `\n${JSON.stringify(id)}\t`
    const at = text.indexOf(key, second)
    if (at < 0) return undefined
    const end = text.indexOf('\n', at + key.length)
    const [line, help] = JSON.parse(text.slice(at + key.length, end < 0 ? undefined : end)) as [string | null, string]
    const [pjson, manifest, descriptionsHeader] = JSON.parse(text.slice(first + 1, second)) as string[]
    if (readFileSync(join(root, 'package.json'), 'utf8') !== pjson) return undefined
    if (readFileSync(join(root, 'oclif.manifest.json'), 'utf8') !== manifest) return undefined
    const descriptions = descriptionLines(readFileSync(join(root, DESCRIPTIONS_FILE), 'utf8'), id)
    if (descriptions.header !== descriptionsHeader || (descriptions.line ?? null) !== line) return undefined
    return typeof help === 'string' ? help : undefined
  } catch {
    return undefined
  }
}

/** The descriptions file's first line and the line of command `id` (without its key), as the build wrote them. */
export function descriptionLines(text: string, id: string): { header: string; line: string | undefined } {
  const end = text.indexOf('\n')
  const header = end < 0 ? text : text.slice(0, end)
  const key = `\n${JSON.stringify(id)}\t`
  const at = text.indexOf(key)
  if (at < 0) return { header, line: undefined }
  const next = text.indexOf('\n', at + key.length)
  return { header, line: text.slice(at + key.length, next < 0 ? undefined : next) }
}
