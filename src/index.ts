/**
 * agentcli: what a tool author writes commands with (and the types of jobs, credentials and the HTTP client).
 * The other entry points: `agentcli/boot` (a tool's bin), `agentcli/builtins` (the built-in commands) and
 * `agentcli/testing` (command-level tests). Re-exports only.
 */

export * as Args from '@oclif/core/args'
export {
  type Checkpoint,
  completeCheckpoint,
  type HumanAction,
  type HumanApproval,
  type HumanRequest,
  humanError,
} from './checkpoints/checkpoint.js'
export { AgentCommand, type CommandKind, type CommandResult } from './command.js'
export type { IdempotencyLedger } from './confirm/idempotency.js'
export type { TokenLedger } from './confirm/ledger.js'
export { type BatchItem, batchSchema, type Change } from './confirm/preview.js'
export type { SecretSource } from './confirm/secret.js'
export type { CredentialStatus, StorageMode } from './credentials/credentials.js'
export type { CredentialRecord, CredentialSource, SecretStore } from './credentials/types.js'
export type { CompactReference } from './describe/compact.js'
export { expandReference, isCompactReference } from './describe/expand.js'
export type { Reference } from './describe/reference.js'
export {
  AgentError,
  type AgentErrorOptions,
  type ErrorDetails,
  isAgentError,
  usageError,
  validationError,
} from './errors/agent-error.js'
export { beforeChange, noteChange } from './errors/before-change.js'
export {
  type Catalogue,
  type CatalogueEntry,
  type CoreErrorCode,
  defineErrorCodes,
  type ErrorCode,
  UPSTREAM_ERRORS,
} from './errors/catalogue.js'
export { Flags } from './flags.js'
export { type ReadOptions, readJsonFile, type WriteOptions, writeJsonAtomic } from './fs/json-file.js'
export { type LockOptions, withFileLock } from './fs/lock.js'
export type { HttpClient, HttpOptions, HttpResponse, RequestOptions } from './http/client.js'
export type { JobContext, JobPlan, JobRecord, JobStatus, JobStore, SubmittedJob } from './jobs/index.js'
export {
  type Page,
  type Paginated,
  type PaginateOptions,
  type PaginationOptions,
  paginate,
  paginationFlags,
  type SortKey,
} from './list/paginate.js'
export type { UpstreamPageOptions, UpstreamPageRequest, UpstreamPageResult } from './list/upstream-page.js'
export type { Envelope, ErrorBody, ErrorEnvelope, Meta, Notice, SuccessEnvelope } from './output/envelope.js'
export { type ItemsPreview, previewItems } from './output/preview-items.js'
export type { Progress, ProgressOptions } from './output/progress.js'
export { registerSecret } from './output/redact.js'
export type { Question } from './run/prompt.js'
export type { CommandClass } from './runtime/base-command.js'
export { type RunOptions, run } from './runtime/entry.js'
export { invocation, runnable } from './runtime/invocation.js'
export { oclifConfig, type ToolConfig } from './runtime/tool-config.js'
export {
  type DeprecatedField,
  type Deprecation,
  deprecatedField,
  type FieldDeprecationOptions,
} from './schema/deprecation.js'
export { type OutputOf, type OutputSchema, output, type ZodNamespace } from './schema/output.js'
export { readSetting } from './settings/config-file.js'
export {
  type FrameworkSetting,
  type SettingRule,
  type SettingSpec,
  type ToolEnv,
  toolEnv,
} from './settings/tool-env.js'
export type { Format } from './universal-flags/globals.js'
export { BLAST_RADII, type BlastRadius, RISK_ACTIONS, type Risk, type RiskAction } from './write/risk.js'
export { idempotencyFlags, type Plan, WriteCommand, type WriteJobContext } from './write-command.js'
