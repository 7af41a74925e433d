/** The update barrel (internal: not an entry point of the package): self-update that an agent can trust (spec 002 §14). */
export { type ArchiveFiles, extractRelease, type VerifiedArchive, verifyInstalled } from './archive.js'
export { type CheckResult, checkUpdate } from './check.js'
export { applyUpdate, planUpdate, type UpdatePlanState, type UpdateResult } from './engine.js'
export { type IntegrityReason, integrityError, type UpdateStage } from './errors.js'
export {
  assertInstalled,
  cleanup,
  clearLeftovers,
  detectInstall,
  type InstallMethod,
  stagingDir,
  switchVersion,
} from './install.js'
export { DEFAULT_UPDATE_LIMITS, type UpdateLimits, updateLimits } from './limits.js'
export {
  DEFAULT_NPM_REGISTRY,
  downloadVerifiedTarball,
  npmPurl,
  SLSA_PROVENANCE_V1,
  type VerifiedPackage,
  verifyNpmProvenance,
} from './provenance.js'
export { publicGoodTrustedRoot } from './public-good.js'
export {
  CHECK_FAILURE_FILE,
  checkedSource,
  clearCheckFailure,
  RECENT_CHECK_MS,
  RECENT_FAILURE_MS,
  type RecentCheck,
  recentCheck,
  recordCheckFailure,
} from './recent-check.js'
export { applyRollback, planRollback, type RollbackPlanState } from './rollback.js'
export { PUBLIC_GOOD_TUF_MIRROR, releaseSource, type UpdateSettings, updateSettings } from './settings.js'
export { expectedIdentity, releaseIdentity, type SigningIdentity, verifyBundle } from './signature.js'
export { type SkillSync, syncSkill } from './skills.js'
export { smokeTest } from './smoke.js'
export {
  type Asset,
  directorySource,
  githubSource,
  mirrorSource,
  pickRelease,
  type Release,
  type ReleaseSource,
} from './source.js'
export { DEFAULT_UPDATE_TIMEOUTS, type UpdateTimeouts, updateTimeouts } from './timeouts.js'
export {
  type LoadedTrustRoot,
  loadTrustedRoot,
  type TrustRootOptions,
  type TrustRootSource,
} from './trust-root.js'
export { type TrustRootReport, trustRootReport } from './trust-root-status.js'
