import { createHash } from 'node:crypto'
import { closeSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomic } from '../fs/atomic-write.js'
import { checkStateDir, openStateFile } from '../fs/state-file.js'

/**
 * Where approvals wait for the `--confirm` they release: signatures filed under their request's id. The store is
 * trusted with nothing: every signature is verified at confirm against the policy's approvers and the change
 * recomputed there, so whoever can write here (the agent too) can at most add signatures that do not count.
 */
export type ApprovalStore = {
  /** File a signature for a request (idempotent: the same signature twice is one). */
  add(requestId: string, signature: string): Promise<void>
  /** Every signature filed for a request. */
  list(requestId: string): Promise<string[]>
}

const REQUEST_ID = /^ar_[0-9a-f]{24}$/

/** The approvals of this machine: `<dataDir>/approvals/<request id>/<digest>.sig`, each a state file. */
export function fileApprovalStore(dataDir: string): ApprovalStore {
  const dirOf = (id: string) => {
    // The id names a directory: only the exact shape is a name (never a path).
    if (!REQUEST_ID.test(id)) throw new Error(`not an approval request id: ${id}`)
    return join(dataDir, 'approvals', id)
  }
  return {
    async add(requestId, signature) {
      const dir = dirOf(requestId)
      for (const d of [join(dataDir, 'approvals'), dir])
        if (!checkStateDir(d)) mkdirSync(d, { mode: 0o700, recursive: true })
      const name = createHash('sha256').update(signature).digest('hex').slice(0, 32)
      await writeFileAtomic(join(dir, `${name}.sig`), signature)
    },
    async list(requestId) {
      const dir = dirOf(requestId)
      if (!checkStateDir(dir)) return []
      const out: string[] = []
      for (const name of readdirSync(dir).sort()) {
        if (!name.endsWith('.sig')) continue
        const fd = openStateFile(join(dir, name), 'read')
        try {
          out.push(readFileSync(fd, 'utf8'))
        } finally {
          closeSync(fd)
        }
      }
      return out
    },
  }
}
