import {
  AgentError,
  Flags,
  output,
  type Plan,
  UPSTREAM_ERRORS,
  usageError,
  WriteCommand,
  type ZodNamespace,
} from '../../index.js'
import {
  applyRollback,
  applyUpdate,
  checkUpdate,
  planRollback,
  planUpdate,
  type RollbackPlanState,
  type UpdatePlanState,
} from '../../update/index.js'
import { readLastCheck } from '../../update/notice-cache.js'

type State = UpdatePlanState | RollbackPlanState

/**
 * An `update --check` that cannot reach the release source (offline, a timeout) still says what was last known:
 * `details.last_known` is the cached `{latest, checked_at}` marked `stale: true`, or null when nothing is cached.
 */
function withLastKnown(error: unknown, cacheDir: string): unknown {
  if (!(error instanceof AgentError) || (error.code !== 'E_NETWORK' && error.code !== 'E_TIMEOUT')) return error
  const last = readLastCheck(cacheDir)
  error.details.last_known = last ? { ...last, stale: true } : null
  return error
}

const checkSchema = (z: ZodNamespace) =>
  z.object({
    current_version: z.string(),
    target_version: z.string().nullable(),
    update_available: z.boolean(),
    install_method: z.enum(['standalone', 'npm', 'unknown']),
    channel: z.string(),
    source: z.string(),
    release_url: z.string().nullable(),
    changes: z.object({ package: z.boolean(), skills: z.boolean() }),
    checksums_available: z.boolean(),
    signature_available: z.boolean(),
    recommended_command: z.string().nullable(),
  })

const resultSchema = (z: ZodNamespace) =>
  z.object({
    previous_version: z.string(),
    current_version: z.string(),
    install_method: z.enum(['standalone', 'npm', 'unknown']),
    signature_status: z.enum(['verified', 'verified_provenance', 'not_checked']),
    signature_verified: z.boolean(),
    checksum_verified: z.boolean(),
    skill_sync_status: z.enum(['synced', 'not_applicable', 'failed']),
    hint: z.string(),
  })

/** The built-in `update`: Update this tool: check, preview, then install a verified release. */
export default class Update extends WriteCommand<State> {
  static override summary = 'Update this tool: check, preview, then install a verified release'
  static override description =
    '--check is read-only. --dry-run previews every stage and returns a confirm token bound to the target version and asset digests; --confirm downloads, verifies the Sigstore signature of checksums.txt and the tarball checksum, installs next to the current version, smoke-runs it, switches atomically, and syncs the skill; an npm install is updated only after the provenance attestation of the target version in the registry verifies; one update runs at a time per install. --rollback switches back to the kept previous version.'
  static override examples = [
    '<%= config.bin %> update --check',
    '<%= config.bin %> update --dry-run',
    '<%= config.bin %> update --confirm <confirm_token>',
    '<%= config.bin %> update --rollback --dry-run',
  ]
  static override flags = {
    check: Flags.boolean({
      description: 'Only check for a newer release (read-only; refreshes the notice cache).',
      exclusive: ['rollback', 'dry-run', 'confirm'],
    }),
    to: Flags.string({
      description: 'Install this version (needed for a downgrade).',
      helpValue: 'x.y.z',
      exclusive: ['rollback'],
    }),
    rollback: Flags.boolean({ description: 'Switch back to the previous version kept by the last update.' }),
  }
  static override errorCodes = [...UPSTREAM_ERRORS, 'E_INTEGRITY', 'E_CONFIG', 'E_IO'] as const
  static override output = output((z) => z.union([checkSchema(z), resultSchema(z)]))

  override async execute(): Promise<unknown> {
    const { flags } = await this.parse(Update)
    if (flags.check) {
      if (flags.to && !/^v?\d+\.\d+\.\d+/.test(flags.to))
        throw usageError('--to must be a version such as 1.2.3', { got: flags.to })
      try {
        return (await checkUpdate(this.config, { to: flags.to, signal: this.signal })).result
      } catch (error) {
        throw withLastKnown(error, this.config.cacheDir)
      }
    }
    return super.execute()
  }

  async plan(): Promise<Plan<State>> {
    const { flags } = await this.parse(Update)
    if (flags.rollback) {
      const state = await planRollback(this.config)
      return {
        changes: [
          {
            action: 'switch',
            resource: 'installation',
            id: 'current',
            before: { version: state.from },
            after: { version: state.to },
          },
        ],
        targets: [{ id: 'installed', version: state.from }],
        state,
      }
    }
    const state = await planUpdate(this.config, { to: flags.to, signal: this.signal })
    const step = (action: string, after: unknown) => ({
      action,
      resource: 'installation',
      id: null,
      before: null,
      after,
    })
    const changes =
      state.install.method === 'npm'
        ? [step('npm_install', { package: state.to, signature: 'npm_provenance' })]
        : [
            step('download', {
              asset: state.tarball?.name,
              checksums: state.checksums?.name,
              signature: state.bundle ? `${state.checksums?.name}.sigstore.json` : null,
            }),
            step('verify_signature', { identity_tag: state.tag }),
            step('verify_checksum', { sha256: state.tarball?.sha256 }),
            step('install', { version: state.to }),
            step('smoke_test', { command: `${this.config.bin} --version`, expect: state.to }),
            {
              action: 'switch',
              resource: 'installation',
              id: 'current',
              before: { version: state.from },
              after: { version: state.to },
            },
            step('skill_sync', { skill: this.config.bin }),
            step('cleanup', { keep: [state.from, state.to] }),
          ]
    return {
      changes,
      targets: [
        { id: 'installed', version: state.from },
        { id: `release:${state.to}`, version: state.checksums?.sha256 ?? state.to },
        ...(state.tarball ? [{ id: state.tarball.name, version: state.tarball.sha256 }] : []),
      ],
      state,
    }
  }

  async apply(plan: Plan<State>) {
    const state = plan.state
    if (!state) throw new AgentError('E_INTERNAL', 'update plan without state')
    if (state.kind === 'rollback') return applyRollback(this.config, state, this.signal)
    return applyUpdate(this.config, state, this.signal, (options) => this.progress(options))
  }
}
