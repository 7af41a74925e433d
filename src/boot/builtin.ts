/**
 * A built-in module without its ES module facade (see index.ts). On a Node too old to have
 * `process.getBuiltinModule` it is an empty object: there only the engine check runs, and it needs no built-in, so
 * the answer is an envelope rather than a TypeError at import time.
 */
export function builtin<T>(name: string): T {
  const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule
  return (get ? get.call(process, name) : {}) as T
}
