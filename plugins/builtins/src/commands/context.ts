import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentCommand, AgentError, output } from 'agentcli'
import { envPrefix } from 'agentcli/internal'
import { contextSchema } from '../schemas.js'

export default class Context extends AgentCommand {
  static override summary = 'Where and as whom this tool runs: version, profile, paths, config, credentials'
  static override description =
    'Reports the running environment without touching the network. Credentials appear only as booleans and redacted summaries; update notices come from the local cache.'
  static override examples = ['<%= config.bin %> context']
  static override errorCodes = ['E_IO'] as const
  static override output = output(contextSchema)

  async execute() {
    const credentials = await (await this.credentialStore()).status()
    return {
      tool: this.config.bin,
      version: this.config.version,
      environment: process.env[`${envPrefix(this.config.bin)}PROFILE`] ?? 'default',
      account: credentials.account,
      paths: { config_dir: this.config.configDir, data_dir: this.config.dataDir, cache_dir: this.config.cacheDir },
      config: await readConfig(join(this.config.configDir, 'config.json')),
      credentials: credentials.status,
      node_version: process.version,
      platform: `${process.platform}-${process.arch}`,
    }
  }
}

async function readConfig(path: string): Promise<Record<string, unknown>> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return {}
  }
  try {
    const value = JSON.parse(text) as unknown
    if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {}
  throw new AgentError('E_IO', `${path} is not a JSON object`, { details: { path, fix: `fix or remove ${path}` } })
}
