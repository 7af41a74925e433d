import type { ToolHints } from './annotations.js'
import { DESCRIBE_TOOL, type ToolDef } from './tools.js'

type Call = (name: string, args: Record<string, unknown>, ctx: unknown) => Promise<unknown>
/** A tool the factory registers as it is: its definition and its handler. */
export type Registered = {
  def: {
    name: string
    title: string
    description: string
    inputSchema: Record<string, unknown>
    annotations: ToolHints
  }
  handler: (args: Record<string, unknown>, ctx: unknown) => Promise<unknown>
}

const DRAFT = 'https://json-schema.org/draft/2020-12/schema'
const READ: ToolHints = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false }

function text(value: unknown) {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value, isError: false }
}

/**
 * Progressive discovery for large tools (`tool mcp --discovery`): three tools instead of one per command.
 * `search_tools` finds tools by words of their name, title and description; `describe_tool` returns one tool's
 * full definition (the one the plain listing would show); `call_tool` calls it, through the same path.
 */
export function discoveryTools(defs: readonly ToolDef[], call: Call): Registered[] {
  const search: Registered = {
    def: {
      name: 'search_tools',
      title: 'Find tools by keyword',
      description:
        'Search the tools of this server by words of their name, title and description; returns names and titles.',
      inputSchema: {
        $schema: DRAFT,
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Words to look for; empty lists every tool.' },
          limit: { type: 'integer', minimum: 1, maximum: 100, default: 20 },
        },
        additionalProperties: false,
      },
      annotations: READ,
    },
    handler: async (args) => {
      const words = String(args.query ?? '')
        .toLowerCase()
        .split(/\s+/)
        .filter(Boolean)
      const hits = defs
        .map((d) => ({
          d,
          score: words.filter((w) => `${d.name} ${d.title} ${d.description}`.toLowerCase().includes(w)).length,
        }))
        .filter((h) => words.length === 0 || h.score > 0)
        .sort((a, b) => b.score - a.score || (a.d.name < b.d.name ? -1 : 1))
        .slice(0, Number(args.limit ?? 20))
      return text({ tools: hits.map((h) => ({ name: h.d.name, title: h.d.title, annotations: h.d.annotations })) })
    },
  }
  const describe = describeTool(defs)
  const callTool: Registered = {
    def: {
      name: 'call_tool',
      title: 'Call one tool',
      description: 'Call a tool found with search_tools, with arguments matching its describe_tool input schema.',
      inputSchema: {
        $schema: DRAFT,
        type: 'object',
        properties: { name: { type: 'string' }, arguments: { type: 'object', default: {} } },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    handler: (args, ctx) => call(String(args.name), (args.arguments ?? {}) as Record<string, unknown>, ctx),
  }
  return [search, describe, callTool]
}

/**
 * `describe_tool`: one tool's full definition (the one the plain listing would show: input and output schemas,
 * annotations). Listed with `--discovery`, and beside the command tools when their output schemas leave the
 * listing (`listedTools`), so the schema a tool's `_meta` points at is one call away.
 */
export function describeTool(defs: readonly ToolDef[]): Registered {
  return {
    def: {
      name: DESCRIBE_TOOL,
      title: 'Describe one tool',
      description: 'The full definition of one tool: input and output schemas, annotations.',
      inputSchema: {
        type: 'object',
        properties: { name: { type: 'string', enum: defs.map((d) => d.name) } },
        required: ['name'],
        additionalProperties: false,
      },
      annotations: READ,
    },
    handler: async (args) => {
      const def = defs.find((d) => d.name === args.name)
      if (!def) return { ...text({ error: `Unknown tool: ${String(args.name)}` }), isError: true }
      const { command: _, ...tool } = def
      return text(tool)
    },
  }
}
