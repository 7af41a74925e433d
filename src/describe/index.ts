/** The describe barrel (internal: not an entry point of the package): self-description (reference, changelog, SKILL.md, release readiness). */
export {
  CHANGE_TYPES,
  type ChangelogEntry,
  changesSince,
  META_FILE,
  parseChangelog,
  readToolMeta,
  type ToolMeta,
} from './changelog.js'
export { type CommandDescription, describeCommand, toJsonSchema, UNIVERSAL_ERRORS, WRITE_ERRORS } from './command.js'
export { commandReference, compactReference } from './compact.js'
export type { CommandReference, CompactReference } from './compact-reference.js'
export { CONTRACT_VERSION } from './contract-version.js'
export { expandReference, isCompactReference } from './expand.js'
export { buildOverview, type Overview } from './overview.js'
export { describeParam, type Param } from './params.js'
export { type ReleaseReadiness, readinessFixes, releaseReadiness } from './readiness.js'
export { buildReference, CONTRACT_SCHEMA_VERSION, describeCommands, type Reference } from './reference.js'
export { selectCommands } from './select.js'
export { renderSkill, skillMinVersions, skillName } from './skill.js'
export { readSkillMemo, SKILL_MEMO_FILE, writeSkillMemo } from './skill-memo.js'
