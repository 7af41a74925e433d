/** File helpers for tools built on agentcli: atomic JSON, cross-process locks. */
export { readJsonFile, type WriteOptions, writeJsonAtomic } from './json-file.js'
export { type LockOptions, withFileLock } from './lock.js'
