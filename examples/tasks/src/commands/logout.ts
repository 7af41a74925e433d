import { AgentCommand, output } from 'agentcli'

export default class Logout extends AgentCommand {
  static override kind = 'local' as const
  static override summary = 'Forget the stored credentials of the current account'
  static override description =
    'Removes the token from the keychain and the credentials file. With TASKS_TOKEN set there is nothing stored: E_CONFIG.'
  static override examples = ['<%= config.bin %> logout']
  static override errorCodes = ['E_CONFIG', 'E_IO'] as const
  static override output = output((z) =>
    z.object({ account: z.string().nullable(), logged_out: z.literal(true), removed: z.boolean() }),
  )

  async execute() {
    const { account, removed } = await (await this.credentialStore()).remove()
    return { account, logged_out: true as const, removed }
  }
}
