import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { inject } from 'vitest'

const WAIT_MS = 180_000

/**
 * Something costly that test files share read-only (the packed agentcli, a Node 22), made once per test run: the
 * first file that asks runs `make` in a fresh directory of the run's shared one (test/support/pack-dir.global.ts)
 * under a lock, and the others wait for the path it returns. When `make` throws, every file that asks fails with
 * its message (never a skip).
 */
export async function oncePerRun(what: string, make: (stage: string) => string): Promise<string> {
  const dir = join(inject('agentcliPackDir') ?? mkdtempSync(join(tmpdir(), 'agentcli-run-')), what)
  mkdirSync(dir, { recursive: true })
  const done = join(dir, 'done')
  const failed = join(dir, 'failed')
  const end = Date.now() + WAIT_MS
  let mine = false
  try {
    mkdirSync(join(dir, 'lock'))
    mine = true
  } catch {}
  if (mine) {
    let made: string
    try {
      made = make(mkdtempSync(join(dir, 'stage-')))
    } catch (error) {
      writeFileSync(failed, `${what}: ${(error as Error).message}`)
      throw error
    }
    // Written last: a waiter that sees it finds the result complete.
    writeFileSync(done, made)
  }
  for (;;) {
    if (existsSync(done)) return readFileSync(done, 'utf8')
    if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'))
    if (Date.now() > end) throw new Error(`no ${what} in ${dir} after ${WAIT_MS} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
