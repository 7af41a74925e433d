import { AgentCommand, AgentError, Flags, humanError, invocation, output, UPSTREAM_ERRORS } from 'agentcli'
import { remoteAuthority, requireApiUrl } from '../../api.js'
import { localAuthority } from '../../auth/device.js'
import { storageFlags, storageMode, storageSuffix } from '../../auth/flags.js'

type State = { device_code: string; user_code: string; url: string; remote: boolean }

export default class LoginResume extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Finish a login after the person approved it'
  static override description =
    'Continues from the checkpoint that `login` returned. Not approved yet: E_HUMAN_REQUIRED again, same resume. Unknown checkpoint: E_NOT_FOUND; expired: E_CONFLICT; denied: E_AUTH.'
  static override examples = ['<%= config.bin %> login resume --id <checkpoint_id>']
  static override flags = {
    id: Flags.string({ required: true, description: 'The checkpoint_id from the E_HUMAN_REQUIRED details.' }),
    ...storageFlags,
  }
  static override errorCodes = [...UPSTREAM_ERRORS, 'E_HUMAN_REQUIRED', 'E_CONFIG', 'E_IO'] as const
  static override openWorld = true
  static override output = output((z) =>
    z.object({ account: z.string(), logged_in: z.literal(true), source: z.enum(['env', 'keychain', 'file']) }),
  )

  async execute() {
    const { flags } = await this.parse(LoginResume)
    const checkpoint = await this.resumeCheckpoint<State>(flags.id, 'login')
    const authority = checkpoint.state.remote
      ? remoteAuthority(await this.upstream({ baseUrl: await requireApiUrl(this.config) }))
      : localAuthority(this.config.dataDir)
    const result = await authority.poll(checkpoint.state.device_code)
    if (result.state === 'pending') {
      const resume = `${this.config.bin} login resume --id ${flags.id}${storageSuffix(flags)}`
      throw humanError(
        checkpoint,
        // The same way to approve as login published: the remote page and code, or the local command.
        checkpoint.state.remote
          ? `Not approved yet: open ${checkpoint.state.url} and enter the code ${checkpoint.state.user_code}`
          : `Not approved yet: a person approves this login by running: ${invocation(this.config.bin)} login approve ${checkpoint.state.user_code}`,
        resume,
        {
          url: checkpoint.state.url,
          user_code: checkpoint.state.user_code,
        },
      )
    }
    if (result.state === 'denied') {
      await this.completeCheckpoint(flags.id)
      throw new AgentError('E_AUTH', 'the login was denied or expired', {
        details: { reauth: `${this.config.bin} login` },
      })
    }
    const expires = result.expires_in === null ? null : new Date(Date.now() + result.expires_in * 1000).toISOString()
    const source = await (await this.credentialStore(storageMode(flags))).save({
      account: result.account,
      access_token: result.access_token,
      refresh_token: result.refresh_token,
      expires_at: expires,
      scopes: [],
    })
    await this.completeCheckpoint(flags.id)
    return { account: result.account, logged_in: true as const, source }
  }
}
