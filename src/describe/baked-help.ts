import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { bundleId } from './baked-compact.js'
import { DESCRIPTIONS_FILE } from './descriptions.js'

/**
 * Each command's `--help` as oclif printed it at build time, off a terminal (`agentcli-build`, beside the bundle).
 * A first line, JSON: the layout's mark and version, the bundle's id, the Unicode version of the Node that rendered
 * it, and where in the rest (the body: byte offset and length from the end of that line) each part is: `inputs`,
 * the exact texts the help was rendered from (package.json, oclif.manifest.json, the descriptions file's first
 * line), and `commands`, each command's `[its descriptions line, its help text]` as JSON. A run reads the first
 * line and the parts it compares, never the other commands' help: the same few reads at 10 commands or 1000.
 */
export const BAKED_HELP_FILE = join('dist', 'agentcli.help.json')

/** The first line's marker; its value is the version of this file's layout. */
export const BAKED_HELP_MARK = 'agentcli_help'
const LAYOUT = 2

/** A part of the body: its byte offset and length. */
type Span = [number, number]
type Header = {
  agentcli_help?: unknown
  bundle_id?: unknown
  unicode?: unknown
  inputs?: Span[]
  commands?: Record<string, Span>
}

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

/** The file's text: `help` holds each command's descriptions line (null when it has none) and help text. */
export function encodeBakedHelp(
  bundleId: string,
  inputs: HelpInputs,
  help: ReadonlyMap<string, readonly [line: string | null, text: string]>,
): string {
  const parts = [inputs.pjson, inputs.manifest, inputs.descriptionsHeader]
  const spans: Span[] = []
  let at = 0
  const place = (text: string): Span => {
    const span: Span = [at, Buffer.byteLength(text)]
    at += span[1]
    return span
  }
  for (const part of parts) spans.push(place(part))
  const commands: Record<string, Span> = {}
  const entries = [...help].map(([id, entry]) => {
    const text = `${JSON.stringify(entry)}\n`
    commands[id] = place(text)
    return text
  })
  const header = { [BAKED_HELP_MARK]: LAYOUT, bundle_id: bundleId, unicode: process.versions.unicode }
  return `${JSON.stringify({ ...header, inputs: spans, commands })}\n${parts.join('')}${entries.join('')}`
}

/** A file's text read whole (a look at it, a test; a run reads one command's, {@link bakedHelp}). */
export function decodeBakedHelp(text: string): {
  header: Record<string, unknown>
  inputs: HelpInputs
  help: Map<string, [line: string | null, text: string]>
} {
  const first = text.indexOf('\n')
  const body = Buffer.from(text.slice(first + 1))
  const header = JSON.parse(text.slice(0, first)) as Header
  const part = ([at, length]: Span) => body.subarray(at, at + length).toString('utf8')
  const [pjson, manifest, descriptionsHeader] = (header.inputs ?? []).map(part) as [string, string, string]
  const help = new Map(
    Object.entries(header.commands ?? {}).map(([id, span]) => [id, JSON.parse(part(span)) as [string | null, string]]),
  )
  return { header, inputs: { pjson, manifest, descriptionsHeader }, help }
}

/**
 * The help text of command `id` the build stored, when this code is the bundle that build wrote (its id) and what
 * the text was rendered from is unchanged: the same package.json, manifest, and the command's descriptions (the
 * first line's shared flags and its own line), on a Node of the same Unicode version. Else undefined: oclif renders it.
 */
export function bakedHelp(root: string, id: string, bundle = bundleId()): string | undefined {
  if (!bundle) return undefined
  let fd: number | undefined
  try {
    fd = openSync(join(root, BAKED_HELP_FILE), 'r')
    const { header, body } = readHeader(fd)
    if (header[BAKED_HELP_MARK] !== LAYOUT || header.bundle_id !== bundle) return undefined
    // Text widths (wrapping) follow the Unicode version of the Node that rendered it.
    if (header.unicode !== process.versions.unicode) return undefined
    const span = header.commands && Object.hasOwn(header.commands, id) ? header.commands[id] : undefined
    const [pjson, manifest, descriptionsHeader] = header.inputs ?? []
    if (!span || !pjson || !manifest || !descriptionsHeader) return undefined
    const part = (at: Span) => readSpan(fd as number, body, at)
    if (!part(pjson).equals(readFileSync(join(root, 'package.json')))) return undefined
    if (!part(manifest).equals(readFileSync(join(root, 'oclif.manifest.json')))) return undefined
    const descriptions = readFileSync(join(root, DESCRIPTIONS_FILE))
    const [line, help] = JSON.parse(part(span).toString('utf8')) as [string | null, string]
    const now = descriptionLine(descriptions, id)
    if (!part(descriptionsHeader).equals(now.header) || (now.line?.toString('utf8') ?? null) !== line) return undefined
    return typeof help === 'string' ? help : undefined
  } catch {
    return undefined
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}

/** The first line, parsed, and the byte offset of the body after it. */
function readHeader(fd: number): { header: Header; body: number } {
  const chunks: Buffer[] = []
  let read = 0
  for (;;) {
    const chunk = Buffer.allocUnsafe(65536)
    const n = readSync(fd, chunk, 0, chunk.length, read)
    const end = chunk.subarray(0, n).indexOf(10)
    if (end >= 0 || n === 0) {
      chunks.push(chunk.subarray(0, end >= 0 ? end : n))
      if (end < 0) throw new Error('no header')
      const text = Buffer.concat(chunks).toString('utf8')
      return { header: JSON.parse(text) as Header, body: read + end + 1 }
    }
    chunks.push(chunk.subarray(0, n))
    read += n
  }
}

function readSpan(fd: number, body: number, [at, length]: Span): Buffer {
  const buffer = Buffer.allocUnsafe(length)
  if (readSync(fd, buffer, 0, length, body + at) !== length) throw new Error('short file')
  return buffer
}

/** The descriptions file's first line and the line of command `id` (without its key), as bytes. */
function descriptionLine(file: Buffer, id: string): { header: Buffer; line: Buffer | undefined } {
  const end = file.indexOf(10)
  const header = end < 0 ? file : file.subarray(0, end)
  const key = Buffer.from(`\n${JSON.stringify(id)}\t`)
  const at = file.indexOf(key)
  if (at < 0) return { header, line: undefined }
  const next = file.indexOf(10, at + key.length)
  return { header, line: file.subarray(at + key.length, next < 0 ? undefined : next) }
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
