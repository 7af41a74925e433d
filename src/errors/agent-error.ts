import type { ErrorCode } from './catalogue.js'

/** Structured context of an error; always an object in the envelope. */
export type ErrorDetails = Record<string, unknown>

/** Options of {@link AgentError}. */
export type AgentErrorOptions = {
  /** Structured, redacted context. Enum and range rejections carry `allowed` and `got`. */
  details?: ErrorDetails
  /** One line that tells the caller what to do next; rendered into `details.hint`. */
  hint?: string
  /** The underlying error, kept for DEBUG output and never rendered to stdout. */
  cause?: unknown
}

/**
 * The one error type of the framework. Exit code and `retryable` are not stored here: they come from the catalogue
 * at render time, so a code can never disagree with its exit.
 */
export class AgentError extends Error {
  /** Always `AgentError`, as stack traces and `util.inspect` show it. */
  override name = 'AgentError'
  /** The stable code agents branch on. */
  readonly code: ErrorCode
  /** Structured context (never contains secrets: the renderer redacts it). */
  readonly details: ErrorDetails

  constructor(code: ErrorCode, message: string, options: AgentErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.code = code
    this.details = { ...options.details }
    if (options.hint) this.details.hint = options.hint
  }
}

/** True when `value` is an {@link AgentError}, also across duplicate copies of this module. */
export function isAgentError(value: unknown): value is AgentError {
  return (
    value instanceof AgentError ||
    (value instanceof Error && value.name === 'AgentError' && typeof (value as { code?: unknown }).code === 'string')
  )
}

/** A user's-fault error: the call is malformed (exit 2). */
export function usageError(message: string, details: ErrorDetails = {}): AgentError {
  return new AgentError('E_USAGE', message, { details })
}

/** A value outside what is allowed (exit 2), with `allowed` and `got` so the caller can self-correct. */
export function validationError(
  message: string,
  allowed: unknown,
  got: unknown,
  details: ErrorDetails = {},
): AgentError {
  return new AgentError('E_VALIDATION', message, { details: { ...details, allowed, got } })
}
