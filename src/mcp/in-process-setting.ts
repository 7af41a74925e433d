import type { CommandDescription } from '../describe/command.js'
import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'

/** Whether `tool mcp` runs plain reads in its own process unless the tool's author says otherwise (docs/mcp.md). */
export const DEFAULT_IN_PROCESS_READS = true

/** Whether the tool's author lets `tool mcp` run reads in its process (`"agentcli": {"mcp": {"in_process_reads": b}}`), checked. */
export function inProcessReadsOf(config: ToolConfig): boolean {
  const mcp = readToolSettings(config).mcp as { in_process_reads?: unknown } | undefined
  const got = mcp?.in_process_reads
  if (got === undefined) return DEFAULT_IN_PROCESS_READS
  if (typeof got === 'boolean') return got
  throw new AgentError('E_CONFIG', 'agentcli.mcp.in_process_reads in package.json must be true or false', {
    details: { setting: 'agentcli.mcp.in_process_reads', allowed: [true, false], got },
  })
}

/**
 * Whether a command may run in the server's process: a plain read, answering one envelope. A stream (its items
 * are cut by stopping a process), an async command (a job's worker is a process), a raw one and `mcp` itself
 * (it serves a protocol on stdio) always run as a process, as does every `local` or `write` command (audited,
 * prompting, holding state): their isolation is a process of their own.
 */
export function runsInProcess(desc: Pick<CommandDescription, 'type' | 'stream' | 'async' | 'raw'>): boolean {
  return desc.type === 'read' && !desc.stream && !desc.async && !desc.raw
}
