import { AgentCommand, Args, Flags, output } from 'agentcli'
import { localAuthority } from '../../auth/device.js'

export default class LoginApprove extends AgentCommand {
  static override kind = 'local' as const
  static override summary = "Approve a pending device login (the person's side, standing in for a browser page)"
  static override hidden = true
  static override args = { code: Args.string({ required: true, description: 'The user_code shown to the person.' }) }
  static override flags = { account: Flags.string({ default: 'local-user', description: 'The account to log in as.' }) }
  static override output = output((z) => z.object({ approved: z.literal(true) }))

  async execute() {
    const { args, flags } = await this.parse(LoginApprove)
    await localAuthority(this.config.dataDir).approve(args.code, flags.account)
    return { approved: true as const }
  }
}
