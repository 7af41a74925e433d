/** agentcli/update: self-update that an agent can trust (spec 002 §14). */
export {
  applyRollback,
  applyUpdate,
  type CheckResult,
  checkUpdate,
  planRollback,
  planUpdate,
  type RollbackPlanState,
  releaseSource,
  type UpdatePlanState,
  type UpdateResult,
  type UpdateSettings,
  updateSettings,
} from './engine.js'
export { type IntegrityReason, integrityError, type UpdateStage } from './errors.js'
export { cleanup, detectInstall, extractRelease, type InstallMethod, switchVersion } from './install.js'
export { expectedIdentity, publicGoodTrustedRoot, type SigningIdentity, verifyBundle } from './signature.js'
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
