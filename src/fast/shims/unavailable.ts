import { notProvided } from '../fallback.js'

/*
 * What the oclif modules the fast bundle keeps import but a fast route never reaches: help rendering, oclif's
 * `ux` and its column lists. Reaching one hands the run to oclif's path.
 */

/** oclif's `ux/list` (the parser's missing-argument message, which agentcli rewrites anyway). */
export default function list(..._args: unknown[]): string {
  return notProvided('ux.list')
}

/** oclif's `loadHelpClass` (the `--help` flag's parse). */
export function loadHelpClass(..._args: unknown[]): never {
  return notProvided('loadHelpClass')
}

/** oclif's `ux`. */
export const ux = new Proxy({} as Record<string, unknown>, {
  get: (_target, key) => (typeof key === 'symbol' ? undefined : notProvided(`ux.${key}`)),
})
