import { AgentCommand, output } from '../../index.js'
import { runChecks } from '../checks.js'
import { doctorSchema } from '../schemas.js'

/** The built-in `doctor`: Check the install and say how to fix what is wrong. */
export default class Doctor extends AgentCommand {
  static override summary = 'Check the install and say how to fix what is wrong'
  static override description =
    'A health report, not an error: a degraded install still answers ok:true with failing checks listed, each with a fix. Never fails because the network is absent. For a self-updating tool, trusted_root reports the Sigstore trusted root the next update verifies against: its source, age and expiry.'
  static override examples = ['<%= config.bin %> doctor', '<%= config.bin %> doctor --format text']
  static override output = output(doctorSchema)

  async execute() {
    const { checks, trusted_root } = await runChecks(this.config, await this.credentialStore())
    const count = (status: string) => checks.filter((c) => c.status === status).length
    return { checks, summary: { pass: count('pass'), warn: count('warn'), fail: count('fail') }, trusted_root }
  }
}
