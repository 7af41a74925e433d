import type { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { buildMeta, errorBody, errorEnvelope } from '../output/envelope.js'

/**
 * A `tools/call` result: the envelope as structured content and, for clients that read only text, the same
 * envelope serialized as the first text block, nothing before or after it (it parses as JSON); `isError` = `!ok`.
 */
export type ToolResult = {
  content: Array<{ type: 'text'; text: string }>
  structuredContent: Record<string, unknown>
  isError: boolean
}

/**
 * Wrap an envelope as a tool result. `hint` (how to go on over MCP, e.g. the `dry_run` argument instead of the
 * CLI's `--dry-run`) is a second text block of its own, so the first stays the envelope alone.
 */
export function toolResult(envelope: Record<string, unknown>, hint?: string): ToolResult {
  const content: ToolResult['content'] = [{ type: 'text', text: JSON.stringify(envelope) }]
  if (hint) content.push({ type: 'text', text: hint })
  return { content, structuredContent: envelope, isError: envelope.ok !== true }
}

/** The envelope of an error the server itself raises (an argument no CLI call can express). */
export function errorEnvelopeOf(error: AgentError, catalogue: Catalogue): Record<string, unknown> {
  return errorEnvelope(errorBody(error, catalogue).body, '1.0', buildMeta(0)) as unknown as Record<string, unknown>
}

/** How to go on over MCP after a refusal whose CLI advice names CLI flags. */
export function mcpHint(envelope: Record<string, unknown>, tool: string): string | undefined {
  const code = (envelope.error as { code?: string } | undefined)?.code
  if (code === 'E_CONFIRMATION_REQUIRED')
    return `Call ${tool} again with the same arguments and dry_run: true to preview the change and get a confirm_token; then call it with confirm: <token>.`
  if (code === 'E_HUMAN_REQUIRED')
    return 'A person must act first (see error.details); then run details.resume (its tool name is the command path with _).'
  return undefined
}
