import { AgentCommand, output, UPSTREAM_ERRORS } from 'agentcli'
import { apiUrl, remoteAuthority } from '../api.js'
import { localAuthority } from '../auth/device.js'
import { storageFlags, storageMode, storageSuffix } from '../auth/flags.js'

export default class Login extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Log in with a device code (a person approves it)'
  static override description =
    'Already logged in: reports the account. Otherwise starts a device-code login and stops with E_HUMAN_REQUIRED (exit 9): a person opens details.url and enters details.user_code, then the agent runs details.resume. The token goes to the OS keychain (a 0600 file only when no keychain is available).'
  static override examples = ['<%= config.bin %> login', '<%= config.bin %> login resume --id <checkpoint_id>']
  static override flags = storageFlags
  static override errorCodes = [...UPSTREAM_ERRORS, 'E_HUMAN_REQUIRED', 'E_CONFIG', 'E_IO'] as const
  static override openWorld = true
  static override output = output((z) =>
    z.object({ account: z.string(), logged_in: z.literal(true), source: z.enum(['env', 'keychain', 'file']) }),
  )

  async execute() {
    const { flags } = await this.parse(Login)
    const found = await (await this.credentialStore(storageMode(flags))).read()
    if (found) return { account: found.record.account, logged_in: true as const, source: found.source }
    const api = await apiUrl(this.config)
    const authority = api ? remoteAuthority(await this.upstream({ baseUrl: api })) : localAuthority(this.config.dataDir)
    const grant = await authority.start()
    const storage = storageSuffix(flags)
    return this.requireHuman({
      action: 'open_url',
      message: `Open ${grant.verification_url} and enter the code ${grant.user_code} to log in to ${this.config.bin}`,
      resume: (id) => `${this.config.bin} login resume --id ${id}${storage}`,
      state: {
        device_code: grant.device_code,
        user_code: grant.user_code,
        url: grant.verification_url,
        remote: Boolean(api),
      },
      details: { url: grant.verification_url, user_code: grant.user_code },
      ttlSeconds: grant.expires_in,
    })
  }
}
