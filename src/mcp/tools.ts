import type { CommandDescription } from '../describe/command.js'
import type { Param } from '../describe/params.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { integerSetting } from '../settings/package-section.js'
import { UNIVERSAL_FLAGS } from '../universal-flags/table.js'
import { riskText } from '../write/risk.js'
import { type ToolHints, toolAnnotations } from './annotations.js'

/** One MCP tool as `tool mcp` lists it: everything derived from the command's `reference` entry. */
export type ToolDef = {
  name: string
  title: string
  description: string
  inputSchema: Record<string, unknown>
  outputSchema: Record<string, unknown>
  annotations: ToolHints
  /** The command path the tool runs (`job status`). */
  command: string
}

/** A command path as an MCP tool name: spaces become `_` (`job status` → `job_status`). */
export function toolName(path: string): string {
  return path.replaceAll(' ', '_')
}

/** A flag or argument name as an MCP argument name: kebab-case becomes snake_case (`dry-run` → `dry_run`). */
export function argName(name: string): string {
  return name.replaceAll('-', '_')
}

/** The universal flags that make sense over MCP (those `UNIVERSAL_FLAGS` describes for it): the rest are the server's. */
export const MCP_GLOBALS: readonly Param[] = Object.entries(UNIVERSAL_FLAGS).flatMap(([name, flag]) =>
  'mcp' in flag && typeof flag.mcp === 'object'
    ? [
        {
          name,
          kind: 'flag' as const,
          type: 'string' as const,
          required: false,
          multiple: false,
          default: null,
          options: null,
          description: flag.mcp.description,
          env: null,
          char: null,
        },
      ]
    : [],
)

function paramSchema(p: Param): Record<string, unknown> {
  const one: Record<string, unknown> = {}
  if (p.type === 'boolean') one.type = 'boolean'
  else if (p.type === 'integer') one.type = 'integer'
  else one.type = 'string'
  if (p.options) one.enum = [...p.options]
  if (p.minimum !== undefined) one.minimum = p.minimum
  if (p.maximum !== undefined) one.maximum = p.maximum
  const schema: Record<string, unknown> = p.multiple ? { type: 'array', items: one, minItems: 1 } : one
  if (p.description) schema.description = p.description
  if (p.default !== null && p.default !== undefined) schema.default = p.default
  return schema
}

/** The JSON Schema (2020-12, MCP's default dialect) of a command's arguments over MCP: its params and `fields`, names in snake_case. */
export function inputSchemaOf(c: Pick<CommandDescription, 'params' | 'stream'>): Record<string, unknown> {
  const properties: Record<string, unknown> = {}
  const required: string[] = []
  for (const p of [...c.params, ...MCP_GLOBALS]) {
    properties[argName(p.name)] = paramSchema(p)
    if (p.required) required.push(argName(p.name))
  }
  if (c.stream)
    properties.max_items = {
      type: 'integer',
      minimum: 1,
      maximum: MAX_ITEMS_CAP,
      default: DEFAULT_MAX_ITEMS,
      description: 'At most this many items of the stream are returned; meta.truncated says when more were cut.',
    }
  // An empty `required` says nothing a missing one does not: left out, as every byte is listed per tool.
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false }
}

/** How many items of a stream one MCP call returns unless asked otherwise. */
export const DEFAULT_MAX_ITEMS = 100
/** The most items of a stream one MCP call returns. */
export const MAX_ITEMS_CAP = 1000

/**
 * The error envelope's `error`, once per tool under `$defs` (any call may fail). Its `details` stay open: their
 * members are the error code's (`docs/errors.md`), not the tool's.
 */
const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    code: { type: 'string', pattern: '^E_[A-Z0-9_]+$' },
    message: { type: 'string' },
    retryable: { type: 'boolean' },
    details: { type: 'object' },
  },
  required: ['code', 'message', 'retryable', 'details'],
}

const SAFE = Number.MAX_SAFE_INTEGER

/**
 * A schema without what costs bytes in every `tools/list` and tells a client nothing it can use: `$schema` (MCP's
 * default dialect is 2020-12), a `pattern` next to a `format` that names the same rule (zod writes a 300-byte
 * regular expression beside every `date-time`), and integer bounds of ±2^53-1 (what any JSON number already is).
 * With `optional` (a command's `data`), `required` goes too, since `fields` projects `data` to the paths asked for
 * and such a projection must still validate; every member keeps its type, format, enum, description and closed
 * set of names.
 */
export function leanSchema(schema: unknown, optional = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => leanSchema(s, optional))
  if (!schema || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  const record = schema as Record<string, unknown>
  for (const [key, value] of Object.entries(record)) {
    if (key === '$schema') continue
    if (key === 'pattern' && typeof record.format === 'string') continue
    if ((key === 'minimum' && value === -SAFE) || (key === 'maximum' && value === SAFE)) continue
    if (key === 'required' && optional) continue
    // Keywords whose value is data (a const, an enum, a default, an example) are kept as they are; those whose
    // value maps names to schemas have each schema made lean, never a name (a member may be called `required`).
    if (DATA_KEYWORDS.has(key)) out[key] = value
    else if (MAP_KEYWORDS.has(key) && value && typeof value === 'object' && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, leanSchema(sub, optional)]))
    else out[key] = leanSchema(value, optional)
  }
  return out
}

