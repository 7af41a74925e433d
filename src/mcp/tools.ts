import type { CommandDescription } from '../describe/command.js'
import type { Param } from '../describe/params.js'
import { UNIVERSAL_FLAGS } from '../universal-flags/table.js'
import { type ToolHints, toolAnnotations } from './annotations.js'

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'

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

/** The JSON Schema (2020-12) of a command's arguments over MCP: its params and `fields`, names in snake_case. */
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
  return { $schema: DRAFT, type: 'object', properties, required, additionalProperties: false }
}

/** How many items of a stream one MCP call returns unless asked otherwise. */
export const DEFAULT_MAX_ITEMS = 100
/** The most items of a stream one MCP call returns. */
export const MAX_ITEMS_CAP = 1000

const errorEnvelope = {
  type: 'object',
  properties: {
    ok: { const: false },
    schema_version: { type: 'string' },
    error: {
      type: 'object',
      properties: {
        code: { type: 'string', pattern: '^E_[A-Z0-9_]+$' },
        message: { type: 'string' },
        retryable: { type: 'boolean' },
        details: { type: 'object' },
      },
      required: ['code', 'message', 'retryable', 'details'],
    },
    meta: { type: 'object' },
  },
  required: ['ok', 'schema_version', 'error', 'meta'],
}

function strip(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema: _, ...rest } = schema
  return rest
}

/** `fields` cuts data (or each item) down to the paths asked for: such a projection is an object too. */
const PROJECTED = { type: 'object', description: 'Projected to the paths asked for in `fields`.' }

/**
 * The JSON Schema of a tool's `structuredContent`: the envelope the CLI prints, with the command's `data`
 * schema. A stream's items arrive gathered in `data.items`, with the summary line's data in `data.summary`.
 */
export function outputSchemaOf(c: Pick<CommandDescription, 'output_schema' | 'stream'>): Record<string, unknown> {
  const item = { anyOf: [strip(c.output_schema), PROJECTED] }
  const data = c.stream
    ? {
        type: 'object',
        properties: { items: { type: 'array', items: item }, summary: { type: 'object' } },
        required: ['items', 'summary'],
      }
    : item
  const success = {
    type: 'object',
    properties: { ok: { const: true }, schema_version: { type: 'string' }, data, meta: { type: 'object' } },
    required: ['ok', 'schema_version', 'data', 'meta'],
  }
  return { $schema: DRAFT, type: 'object', anyOf: [success, errorEnvelope] }
}

/** Every published command as one MCP tool, in `reference` order (sorted by path, so `tools/list` is stable). */
export function toolDefs(commands: readonly CommandDescription[], skip: readonly string[] = ['mcp']): ToolDef[] {
  return commands
    .filter((c) => !skip.includes(c.path))
    .map((c) => ({
      name: toolName(c.path),
      title: c.summary || c.path,
      description: c.description || c.summary,
      inputSchema: inputSchemaOf(c),
      outputSchema: outputSchemaOf(c),
      annotations: toolAnnotations(c),
      command: c.path,
    }))
}
