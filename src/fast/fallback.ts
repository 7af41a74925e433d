import { AgentError } from '../errors/agent-error.js'

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
let begun: () => boolean = () => false

/**
 * Give up on the fast path: `what` is not provided there. Once a write's token is spent (the change may be under
 * way), a second run on oclif's path would not be the same call: the run fails closed with `E_INTERNAL` instead,
 * the token stays spent, and nothing more is done.
 */
export function notProvided(what: string): never {
  if (begun())
    throw new AgentError('E_INTERNAL', `the fast path does not provide ${what}, reached after the write began`, {
      details: { fix: 'report this to the tool author: the build proved this command simple' },
    })
  throw new FastFallback(what)
}

/** Say when the run is past the point where it can still be handed over (a write's token is spent). */
export function noWayBackWhen(predicate: () => boolean): void {
  begun = predicate
}

/** Whether the run is past the point where it can be handed over (see {@link noWayBackWhen}). */
export function pastNoWayBack(): boolean {
  return begun()
}

/** What the run reached that the fast path does not provide, if anything (even when the error was swallowed). */
export function fallbackReached(): string | undefined {
  return reached
}