const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples', 'required', 'description', 'title'])
const MAP_KEYWORDS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'])

/**
 * The JSON Schema of a tool's `structuredContent`: the envelope the CLI prints, with the command's own `data`
 * schema (every member optional: a `fields` projection is valid too), or the error envelope (`$defs.error`). A
 * stream's items arrive gathered in `data.items`, with the summary line's data in `data.summary`.
 */
export function outputSchemaOf(c: Pick<CommandDescription, 'output_schema' | 'stream'>): Record<string, unknown> {
  const item = leanSchema(c.output_schema, true)
  const data = c.stream
    ? {
        type: 'object',
        properties: { items: { type: 'array', items: item }, summary: { type: 'object' } },
        required: ['items', 'summary'],
      }
    : item
  // One object with both branches' members, so the frame is written once; `oneOf` says which members go together.
  return {
    type: 'object',
    properties: {
      ok: { type: 'boolean' },
      schema_version: { type: 'string' },
      data,
      error: { $ref: '#/$defs/error' },
      meta: { type: 'object' },
    },
    required: ['ok', 'schema_version', 'meta'],
    // Each branch names the member it requires (`{}`: its schema is the frame's), as strict validators ask.
    oneOf: [
      { properties: { ok: { const: true }, data: {} }, required: ['data'] },
      { properties: { ok: { const: false }, error: {} }, required: ['error'] },
    ],
    $defs: { error: ERROR_SCHEMA },
  }
}

/** Every published command as one MCP tool, in `reference` order (sorted by path, so `tools/list` is stable). */
export function toolDefs(commands: readonly CommandDescription[], skip: readonly string[] = ['mcp']): ToolDef[] {
  return commands
    .filter((c) => !skip.includes(c.path))
    .map((c) => ({
      name: toolName(c.path),
      title: c.summary || c.path,
      // The declared risk in words the model reads when it chooses a tool (the hints say only "destructive").
      description: c.risk ? `${c.description || c.summary}\n\nRisk: ${riskText(c.risk)}.` : c.description || c.summary,
      inputSchema: inputSchemaOf(c),
      outputSchema: outputSchemaOf(c),
      annotations: toolAnnotations(c),
      command: c.path,
    }))
}

/**
 * The most bytes the tool definitions of `tools/list` may take before output schemas leave the listing (issue 25:
 * a client pays for the listing in every conversation's context). An author moves it with
 * `"agentcli": {"mcp": {"max_list_bytes": n}}` in package.json.
 */
export const DEFAULT_MAX_LIST_BYTES = 25_000

/** The `_meta` key on a tool listed without its output schema: names the tool that returns it (`describe_tool`). */
export const OUTPUT_SCHEMA_META = 'agentcli/output_schema'

/** The tool that returns one tool's full definition, listed when output schemas leave the listing. */
export const DESCRIBE_TOOL = 'describe_tool'

/** One tool as `tools/list` carries it: without `outputSchema` (and with the `_meta` pointer) in a compact listing. */
export type ListedTool = Pick<ToolDef, 'name' | 'title' | 'description' | 'inputSchema' | 'annotations'> & {
  outputSchema?: Record<string, unknown>
  _meta?: Record<string, unknown>
}

/** The bytes of a listing's tool definitions as JSON (what a client puts in its context). */
export function listingBytes(tools: readonly ListedTool[]): number {
  return Buffer.byteLength(
    JSON.stringify(
      tools.map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        ...(t.outputSchema ? { outputSchema: t.outputSchema } : {}),
        annotations: t.annotations,
        ...(t._meta ? { _meta: t._meta } : {}),
      })),
    ),
  )
}

/**
 * The tools as listed: every definition in full while the listing fits `maxBytes`; past it, progressive discovery
 * of output schemas: each tool keeps its name, title, description, input schema and annotations (what a client
 * needs to choose and call it) and drops its output schema, pointing at `describe_tool` through `_meta`. A client
 * validates `structuredContent` only against an advertised schema, so what it receives stays valid; the full
 * schema is one `describe_tool` call away (and in `reference`).
 */
export function listedTools(
  defs: readonly ToolDef[],
  maxBytes = DEFAULT_MAX_LIST_BYTES,
): {
  tools: ListedTool[]
  compact: boolean
} {
  const full = defs.map(({ command: _, ...tool }) => tool)
  if (listingBytes(full) <= maxBytes) return { tools: full, compact: false }
  return {
    tools: full.map(({ outputSchema: _, ...tool }) => ({ ...tool, _meta: { [OUTPUT_SCHEMA_META]: DESCRIBE_TOOL } })),
    compact: true,
  }
}

/** The listing budget a tool's author set in package.json (`"agentcli": {"mcp": {"max_list_bytes": n}}`), checked. */
export function maxListBytesOf(config: ToolConfig): number {
  return integerSetting(config, {
    section: 'mcp',
    key: 'max_list_bytes',
    fallback: DEFAULT_MAX_LIST_BYTES,
    min: 0,
    unit: 'bytes',
  })
}
