import { bakedCompact, storedCompact } from '../../describe/baked-compact.js'
import { storedCommandReference } from '../../describe/command-reference-memo.js'
import { AgentCommand, Args, Flags, output } from '../../index.js'
import { invocation, shellQuote } from '../../runtime/invocation.js'
import { oclifConfig } from '../../runtime/tool-config.js'
import { referenceSchema } from '../schemas.js'

/** The built-in `reference`: Describe this tool for agents: commands, flags, output schemas, error codes. */
export default class Reference extends AgentCommand {
  static override summary = 'Describe this tool for agents: commands, flags, output schemas, error codes'
  static override description =
    'The machine-readable description of the tool; agents read it first. Commands sorted by path, hidden ones left out. `reference <command path…>`: only those commands, compact, without the tool-wide sections SKILL.md carries; `--full` adds them, commands in full. `--compact`: the whole, lossless, in fewer bytes (docs/contract.md); `expandReference()` of agentcli restores both.'
  static override examples = [
    '<%= config.bin %> reference --compact',
    '<%= config.bin %> reference list',
    '<%= config.bin %> reference --fields commands.path,commands.type',
  ]
  static override strict = false
  static override args = {
    path: Args.string({ description: 'Command paths to describe (all when none); words of one path may be separate.' }),
  }
  static override flags = {
    full: Flags.boolean({
      description: 'With command paths: those commands in full, with global flags, error and exit codes, readiness.',
    }),
  }
  static override output = output(referenceSchema)

  async execute() {
    const { argv, flags } = await this.parse(Reference)
    const paths = argv as string[]
    // The whole, compact, as the build stored it for these very inputs: nothing to build, no oclif Config to load.
    const stored = paths.length === 0 && this.globals.compact ? storedCompact(this.config.root) : undefined
    if (stored) return stored
    // Loaded past the stored form: building and compacting a reference is what it spares.
    // The defining modules, not the barrel: a dynamic import keeps every export of what it names in the bundle.
    const { commandReference, compactReference } = await import('../../describe/compact.js')
    const one = paths.length > 0 && !flags.full
    // One command, as the build stored its part of the reference: no oclif Config, whatever the tool's size.
    const reference = (one ? storedCommandReference(this.config.root, paths) : undefined) ?? (await this.build(paths))
    if (one) {
      const full = [invocation(this.config.bin), 'reference', ...paths.map(shellQuote), '--full'].join(' ')
      return commandReference(reference, full)
    }
    if (!this.globals.compact) return reference
    // What the build compacted for this very bundle, when the reference is the same: compacting is most of the run.
    return bakedCompact(this.config.root, reference) ?? compactReference(reference)
  }

  /** The reference of the tool, or of the commands `paths` name, built from oclif's `Config`. */
  private async build(paths: readonly string[]) {
    const { buildReference } = await import('../../describe/reference.js')
    return buildReference(await oclifConfig(this.config), this.catalogue, { paths })
  }
}
