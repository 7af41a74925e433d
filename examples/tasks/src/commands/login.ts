import { AgentCommand, output } from 'agentcli'
import { fileSecretStore } from 'agentcli/credentials'
import { localAuthority } from '../auth/device.js'
import { currentAccount } from '../auth/session.js'

export default class Login extends AgentCommand {
  static override summary = 'Log in with a device code (a person approves it)'
  static override description =
    'Already logged in: reports the account. Otherwise starts a device-code login and stops with E_HUMAN_REQUIRED (exit 9): a person opens details.url and enters details.user_code, then the agent runs details.resume.'
  static override examples = ['<%= config.bin %> login', '<%= config.bin %> login resume --id <checkpoint_id>']
  static override errorCodes = ['E_HUMAN_REQUIRED', 'E_IO'] as const
  static override output = output((z) => z.object({ account: z.string(), logged_in: z.literal(true) }))

  async execute() {
    const account = await currentAccount(this.config)
    if (account && (await fileSecretStore(this.config.configDir).get(account)))
      return { account, logged_in: true as const }
    const grant = await localAuthority(this.config.dataDir).start()
    return this.requireHuman({
      action: 'open_url',
      message: `Open ${grant.verification_url} and enter the code ${grant.user_code} to log in to ${this.config.bin}`,
      resume: (id) => `${this.config.bin} login resume --id ${id}`,
      state: { device_code: grant.device_code, user_code: grant.user_code, url: grant.verification_url },
      details: { url: grant.verification_url, user_code: grant.user_code },
      ttlSeconds: grant.expires_in,
    })
  }
}
