import { CONTRACT_VERSION } from '../../describe/index.js'
import { AgentCommand, output, toolEnv } from '../../index.js'
import { callerOf } from '../../settings/caller.js'
import { readToolConfig } from '../../settings/config-file.js'
import { readLastCheck } from '../../update/notice-cache.js'
import { contextSchema } from '../schemas.js'

/** The built-in `context`: Where and as whom this tool runs: version, profile, paths, config, credentials. */
export default class Context extends AgentCommand {
  static override summary = 'Where and as whom this tool runs: version, profile, paths, config, credentials'
  static override description =
    'Reports the running environment without touching the network. Credentials appear only as booleans and redacted summaries; update_check ({latest, checked_at}, or null) is what the last `update --check` saw, from the local cache.'
  static override examples = ['<%= config.bin %> context']
  static override errorCodes = ['E_IO'] as const
  static override output = output(contextSchema)

  async execute() {
    const credentials = await (await this.credentialStore()).status()
    // The effective profile: the one the system policy pins, else the variable's (a pin refuses another here too).
    const env = (await callerOf(toolEnv(this.config.bin))).profile
    return {
      tool: this.config.bin,
      version: this.config.version,
      contract_version: CONTRACT_VERSION,
      env,
      // The key before the spec's name was adopted; kept for clients that read it until schema 2.0.
      environment: env,
      account: credentials.account,
      paths: { config_dir: this.config.configDir, data_dir: this.config.dataDir, cache_dir: this.config.cacheDir },
      config: readToolConfig(this.config.configDir),
      credentials: credentials.status,
      node_version: process.version,
      platform: `${process.platform}-${process.arch}`,
      update_check: readLastCheck(this.config.cacheDir),
    }
  }
}
