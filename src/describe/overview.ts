import type { Config } from '@oclif/core'
import { invocation } from '../runtime/invocation.js'
import { CONTRACT_VERSION } from './contract-version.js'
import { describeCommands } from './reference.js'

/** What a bare invocation (`tool`, no arguments) prints off a terminal: enough to find `reference`. */
export type Overview = {
  tool: string
  version: string
  contract_version: number
  description: string
  commands: Array<{ path: string; type: string; summary: string; deprecated?: unknown }>
  hint: string
}

/**
 * The tool in brief, for an agent that started it with no arguments: its commands (path, kind, summary) and the
 * command that describes everything else. Read from the manifest, like `reference`, so nothing is loaded.
 */
export async function buildOverview(config: Config): Promise<Overview> {
  const commands = (await describeCommands(config)).map((c) => ({
    path: c.path,
    type: c.type,
    summary: c.summary,
    ...(c.deprecated ? { deprecated: c.deprecated } : {}),
  }))
  return {
    tool: config.bin,
    version: config.version,
    contract_version: CONTRACT_VERSION,
    description: String(config.pjson.description ?? ''),
    commands,
    hint: `run \`${invocation(config.bin)} reference\` for every command's flags, output schema and error codes (\`reference --compact\`: the same in fewer bytes; \`reference <command>\`: one command)`,
  }
}
