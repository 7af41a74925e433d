// Synchronous: node:fs/promises would load readline's interface and the stream stack (≈ 30 built-in modules).
import { accessSync, constants, readFileSync, statSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
// semver's function, not its index: the index evaluates every module of the package, ranges included (≈ 1 ms).
import semverRcompare from 'semver/functions/rcompare.js'
import type { Credentials } from '../credentials/index.js'
// The describe modules this uses, not their barrel (which evaluates reference, compaction and the changelog too).
import { readinessFixes, releaseReadiness } from '../describe/readiness.js'
import { skillMinVersions, skillName } from '../describe/skill.js'
import { readSkillMemo } from '../describe/skill-memo.js'
import { toolEnv } from '../index.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { oclifConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { runEnv } from '../settings/run-env.js'
import { versionGt, versionLt, versionValid } from '../update/plain-version.js'

/** One doctor check: `fix` is null exactly when the check passes. */
export type Check = { check: string; status: 'pass' | 'warn' | 'fail'; message: string; fix: string | null }

/** Tools add checks through an oclif hook named `agentcli:doctor` that returns `Check[]`. */
export const DOCTOR_HOOK = 'agentcli:doctor'

function readinessCheck(config: ToolConfig): Check {
  const settings = readToolSettings(config)
  const r = releaseReadiness(settings)
  if (r.level === 'stable') return { check: 'release_readiness', status: 'pass', message: 'stable', fix: null }
  // The fix names only the evidence that is missing and applies, so following it moves the tool up a level.
  const fix =
    readinessFixes(settings).join('; ') ||
    'the declared evidence supports a higher level: raise agentcli.release_readiness.level in package.json'
  if (r.level === 'beta') return { check: 'release_readiness', status: 'warn', message: `beta: ${r.reason}`, fix }
  return { check: 'release_readiness', status: 'fail', message: `unpublishable: ${r.reason}`, fix }
}

/** The SKILL.md files an agent may be reading for this tool: the packaged one and installed copies. */
function skillFiles(config: ToolConfig): string[] {
  const name = skillName(config.bin)
  const env = runEnv()
  const home = env.HOME ?? homedir()
  return [
    join(config.root, 'skills', name, 'SKILL.md'),
    join(home, '.agents', 'skills', name, 'SKILL.md'),
    join(env.CLAUDE_CONFIG_DIR ?? join(home, '.claude'), 'skills', name, 'SKILL.md'),
  ]
}

async function minVersionCheck(config: ToolConfig): Promise<Check> {
  const found: Array<{ path: string; min: string }> = []
  const memo = readSkillMemo(config.root)
  for (const path of skillFiles(config)) {
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch {
      continue
    }
    for (const min of await skillMinVersions(text, memo)) found.push({ path, min })
  }
  if (found.length === 0) {
    return {
      check: 'min_version',
      status: 'warn',
      message: 'no SKILL.md declares metadata.requires.min_version',
      fix: `ship skills/${skillName(config.bin)}/SKILL.md with the tool`,
    }
  }
  const unmet = found.filter((f) => !versionValid(f.min) || versionLt(config.version, f.min))
  if (unmet.length === 0)
    return {
      check: 'min_version',
      status: 'pass',
      message: `${config.version} satisfies every installed skill`,
      fix: null,
    }
  const need = unmet.map((u) => u.min).sort(semverRcompare)[0]!
  return {
    check: 'min_version',
    status: 'fail',
    message: `${unmet.map((u) => `${u.path} requires >= ${u.min}`).join('; ')}; running ${config.version}`,
    fix: `upgrade to ${need} or later: \`${config.bin} update --to ${need} --dry-run\`, then --confirm <token>`,
  }
}

function nearestExisting(path: string): string {
  let current = path
  for (;;) {
    try {
      statSync(current)
      return current
    } catch {
      const parent = dirname(current)
      if (parent === current) return current
      current = parent
    }
  }
}

async function configDirCheck(config: ToolConfig): Promise<Check> {
  const dir = config.configDir
  const existing = nearestExisting(dir)
  try {
    const info = statSync(existing)
    if (!info.isDirectory()) throw new Error(`${existing} is not a directory`)
    accessSync(existing, constants.W_OK)
    const message = existing === dir ? `${dir} is writable` : `${dir} can be created under ${existing}`
    return { check: 'config_dir', status: 'pass', message, fix: null }
  } catch (error) {
    return {
      check: 'config_dir',
      status: 'fail',
      message: `${dir} is not writable: ${error instanceof Error ? error.message : String(error)}`,
      fix: `make ${existing} a writable directory, or point ${toolEnv(config.bin).name('CONFIG_DIR')} elsewhere`,
    }
  }
}

function isCheck(value: unknown): value is Check {
  const c = value as Check
  return (
    typeof c === 'object' && c !== null && typeof c.check === 'string' && ['pass', 'warn', 'fail'].includes(c.status)
  )
}

/** Credential health (spec 002 §15.1): warn before expiry, fail when expired for good or unreadable. */
async function credentialsCheck(config: ToolConfig, credentials: Credentials): Promise<Check> {
  const settings = (readToolSettings(config).credentials ?? {}) as {
    required?: boolean
    warn_before_expiry_seconds?: number
  }
  const login = `\`${config.bin} login\``
  let report: Awaited<ReturnType<Credentials['status']>>
  try {
    report = await credentials.status()
  } catch (error) {
    const details = (error as { details?: { fix?: string } }).details
    return {
      check: 'credentials',
      status: 'fail',
      message: (error as Error).message,
      fix: details?.fix ?? `log in again with ${login}`,
    }
  }
  const { status } = report
  if (!status.configured) {
    if (settings.required)
      return { check: 'credentials', status: 'fail', message: 'not logged in', fix: `run ${login}` }
    return { check: 'credentials', status: 'pass', message: 'not logged in (optional for this tool)', fix: null }
  }
  const left =
    status.expires_at === null ? Number.POSITIVE_INFINITY : (Date.parse(status.expires_at) - Date.now()) / 1000
  const window = settings.warn_before_expiry_seconds ?? 3600
  if (left <= 0 && !status.refreshable)
    return { check: 'credentials', status: 'fail', message: `expired at ${status.expires_at}`, fix: `run ${login}` }
  if (left < window && !status.refreshable) {
    return {
      check: 'credentials',
      status: 'warn',
      message: `expires at ${status.expires_at} and cannot be refreshed`,
      fix: `run ${login} before it expires`,
    }
  }
  if (status.source === 'file') {
    return {
      check: 'credentials',
      status: 'warn',
      message: 'stored in a plain 0600 file: no OS keychain was available',
      fix: `start a Secret Service (e.g. gnome-keyring), then run ${login} again`,
    }
  }
  const when =
    status.expires_at === null
      ? 'does not expire'
      : left <= window
        ? `expires at ${status.expires_at} and will be refreshed on use`
        : `valid until ${status.expires_at}`
  return { check: 'credentials', status: 'pass', message: `${report.account} (${status.source}): ${when}`, fix: null }
}

/**
 * Is a newer release out? A short timeout; an absent network never fails doctor (spec 002 §14), but a check
 * that could not run is `warn`, never `pass`: the message says why, the fix what to do. A check of the same source
 * and channel made a few minutes ago (`update --check`'s or an earlier doctor's) is reported instead of asking
 * again, and a network failure of the last minute is reported again. Every message says when the source was
 * checked, so a repeated doctor answers in the same shape whether it asked or remembered.
 */
async function updateCheck(config: ToolConfig): Promise<Check> {
  // The modules it needs, not the update barrel: a recent check is answered without evaluating the update engine.
  const [{ checkedSource, recentCheck }, { updateSettings }] = await Promise.all([
    import('../update/recent-check.js'),
    import('../update/settings.js'),
  ])
  const settings = updateSettings(config)
  if (settings.source === 'github' && !settings.repository)
    return { check: 'update', status: 'pass', message: 'this tool does not self-update', fix: null }
  const where = { source: checkedSource(settings), channel: settings.channel, version: config.version }
  const known = recentCheck(config.cacheDir, where, (latest, current) => versionGt(latest, current))
  if (known?.ok === false)
    return {
      check: 'update',
      status: 'warn',
      message: `could not check for updates at ${known.checked_at}: ${known.message}`,
      fix: known.fix,
    }
  if (known?.ok) {
    const { cache } = known
    const at = `checked ${known.checked_at}`
    if (cache.recommended_command === null)
      return {
        check: 'update',
        status: 'pass',
        message: `${config.version} is the newest on the ${settings.channel} channel (${at})`,
        fix: null,
      }
    return {
      check: 'update',
      status: 'warn',
      message: `${cache.latest_version} is available (running ${config.version}; ${at})`,
      fix: cache.recommended_command,
    }
  }
  return askSource(config, { source: where.source, channel: where.channel })
}

/** The update check over the network; a network failure is remembered for a minute (see {@link updateCheck}). */
async function askSource(config: ToolConfig, where: { source: string; channel: string }): Promise<Check> {
  const [{ checkUpdate }, { clearCheckFailure, recordCheckFailure }] = await Promise.all([
    import('../update/check.js'),
    import('../update/recent-check.js'),
  ])
  const checkedAt = new Date().toISOString()
  try {
    const { result } = await checkUpdate(config, { timeoutMs: 1500 })
    clearCheckFailure(config.cacheDir)
    if (!result.update_available)
      return {
        check: 'update',
        status: 'pass',
        message: `${config.version} is the newest on the ${result.channel} channel (checked ${checkedAt})`,
        fix: null,
      }
    return {
      check: 'update',
      status: 'warn',
      message: `${result.target_version} is available (running ${config.version}; checked ${checkedAt})`,
      fix: result.recommended_command ?? `${config.bin} update --dry-run`,
    }
  } catch (error) {
    const details = (error as { details?: { hint?: unknown; fix?: unknown } }).details
    const told = details?.hint ?? details?.fix
    const reason = (error as Error).message
    const fix = typeof told === 'string' ? told : `check the network, then run \`${config.bin} update --check\``
    if ((error as { code?: unknown }).code === 'E_NETWORK')
      await recordCheckFailure(config.cacheDir, { ...where, checked_at: checkedAt, message: reason, fix })
    return { check: 'update', status: 'warn', message: `could not check for updates at ${checkedAt}: ${reason}`, fix }
  }
}

/** How long before the TUF root in use expires `doctor` starts to warn. */
const TRUST_ROOT_WARN_DAYS = 30

/**
 * The Sigstore trusted root the next update verifies against (spec 002 §14): its age and expiry, read offline.
 * The public-good TUF root expires within months and is refreshed by an update that reaches the mirror; `warn`
 * when it expires within {@link TRUST_ROOT_WARN_DAYS} days or has expired. None for a tool that does not
 * self-update (no report, no check).
 */
async function trustRootHealth(
  config: ToolConfig,
): Promise<{ report: import('../update/index.js').TrustRootReport | null; check: Check | null }> {
  const [{ trustRootReport }, { updateSettings }] = await Promise.all([
    import('../update/trust-root-status.js'),
    import('../update/settings.js'),
  ])
  const settings = updateSettings(config)
  if (settings.source === 'github' && !settings.repository) return { report: null, check: null }
  const check = (status: Check['status'], message: string, fix: string | null = null): Check => ({
    check: 'trusted_root',
    status,
    message,
    fix: status === 'pass' ? null : fix,
  })
  let report: import('../update/index.js').TrustRootReport
  try {
    report = await trustRootReport({
      pinned: settings.trusted_root,
      mirror: settings.tuf_mirror,
      tufRoot: settings.tuf_root,
      cacheDir: config.cacheDir,
    })
  } catch (error) {
    // A tuf_mirror that is not a URL: the update itself answers E_CONFIG for it; doctor says so.
    return {
      report: null,
      check: check(
        'warn',
        `cannot read the trusted root: ${(error as Error).message}`,
        'fix "tuf_mirror" in "agentcli.update" of package.json',
      ),
    }
  }
  if (report.source === 'pinned')
    return {
      report,
      check: check(
        'pass',
        `pinned ${report.path}${report.age_days === null ? ' (unreadable: an update answers E_CONFIG)' : `, written ${report.age_days} days ago`}`,
      ),
    }
  const host = new URL(settings.tuf_mirror).host
  if (report.source === 'tuf_seed')
    return {
      report,
      check: check(
        'pass',
        `not fetched yet: the first update fetches it from ${report.mirror} through TUF${
          report.expires_at
            ? Date.parse(report.expires_at) <= Date.now()
              ? ` (the TUF root shipped with the tool expired ${report.expires_at}: TUF walks from it to the repository's current root)`
              : ` (the TUF root shipped with the tool expires ${report.expires_at})`
            : ''
        }`,
      ),
    }
  const left = Date.parse(report.expires_at!) - Date.now()
  const refresh = `let an update reach ${host} (\`${config.bin} update --dry-run\`, then --confirm): it refreshes the TUF metadata`
  if (left <= 0)
    return {
      report,
      check: check(
        'warn',
        `the cached TUF root (fetched ${report.age_days} days ago) expired at ${report.expires_at}: an update must refresh it from ${host} first`,
        refresh,
      ),
    }
  if (left < TRUST_ROOT_WARN_DAYS * 86_400_000)
    return {
      report,
      check: check(
        'warn',
        `the cached TUF root (fetched ${report.age_days} days ago) expires at ${report.expires_at}`,
        refresh,
      ),
    }
  return {
    report,
    check: check(
      'pass',
      `fetched ${report.age_days} days ago from ${report.mirror}; its TUF root expires ${report.expires_at}, the cached copy verifies offline until ${report.offline_until}`,
    ),
  }
}

/** What `doctor` reports: every check, and the trusted root an update verifies against. */
export type DoctorReport = {
  checks: Check[]
  trusted_root: import('../update/index.js').TrustRootReport | null
}

/** Every check, built-in first, then those tools and plugins contribute through the `agentcli:doctor` hook. */
export async function runChecks(config: ToolConfig, credentials: Credentials): Promise<DoctorReport> {
  // The config dir is looked at before anything may create a directory (the update check writes its notice).
  const configDir = await configDirCheck(config)
  // The one check that waits on the network starts first and is awaited in its place, so its round trip overlaps
  // the local checks; what it throws is thrown there, in the order the checks always ran.
  const update = updateCheck(config)
  // Awaited in its place below; meanwhile its rejection is not an unhandled one.
  update.catch(() => {})
  const trust = await trustRootHealth(config)
  const checks = [
    readinessCheck(config),
    await minVersionCheck(config),
    configDir,
    await credentialsCheck(config, credentials),
    await update,
    ...(trust.check ? [trust.check] : []),
    // Loaded here, not at the top: the check opens the state store only when a state URL is set. Its own module,
    // not the fleet barrel, which evaluates the ledgers, the job store and the job server too.
    await (await import('../fleet/doctor.js')).stateCheck(config),
  ]
  const hooked = await hookResults(config)
  for (const success of hooked.successes) {
    const result = (success as { result?: unknown }).result
    for (const c of Array.isArray(result) ? result : [result]) {
      if (isCheck(c))
        checks.push({
          check: c.check,
          status: c.status,
          message: c.message ?? '',
          fix: c.status === 'pass' ? null : (c.fix ?? 'see message'),
        })
    }
  }
  for (const failure of hooked.failures) {
    checks.push({
      check: `hook:${failure.plugin.name}`,
      status: 'fail',
      message: String((failure.error as Error).message ?? failure.error),
      fix: 'fix the plugin that contributed this check',
    })
  }
  return { checks, trusted_root: trust.report }
}

/**
 * What the tool's and its plugins' `agentcli:doctor` hooks returned. oclif's Config (which runs hooks) is loaded
 * only when the tool declares such a hook or any plugin (which may).
 */
async function hookResults(
  config: ToolConfig,
): Promise<{ successes: unknown[]; failures: Array<{ plugin: { name: string }; error: unknown }> }> {
  const oclif = config.pjson.oclif ?? {}
  const hooks = (oclif.hooks ?? {}) as Record<string, unknown>
  const plugins = (oclif.plugins ?? []) as unknown[]
  if (!hooks[DOCTOR_HOOK] && plugins.length === 0) return { successes: [], failures: [] }
  return (await oclifConfig(config)).runHook(DOCTOR_HOOK as never, {} as never)
}
