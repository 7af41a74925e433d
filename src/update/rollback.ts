import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { Config } from '@oclif/core'
import { AgentError } from '../errors/agent-error.js'
import type { UpdateResult } from './engine.js'
import { detectInstall, previousVersionDir, switchVersion } from './install.js'
import { updateSettings } from './settings.js'
import { syncSkill } from './skills.js'

/** What a rollback would switch to. */
export type RollbackPlanState = { kind: 'rollback'; root: string; from: string; to: string; target: string }

/** Plan a rollback to the kept previous version. */
export async function planRollback(config: Config): Promise<RollbackPlanState> {
  const settings = updateSettings(config)
  const install = await detectInstall(config.root, settings.package)
  if (install.method !== 'standalone')
    throw new AgentError('E_CONFIG', `rollback needs a standalone install (this one is ${install.method})`, {
      details: { install_method: install.method },
    })
  const target = await previousVersionDir(install.root)
  if (!target)
    throw new AgentError('E_NOT_FOUND', 'no previous version is kept', { details: { reason: 'no_previous_version' } })
  const version = (JSON.parse(await readFile(join(target, 'package.json'), 'utf8')) as { version: string }).version
  return { kind: 'rollback', root: install.root, from: config.version, to: version, target }
}

/** Switch back to the previous version (the same atomic switch), and sync its skill. */
export async function applyRollback(config: Config, plan: RollbackPlanState): Promise<UpdateResult> {
  const settings = updateSettings(config)
  await switchVersion(plan.root, plan.target)
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
