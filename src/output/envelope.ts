import type { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import { dataEmoji, plainMembers, plainText } from './decoration.js'

/** A notice carried in `meta.notices` (e.g. an update is available). */
export type Notice = {
  /** What kind of notice (`update_available`, `deprecated`, …); the other keys depend on it. */
  type: string
  [key: string]: unknown
}

/** `meta`: `duration_ms` always; the rest only when it says something. */
export type Meta = {
  /** How long the call took, in milliseconds. */
  duration_ms: number
  /** Things worth knowing that are not the data (an update, a deprecation). */
  notices?: Notice[]
  /** True when the data leaves items out (a page of a longer list). */
  truncated?: boolean
  /** How to get what was left out (the flags of the next page). */
  truncation_hint?: string
  /** True when an idempotent write returned the result recorded for its key instead of writing again. */
  replayed?: boolean
  /** The async job a `--wait` call submitted and waited for. */
  job_id?: string
  [key: string]: unknown
}

/** The `error` member of a failure envelope. */
export type ErrorBody = {
  /** The stable `E_*` code to branch on (docs/errors.md). */
  code: string
  /** What went wrong, for people; never branch on it. */
  message: string
  /** Machine-readable particulars (`allowed`, `got`, `fix`, `resume`, …). */
  details: Record<string, unknown>
  /** Whether the same call may succeed later (from the catalogue: true exactly for exits 7 and 8). */
  retryable: boolean
}

/** Success envelope (spec 002 §3). Key order is part of the contract: ok, schema_version, data, meta. */
export type SuccessEnvelope<D = unknown> = {
  /** Always true here. */
  ok: true
  /** The version of the command's output schema. */
  schema_version: string
  /** What the command returned. */
  data: D
  /** About the call, not the data. */
  meta: Meta
}

/** Failure envelope, same shape with `error` in place of `data`. */
export type ErrorEnvelope = {
  /** Always false here. */
  ok: false
  /** The version of the command's output schema. */
  schema_version: string
  /** What failed. */
  error: ErrorBody
  /** About the call. */
  meta: Meta
}

/** Either envelope. */
export type Envelope<D = unknown> = SuccessEnvelope<D> | ErrorEnvelope

/** The prose members of a notice and of an error's details (machine output carries no decoration). */
const NOTICE_PROSE = ['message', 'hint', 'fix'] as const
const DETAILS_PROSE = ['hint', 'fix'] as const

/** Build `meta` with `duration_ms` first, empty extras left out, notices' prose plain. */
export function buildMeta(durationMs: number, extras: Partial<Meta> = {}): Meta {
  const meta: Meta = { duration_ms: Math.max(0, Math.round(durationMs)) }
  for (const [key, value] of Object.entries(extras)) {
    if (key === 'duration_ms' || value === undefined) continue
    if (key === 'notices' && Array.isArray(value)) {
      if (value.length === 0) continue
      // A notice is prose the framework emits around the data: plain, like an error's message.
      meta.notices = (value as Notice[]).map((n) => plainMembers(n, NOTICE_PROSE))
      continue
    }
    meta[key] = value
  }
  return meta
}

/** A success envelope with keys in contract order. */
export function successEnvelope<D>(data: D, schemaVersion: string, meta: Meta): SuccessEnvelope<D> {
  return { ok: true, schema_version: schemaVersion, data, meta }
}

/**
 * The error body of an {@link AgentError}. Exit code and `retryable` are looked up here, from the catalogue, and
 * nowhere else; a code the catalogue does not know is a tool bug and is reported as `E_INTERNAL`. The message,
 * `details.hint` and `details.fix` carry no decoration (ANSI, control characters, emoji): every error any format
 * renders passes here.
 */
export function errorBody(error: AgentError, catalogue: Catalogue): { body: ErrorBody; exit: number } {
  const entry = catalogue.lookup(error.code)
  if (!entry) {
    const internal = catalogue.lookup('E_INTERNAL')!
    return {
      body: {
        code: 'E_INTERNAL',
        message: plainText(
          `undeclared error code ${error.code}: ${error.message}`,
          dataEmoji(error.details, DETAILS_PROSE),
        ),
        details: { undeclared_code: error.code },
        retryable: internal.retryable,
      },
      exit: internal.exit,
    }
  }
  const details = { ...error.details }
  // The author's prose, without decoration; the rest of the details are data, as given (and their emoji, echoed
  // in the prose, are data too).
  const keep = dataEmoji(details, DETAILS_PROSE)
  return {
    body: {
      code: error.code,
      message: plainText(error.message, keep),
      details: plainMembers(details, DETAILS_PROSE, keep),
      retryable: entry.retryable,
    },
    exit: entry.exit,
  }
}

/** A failure envelope with keys in contract order. */
export function errorEnvelope(body: ErrorBody, schemaVersion: string, meta: Meta): ErrorEnvelope {
  return { ok: false, schema_version: schemaVersion, error: body, meta }
}
