import { AgentCommand, output } from '../../index.js'
import { runChecks } from '../checks.js'
import { doctorSchema } from '../schemas.js'

export default class Doctor extends AgentCommand {
  static override summary = 'Check the install and say how to fix what is wrong'
  static override description =
    'A health report, not an error: a degraded install still answers ok:true with failing checks listed, each with a fix. Never fails because the network is absent.'
  static override examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --format text']
  static override output = output(doctorSchema)

  async execute() {
    const checks = await runChecks(this.config, await this.credentialStore())
    const count = (status: string) => checks.filter((c) => c.status === status).length
    return { checks, summary: { pass: count('pass'), warn: count('warn'), fail: count('fail') } }
  }
}
