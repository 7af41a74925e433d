/** The fs barrel (internal; authors import these from `agentcli`): atomic JSON, cross-process locks. */
export { type ReadOptions, readJsonFile, type WriteOptions, writeJsonAtomic } from './json-file.js'
export { type LockOptions, withFileLock } from './lock.js'
