import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { withInstallLock } from './_install-lock.js'
import type { UpdateResult } from './engine.js'
import { assertInstalled, clearLeftovers, detectInstall, previousVersionDir, switchVersion } from './install.js'
import { updateSettings } from './settings.js'
import { syncSkill } from './skills.js'
import { updateTimeouts } from './timeouts.js'

/** What a rollback would switch to. */
export type RollbackPlanState = {
  kind: 'rollback'
  root: string
  from: string
  to: string
  target: string
  /** The version directory `current` pointed at when planned; the rollback refuses if it moved since. */
  from_dir?: string
}

/** Plan a rollback to the kept previous version. */
export async function planRollback(config: ToolConfig): Promise<RollbackPlanState> {
  const settings = updateSettings(config)
  const install = await detectInstall(config.root, settings.package, {
    npmPrefixTimeoutMs: updateTimeouts(config).npm_prefix_ms,
  })
  if (install.method !== 'standalone')
    throw new AgentError('E_CONFIG', `rollback needs a standalone install (this one is ${install.method})`, {
      details: { install_method: install.method },
    })
  await assertInstalled(install.root, install.version_dir, config.version, 'discover')
  const target = await previousVersionDir(install.root)
  if (!target)
    throw new AgentError('E_NOT_FOUND', 'no previous version is kept', { details: { reason: 'no_previous_version' } })
  const version = (JSON.parse(await readFile(join(target, 'package.json'), 'utf8')) as { version: string }).version
  return {
    kind: 'rollback',
    root: install.root,
    from: config.version,
    to: version,
    target,
    from_dir: install.version_dir,
  }
}

/**
 * Switch back to the previous version (the same atomic switch), and sync its skill: under the install's update
 * lock, and only if the install is still the one the plan was made for.
 */
export async function applyRollback(
  config: ToolConfig,
  plan: RollbackPlanState,
  signal: AbortSignal = new AbortController().signal,
): Promise<UpdateResult> {
  const settings = updateSettings(config)
  await withInstallLock(plan.root, { waitMs: updateTimeouts(config).lock_wait_ms, signal }, async () => {
    if (plan.from_dir) await assertInstalled(plan.root, plan.from_dir, plan.from)
    await clearLeftovers(plan.root)
    await switchVersion(plan.root, plan.target)
  })
  let skill: UpdateResult['skill_sync_status'] = 'not_applicable'
  try {
    skill = (await syncSkill({ versionDir: plan.target, name: config.bin, repository: settings.repository })).status
  } catch {
    skill = 'failed'
  }
  return {
    previous_version: plan.from,
    current_version: plan.to,
    install_method: 'standalone',
    signature_status: 'not_checked',
    signature_verified: false,
    checksum_verified: false,
    skill_sync_status: skill,
    hint: `run "${config.bin} changelog" to see what this version has`,
  }
}
