/**
 * The closed catalogue of error codes. Every exit code and every `retryable` in the framework comes from here;
 * nothing else decides them. Tools may extend it (see {@link defineErrorCodes}) but never change a core row.
 */

/** One row of the catalogue. */
export type CatalogueEntry = {
  /** Process exit code. */
  readonly exit: number
  /** Whether an agent may retry the same call after backing off. */
  readonly retryable: boolean
  /** What the code means, for `reference` and docs/errors.md. */
  readonly description: string
}

/** The core codes. Spec 002 §6 fixes the exit column; `E_INTEGRITY`..`E_INTERRUPTED` follow the same table's rules. */
export const CORE_ERRORS = {
  E_USAGE: {
    exit: 2,
    retryable: false,
    description: 'The call is malformed: unknown command or flag, missing or extra argument. Fix the invocation.',
  },
  E_VALIDATION: {
    exit: 2,
    retryable: false,
    description:
      'A value is not allowed: bad enum value, bad number, unknown field. `allowed` and `got` say what fits.',
  },
  E_NOT_FOUND: { exit: 3, retryable: false, description: 'The resource does not exist.' },
  E_AUTH: {
    exit: 4,
    retryable: false,
    description: 'Not authenticated, or the credentials expired and cannot be refreshed. Log in again.',
  },
  E_FORBIDDEN: { exit: 4, retryable: false, description: 'Authenticated but not allowed to do this.' },
  E_CONFIG: {
    exit: 4,
    retryable: false,
    description: 'Configuration is missing or unsafe; `details.fix` says how to repair it.',
  },
  E_CONFIRMATION_REQUIRED: {
    exit: 5,
    retryable: false,
    description: 'A write needs a confirm token: run the same command with --dry-run, then --confirm <token>.',
  },
  E_CONFLICT: {
    exit: 6,
    retryable: false,
    description:
      'A precondition failed or a confirm token is no longer valid; `details.reason` says which. Re-read state, then retry.',
  },
  E_NETWORK: {
    exit: 7,
    retryable: true,
    description:
      'The network failed (DNS, refused, reset). Back off and retry; when `details.reason` is `name_resolution`, fix connectivity or the host (`details.host`, `details.hint`) first.',
  },
  E_RATE_LIMITED: {
    exit: 7,
    retryable: true,
    description: 'The upstream is rate limiting; `details.retry_after_seconds` when known.',
  },
  E_SERVER: { exit: 7, retryable: true, description: 'The upstream failed (5xx). Back off and retry.' },
  E_TIMEOUT: { exit: 8, retryable: true, description: 'The call timed out. Back off and retry.' },
  E_HUMAN_REQUIRED: {
    exit: 9,
    retryable: false,
    description: 'A person must act (`details.action`); then run `details.resume`. Never retry on your own.',
  },
  E_INTEGRITY: {
    exit: 1,
    retryable: false,
    description: 'An integrity check failed (checksum, signature, identity). Nothing was changed.',
  },
  E_IO: {
    exit: 1,
    retryable: false,
    description: 'A local file could not be read or written, or is corrupt; `details.path` names it.',
  },
  E_INTERNAL: {
    exit: 1,
    retryable: false,
    description: 'A bug in the tool. Report it; the message names what failed.',
  },
  E_INTERRUPTED: {
    exit: 130,
    retryable: true,
    description: 'Stopped by SIGINT/SIGTERM before finishing; nothing past the last commit point happened.',
  },
} as const satisfies Record<string, CatalogueEntry>

/** A core error code. */
export type CoreErrorCode = keyof typeof CORE_ERRORS

/** Any error code: a core one, or a tool extension (which must also start with `E_`). */
export type ErrorCode = CoreErrorCode | `E_${string}`

