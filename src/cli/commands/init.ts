import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import * as Args from '@oclif/core/args'
import { AgentCommand } from '../../command.js'
import { AgentError } from '../../errors/agent-error.js'
import { Flags } from '../../flags.js'
import { output } from '../../schema/output.js'
import { checkEngine, frameworkSpec } from '../init/framework-spec.js'
import { type FrameworkPackage, TOOL_NAME_RULE, toolNames, toolPackageJson } from '../init/package-json.js'
import { renderSkillFile } from '../init/skill.js'
import { writeStaged } from '../init/stage.js'
import { renderTemplates } from '../init/templates.js'

/** `agentcli init`: Start a new agent-native tool in an empty directory. */
export default class Init extends AgentCommand {
  static override summary = 'Start a new agent-native tool in an empty directory'
  // It writes a repository: local state, no confirm token (the directory must be empty), audited.
  static override kind = 'local' as const
  static override description =
    'Writes a tool repository that is green from its first commit: package.json (explicit commands, the bundle on), bin/run.js, a read command (paginated list), a write command (plan/apply bound to a version), a stream command, command-level tests with the FCC guard, CHANGELOG.md, its generated SKILL.md, a README, and CI and release workflows. Refuses a directory that is not empty. Then: cd <dir> && npm install && npm test.'
  static override examples = [
    '<%= config.bin %> init mytool',
    '<%= config.bin %> init ./tools/weather --name @acme/weather',
    '<%= config.bin %> init mytool --agentcli ../agentcli/agentcli-0.1.0.tgz',
    '<%= config.bin %> init mytool --agentcli ../agentcli',
  ]
  static override args = {
    dir: Args.string({ required: true, description: 'Directory of the new tool (created if missing; must be empty).' }),
  }
  static override flags = {
    name: Flags.string({
      description:
        'npm package name (default: the directory name): lowercase letters, digits and single hyphens, optionally under @scope/; its bin is the unscoped part.',
    }),
    agentcli: Flags.string({
      description:
        'The agentcli dependency (default: ^ this agentcli version): an npm spec, or before it is on the registry the path of a packed tarball (npm pack) or of a built checkout.',
    }),
  }
  static override errorCodes = ['E_CONFIG', 'E_CONFLICT', 'E_IO'] as const
  static override output = output((z) =>
    z.object({
      dir: z.string(),
      name: z.string(),
      bin: z.string(),
      agentcli: z.string(),
      files: z.array(z.string()),
      next: z.array(z.string()),
    }),
  )

  async execute() {
    const { args, flags } = await this.parse(Init)
    const root = this.config.root
    const framework = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as FrameworkPackage
    checkEngine(framework.engines?.node)
    const dir = resolve(args.dir)
    const got = flags.name ?? basename(dir)
    const names = toolNames(got)
    if (!names)
      throw new AgentError(
        'E_VALIDATION',
        `'${got}' cannot name a tool (npm, its skill and its environment prefix must all accept it)`,
        {
          details: {
            param: flags.name === undefined ? 'dir' : '--name',
            got,
            allowed: TOOL_NAME_RULE,
            fix:
              flags.name === undefined
                ? 'pass --name <package-name>, or choose such a directory name'
                : 'choose such a name',
          },
        },
      )
    refuseNonEmpty(dir)
    const local = flags.agentcli === undefined ? { spec: `^${framework.version}` } : frameworkSpec(flags.agentcli, dir)
    const agentcli = local.spec
    const pjson = toolPackageJson(names.name, names.bin, agentcli, framework)
    const files = renderTemplates(join(root, 'templates', 'init'), {
      ...names,
      date: new Date().toISOString().slice(0, 10),
    })
    files.set('package.json', `${JSON.stringify(pjson, null, 2)}\n`)
    if (local.npmrc !== undefined) files.set('.npmrc', local.npmrc)
    try {
      await writeStaged(dir, async (stage) => {
        for (const [path, text] of files) {
          mkdirSync(dirname(join(stage, path)), { recursive: true })
          writeFileSync(join(stage, path), text)
        }
        files.set(await renderSkillFile(files, pjson, root, stage), '')
      })
    } catch (error) {
      // Nothing was left behind (writeStaged): the same call can simply be retried once the cause is fixed.
      throw new AgentError('E_IO', `cannot write the tool into ${dir}: ${(error as Error).message}`, {
        details: {
          path: dir,
          fix: `nothing was written: fix the cause named in the message (a writable ${dirname(dir)}, free space, a usable temp dir), then retry`,
        },
        cause: error,
      })
    }
    return {
      dir,
      name: names.name,
      bin: names.bin,
      agentcli,
      files: [...files.keys()].sort(),
      next: [...(dir === process.cwd() ? [] : [`cd ${args.dir}`]), 'npm install', 'npm test'],
    }
  }
}

function refuseNonEmpty(dir: string): void {
  if (!existsSync(dir)) return
  if (!statSync(dir).isDirectory())
    throw new AgentError('E_CONFLICT', `${dir} exists and is not a directory`, {
      details: { reason: 'not_a_directory', path: dir, fix: 'choose a new or empty directory' },
    })
  const entries = readdirSync(dir)
  if (entries.length > 0)
    throw new AgentError('E_CONFLICT', `${dir} is not empty: init writes a new tool only into an empty directory`, {
      details: {
        reason: 'not_empty',
        path: dir,
        entries: entries.sort().slice(0, 10),
        fix: 'choose a new or empty directory',
      },
    })
}
