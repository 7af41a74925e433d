/** agentcli/update: self-update that an agent can trust (spec 002 §14). */
export { type CheckResult, checkUpdate } from './check.js'
export { applyUpdate, planUpdate, type UpdatePlanState, type UpdateResult } from './engine.js'
export { type IntegrityReason, integrityError, type UpdateStage } from './errors.js'
export { cleanup, detectInstall, extractRelease, type InstallMethod, switchVersion } from './install.js'
export { publicGoodTrustedRoot } from './public-good.js'
export { applyRollback, planRollback, type RollbackPlanState } from './rollback.js'
export { PUBLIC_GOOD_TUF_MIRROR, releaseSource, type UpdateSettings, updateSettings } from './settings.js'
export { expectedIdentity, releaseIdentity, type SigningIdentity, verifyBundle } from './signature.js'
export { type SkillSync, syncSkill } from './skills.js'
export {
  type Asset,
  directorySource,
  githubSource,
  mirrorSource,
  pickRelease,
  type Release,
  type ReleaseSource,
} from './source.js'
export {
  type LoadedTrustRoot,
  loadTrustedRoot,
  type TrustRootOptions,
  type TrustRootSource,
} from './trust-root.js'