/** The codes a call through `this.upstream()` can raise: list them in `errorCodes` of commands that use it. */
export const UPSTREAM_ERRORS = [
  'E_VALIDATION',
  'E_AUTH',
  'E_FORBIDDEN',
  'E_NOT_FOUND',
  'E_CONFLICT',
  'E_NETWORK',
  'E_RATE_LIMITED',
  'E_SERVER',
  'E_TIMEOUT',
] as const

/** Exit codes and what an agent should do on each (spec 002 §6). */
export const EXIT_CODES = {
  0: 'Success. Continue.',
  1: 'General error (integrity, I/O, internal). Read the error envelope.',
  2: 'Usage or validation error. Do not retry; fix the call.',
  3: 'Not found. Do not retry.',
  4: 'Authentication, permission or configuration failure. Do not retry; fix credentials or config.',
  5: 'Confirmation required. Run --dry-run, then --confirm <token>.',
  6: 'Conflict or invalid confirm token. Re-read state, then retry.',
  7: 'Transient failure (network, rate limit, server). Back off and retry.',
  8: 'Timeout. Back off and retry.',
  9: 'A person must act. Relay the message, wait, then run details.resume.',
  130: 'Interrupted by a signal. Safe to retry.',
} as const

/** Exit codes an extension code may use: not success, not usage (2 is reserved to the parser), not 9 or 130. */
const EXTENSION_EXITS = new Set([1, 3, 4, 5, 6, 7, 8])
const RETRYABLE_EXITS = new Set([7, 8, 130])
const CODE_SHAPE = /^E_[A-Z][A-Z0-9_]*$/

/** Thrown when a tool declares an extension the catalogue cannot accept: a tool author's bug, caught at start-up. */
export class CatalogueDefinitionError extends Error {
  override name = 'CatalogueDefinitionError'
}

/** A catalogue: the core table plus a tool's validated extensions. */
export type Catalogue = {
  /** Every code, core and declared, with its exit code, `retryable` and description. */
  readonly entries: Readonly<Record<string, CatalogueEntry>>
  /** The codes the tool declared itself (package.json `agentcli.errors`). */
  readonly extensions: readonly string[]
  /** The entry of a code, or undefined when the code is neither core nor declared. */
  lookup(code: string): CatalogueEntry | undefined
}

/**
 * Validate a tool's extension codes and merge them with the core table.
 * An extension may not shadow a core code, take exit 0, 2, 9 or 130, or claim a `retryable` that its exit class
 * contradicts (exit 7/8 are the retryable classes), so agents can keep trusting the exit code alone.
 */
export function defineErrorCodes(extensions: Record<string, Partial<CatalogueEntry>> = {}): Catalogue {
  const entries: Record<string, CatalogueEntry> = { ...CORE_ERRORS }
  for (const [code, raw] of Object.entries(extensions)) {
    if (!CODE_SHAPE.test(code)) throw new CatalogueDefinitionError(`error code ${code} must match E_[A-Z0-9_]+`)
    if (code in CORE_ERRORS)
      throw new CatalogueDefinitionError(`error code ${code} is a core code and cannot be redefined`)
    const exit = raw.exit
    if (typeof exit !== 'number' || !EXTENSION_EXITS.has(exit)) {
      throw new CatalogueDefinitionError(
        `error code ${code}: exit must be one of ${[...EXTENSION_EXITS].join(', ')} (got ${String(exit)})`,
      )
    }
    const retryable = RETRYABLE_EXITS.has(exit)
    if (raw.retryable !== undefined && raw.retryable !== retryable) {
      throw new CatalogueDefinitionError(
        `error code ${code}: exit ${exit} means retryable=${retryable}, but it declares ${raw.retryable}`,
      )
    }
    entries[code] = { exit, retryable, description: raw.description ?? '' }
  }
  return {
    entries,
    extensions: Object.keys(extensions).sort(),
    lookup: (code) => (Object.hasOwn(entries, code) ? entries[code] : undefined),
  }
}

/** The catalogue with no extensions. */
export const CORE_CATALOGUE: Catalogue = defineErrorCodes()
