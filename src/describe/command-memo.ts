import { closeSync, openSync, readFileSync, readSync } from 'node:fs'
import { join } from 'node:path'
import { DESCRIPTIONS_FILE, descriptionLine } from './descriptions.js'

/**
 * A file `agentcli-build` writes beside the bundle holding one entry per command, each computed from the bundle and
 * a few texts, read one command at a time. A first line, JSON: the file's mark (its value the layout's version), the
 * bundle's id, what else the entries depend on (`facts`), and where in the rest (the body: byte offset and length
 * from the end of that line) each part is: `inputs`, the exact texts the entries were computed from (package.json,
 * oclif.manifest.json, the descriptions file's first line), an optional `shared` part, and `commands`, each
 * command's `[its descriptions line, its entry]` as JSON. A run reads the first line and the parts it compares,
 * never the other commands' entries: the same few reads at 10 commands or 1000.
 */
export type CommandMemo = {
  /** The file, relative to the tool's root. */
  file: string
  /** The first line's marker. */
  mark: string
}

const LAYOUT = 2

/** What the entries were computed from, besides the bundle. */
export type MemoInputs = { pjson: string; manifest: string; descriptionsHeader: string }

/** What a build stores: each command's descriptions line (null when it has none) and entry. */
export type MemoEntries = ReadonlyMap<string, readonly [line: string | null, entry: unknown]>

/** A part of the body: its byte offset and length. */
type Span = [number, number]
type Header = Record<string, unknown> & { inputs?: Span[]; shared?: Span; commands?: Record<string, Span> }

/** The file's text. `facts` go into the first line as they are; `shared` is stored once, as JSON. */
export function encodeMemo(
  memo: CommandMemo,
  bundleId: string,
  inputs: MemoInputs,
  entries: MemoEntries,
  options: { facts?: Record<string, unknown>; shared?: unknown } = {},
): string {
  const parts = [inputs.pjson, inputs.manifest, inputs.descriptionsHeader]
  let at = 0
  const place = (text: string): Span => {
    const span: Span = [at, Buffer.byteLength(text)]
    at += span[1]
    return span
  }
  const spans = parts.map(place)
  const shared = options.shared === undefined ? undefined : `${JSON.stringify(options.shared)}\n`
  const sharedSpan = shared === undefined ? undefined : place(shared)
  const commands: Record<string, Span> = {}
  const texts = [...entries].map(([id, entry]) => {
    const text = `${JSON.stringify(entry)}\n`
    commands[id] = place(text)
    return text
  })
  const header = { [memo.mark]: LAYOUT, bundle_id: bundleId, ...options.facts, inputs: spans, shared: sharedSpan }
  return `${JSON.stringify({ ...header, commands })}\n${parts.join('')}${shared ?? ''}${texts.join('')}`
}

/** A file's text read whole (a look at it, a test; a run reads one command's, {@link readMemo}). */
export function decodeMemo(text: string): {
  header: Record<string, unknown>
  inputs: MemoInputs
  shared: unknown
  entries: Map<string, [line: string | null, entry: unknown]>
} {
  const first = text.indexOf('\n')
  const body = Buffer.from(text.slice(first + 1))
  const header = JSON.parse(text.slice(0, first)) as Header
  const part = ([at, length]: Span) => body.subarray(at, at + length).toString('utf8')
  const [pjson, manifest, descriptionsHeader] = (header.inputs ?? []).map(part) as [string, string, string]
  const entries = new Map(
    Object.entries(header.commands ?? {}).map(([id, span]) => [id, JSON.parse(part(span)) as [string | null, unknown]]),
  )
  const shared = header.shared ? JSON.parse(part(header.shared)) : undefined
  return { header, inputs: { pjson, manifest, descriptionsHeader }, shared, entries }
}

/**
 * The entry of command `id` (with the shared part), when the file names bundle `bundle` and holds exactly these
 * `facts`, and what the entry was computed from is unchanged: the same package.json, manifest, and the command's
 * descriptions (the first line's shared flags and its own line). Else undefined: the caller computes it.
 */
export function readMemo(
  root: string,
  memo: CommandMemo,
  id: string,
  bundle: string | undefined,
  facts: Record<string, unknown> = {},
): { entry: unknown; shared: unknown } | undefined {
  if (!bundle) return undefined
  let fd: number | undefined
  try {
    fd = openSync(join(root, memo.file), 'r')
    const { header, body } = readHeader(fd)
    if (header[memo.mark] !== LAYOUT || header.bundle_id !== bundle) return undefined
    for (const [key, value] of Object.entries(facts)) if (header[key] !== value) return undefined
    const span = header.commands && Object.hasOwn(header.commands, id) ? header.commands[id] : undefined
    const [pjson, manifest, descriptionsHeader] = header.inputs ?? []
    if (!span || !pjson || !manifest || !descriptionsHeader) return undefined
    const part = (at: Span) => readSpan(fd as number, body, at)
    if (!part(pjson).equals(readFileSync(join(root, 'package.json')))) return undefined
    if (!part(manifest).equals(readFileSync(join(root, 'oclif.manifest.json')))) return undefined
    const now = descriptionLine(readFileSync(join(root, DESCRIPTIONS_FILE)), id)
    const [line, entry] = JSON.parse(part(span).toString('utf8')) as [string | null, unknown]
    if (!part(descriptionsHeader).equals(now.header) || (now.line?.toString('utf8') ?? null) !== line) return undefined
    const shared = header.shared ? (JSON.parse(part(header.shared).toString('utf8')) as unknown) : undefined
    return { entry, shared }
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
      return { header: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Header, body: read + end + 1 }
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
