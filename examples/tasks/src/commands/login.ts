import { AgentCommand, invocation, output, UPSTREAM_ERRORS } from 'agentcli'
import { apiUrl, remoteAuthority } from '../api.js'
import { localAuthority } from '../auth/device.js'
import { storageFlags, storageMode, storageSuffix } from '../auth/flags.js'

export default class Login extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Log in with a device code (a person approves it)'
  static override description =
    'Already logged in: reports the account. Otherwise starts a device-code login and stops with E_HUMAN_REQUIRED (exit 9): relay details.approval (instructions, and the verification_uri and user_code, or the command a person runs) to a person, then run details.resume. The token goes to the OS keychain (a 0600 file only when no keychain is available).'
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
    // How the person approves it, published with the checkpoint: the agent relays it as it is.
    const approve = `${invocation(this.config.bin)} login approve ${grant.user_code}`
    return this.requireHuman({
      action: api ? 'open_url' : 'approve',
      message: api
        ? `Open ${grant.verification_url} and enter the code ${grant.user_code} to log in to ${this.config.bin}`
        : `A person approves this login by running: ${approve}`,
      resume: (id) => `${this.config.bin} login resume --id ${id}${storage}`,
      state: {
        device_code: grant.device_code,
        user_code: grant.user_code,
        url: grant.verification_url,
        remote: Boolean(api),
      },
      approval: api
        ? {
            instructions: `Open ${grant.verification_url} in a browser, enter the code ${grant.user_code} and approve the login to ${this.config.bin}; then tell the agent it is done.`,
            verification_uri: grant.verification_url,
            user_code: grant.user_code,
          }
        : {
            instructions: `No approval page here (the example's local stand-in): on this machine, run \`${approve}\` (add --account <name> to choose the account); then tell the agent it is done.`,
            user_code: grant.user_code,
            command: approve,
          },
      details: { url: grant.verification_url, user_code: grant.user_code },
      ttlSeconds: grant.expires_in,
    })
  }
}
