import { AgentCommand, type CredentialRecord, output, UPSTREAM_ERRORS } from 'agentcli'
import { apiUrl, refreshWithApi } from '../api.js'

export default class Whoami extends AgentCommand {
  static override summary = 'Show the logged-in account'
  static override description =
    'With a remote API configured, asks it (refreshing an expired token once); otherwise reports the stored login. Not logged in: E_AUTH with details.reauth.'
  static override examples = ['<%= config.bin %> whoami']
  static override errorCodes = [...UPSTREAM_ERRORS, 'E_CONFIG', 'E_IO'] as const
  static override openWorld = true
  static override output = output((z) =>
    z.object({
      account: z.string(),
      source: z.enum(['env', 'keychain', 'file']),
      expires_at: z.iso.datetime().nullable(),
      verified_by_api: z.boolean(),
    }),
  )

  async execute() {
    const record = await this.credential()
    const api = await apiUrl(this.config)
    let account = record.account
    if (api) {
      const { data } = await (await this.upstream({ baseUrl: api, auth: true })).get<{ account: string }>('v1/me')
      account = data.account
    }
    // Read after the call: a 401 may have refreshed the token and moved its expiry.
    const found = await (await this.credentialStore()).read()
    return { account, source: found!.source, expires_at: found!.record.expires_at, verified_by_api: Boolean(api) }
  }

  protected override async refreshCredential(record: CredentialRecord) {
    const api = await apiUrl(this.config)
    if (!api) return super.refreshCredential(record)
    return refreshWithApi(await this.upstream({ baseUrl: api }), record)
  }
}
