import { mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { runBounded } from './_child.js'
import { withInstallLock } from './_install-lock.js'
import { staged } from './_staged.js'
import { toolTrustedRoot } from './_tool-root.js'
import { clearUpdateNotice } from './notice-cache.js'
import { verifiedNpmTarball } from './npm-install.js'
import type { UpdatePlanState, UpdateResult } from './plan-state.js'
import { updateSettings } from './settings.js'
import { updateTimeouts } from './timeouts.js'

async function npmInstall(config: ToolConfig, plan: UpdatePlanState, signal: AbortSignal): Promise<UpdateResult> {
  const settings = updateSettings(config)
  const timeoutMs = updateTimeouts(config).npm_install_ms
  let verified: Awaited<ReturnType<typeof verifiedNpmTarball>>
  try {
    verified = await verifiedNpmTarball(config, settings, plan.to, await toolTrustedRoot(config, settings), signal)
  } catch (error) {
    throw staged(error, 'verify_signature', plan.from, false, 'not_started')
  }
  const spec = `${settings.package}@${plan.to}`
  const npm = await runBounded('npm', ['install', '-g', verified.path], { timeoutMs, signal })
    .catch((error: unknown) => {
      throw staged(
        isAgentError(error) ? error : new AgentError('E_IO', `cannot run npm: ${(error as Error).message}`),
        'switch',
        plan.from,
        false,
        'not_started',
      )
    })
    .finally(() => verified.cleanup())
  if (npm.timed_out)
    throw staged(
      new AgentError('E_TIMEOUT', `npm install -g ${spec} did not finish within ${timeoutMs} ms; it was stopped`, {
        details: { timeout_ms: timeoutMs, fix: `npm install -g ${spec}` },
      }),
      'switch',
      plan.from,
      false,
      'not_started',
    )
  if (npm.code !== 0)
    throw staged(
      new AgentError('E_IO', `npm install failed: ${npm.stderr.slice(-500)}`),
      'switch',
      plan.from,
      false,
      'not_started',
    )
  clearUpdateNotice(config.cacheDir)
  return {
    previous_version: plan.from,
    current_version: plan.to,
    install_method: 'npm',
    signature_status: 'verified_provenance',
    signature_verified: true,
    checksum_verified: true,
    skill_sync_status: 'not_applicable',
    hint: `run "${config.bin} changelog --since ${plan.from}" to see what changed`,
  }
}

/**
 * Update an npm global install with `npm install -g <package>@<version>` after its provenance attestation in the registry verifies (see `./npm-install.ts`), bounded
 * by `npm_install_ms`, as the only update of this user's tool: a second confirm waits, then refuses
 * (`E_CONFLICT` `install_changed`) if the package already moved on.
 */
export async function applyNpmUpdate(
  config: ToolConfig,
  plan: UpdatePlanState,
  signal: AbortSignal,
): Promise<UpdateResult> {
  // npm replaces the package in place: serialise per user, and refuse if another update already moved it on.
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 })
  const wait = { waitMs: updateTimeouts(config).lock_wait_ms, signal }
  return withInstallLock(config.dataDir, wait, async () => {
    const now = await readFile(join(config.root, 'package.json'), 'utf8')
      .then((t) => (JSON.parse(t) as { version?: string }).version)
      .catch(() => undefined)
    if (now !== plan.from)
      throw staged(
        new AgentError('E_CONFLICT', `the install changed since this update was planned (now ${now ?? 'unknown'})`, {
          details: { reason: 'install_changed', planned_from: plan.from, installed_version: now ?? null },
        }),
        'lock',
        plan.from,
        false,
        'not_started',
      )
    return npmInstall(config, plan, signal)
  }).catch((error: unknown) => {
    throw isAgentError(error) && 'binary_replaced' in error.details
      ? error
      : staged(error, 'lock', plan.from, false, 'not_started')
  })
}
