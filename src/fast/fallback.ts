/**
 * The fast path's way out. A run on the fast path that reaches something the lite oclif does not provide (a
 * config property, a base-class method, a parse that would read stdin) throws this; nothing has been printed
 * yet, so the run starts again on oclif's path in the same process. A command that catches and wraps the error
 * does not hide it: constructing one is remembered for the rest of the run.
 */
export class FastFallback extends Error {
  constructor(readonly what: string) {
    super(`the fast path does not provide ${what}`)
    reached = what
  }
}

let reached: string | undefined

/** Give up on the fast path: `what` is not provided there. */
export function notProvided(what: string): never {
  throw new FastFallback(what)
}

/** What the run reached that the fast path does not provide, if anything (even when the error was swallowed). */
export function fallbackReached(): string | undefined {
  return reached
}
