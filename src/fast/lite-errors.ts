import { notProvided } from './fallback.js'

/*
 * oclif's `Errors` for the fast path (and for the oclif modules the fast bundle keeps: its parser and flag
 * builders). The same classes and fields as oclif's own (`oclif.exit`, `code`, `suggestions`), without the
 * rendering oclif never does for an agentcli tool (the session renders every error).
 */

type ErrorOptions = { exit?: number | false; code?: string; suggestions?: string[]; ref?: string; message?: string }

/** oclif's `addOclifExitCode`: the exit code oclif would use (2 unless given). */
export function addOclifExitCode<E extends Error>(error: E, options?: { exit?: number | false }): E {
  const target = error as E & { oclif?: { exit?: number | false } }
  if (!('oclif' in target)) target.oclif = {}
  target.oclif!.exit = options?.exit === undefined ? 2 : options.exit
  return error
}

/** oclif's `CLIError`. */
export class CLIError extends Error {
  code: string | undefined
  oclif: { exit?: number | false } = {}
  skipOclifErrorHandling: boolean | undefined
  suggestions: string[] | undefined

  constructor(error: string | Error, options: ErrorOptions = {}) {
    super(error instanceof Error ? error.message : error)
    addOclifExitCode(this, options)
    this.code = options.code
    this.suggestions = options.suggestions
  }

  /** Never called for an agentcli tool: the session renders errors. */
  render(): string {
    return notProvided('CLIError.render')
  }
}

/** oclif's `ExitError`: what `this.exit(code)` throws. */
export class ExitError extends CLIError {
  override code = 'EEXIT'

  constructor(exitCode = 1) {
    super(`EEXIT: ${exitCode}`, { exit: exitCode })
  }
}

/** oclif's `ModuleLoadError`. */
export class ModuleLoadError extends CLIError {
  override code = 'MODULE_NOT_FOUND'
}

/** oclif's `error()`: throw, as a `CLIError` (printing with `exit: false` is oclif's rendering: not provided). */
export function error(input: string | Error, options: ErrorOptions = {}): never {
  if (options.exit === false) return notProvided('error() with exit: false')
  let err: Error
  if (typeof input === 'string') err = new CLIError(input, options)
  else if (input instanceof Error) err = addOclifExitCode(input, options)
  else throw new TypeError('first argument must be a string or instance of Error')
  const pretty = err as Error & { code?: string; ref?: string; suggestions?: string[] }
  if (options.code) pretty.code = options.code
  if (options.ref) pretty.ref = options.ref
  if (options.suggestions) pretty.suggestions = options.suggestions
  throw err
}

/** oclif's `exit()`. */
export function exit(code = 0): never {
  throw new ExitError(code)
}

/** oclif's `warn()` prints through its own renderer: not provided. */
export function warn(_input: string | Error): void {
  notProvided('Errors.warn')
}

/** oclif's `handle()`: not provided (the session handles every error). */
export function handle(_error: unknown): never {
  return notProvided('Errors.handle')
}
