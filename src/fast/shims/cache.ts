/**
 * oclif's cache, for the oclif modules the fast bundle keeps: it holds the root plugin's `exitCodes`, which only
 * change the `oclif.exit` of parse errors (never read: the catalogue decides exit codes). Nothing is cached.
 */
const cache = {
  get: (_key: string): undefined => undefined,
  has: (_key: string): boolean => false,
  set: (_key: string, _value: unknown): void => {},
}

/** The one instance, as oclif's `Cache.getInstance()`. */
export default { getInstance: () => cache }
