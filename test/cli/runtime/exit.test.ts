import { spawn } from 'node:child_process'
import { describe, expect, it } from 'vitest'
import { FIXTURE_BIN, useSandbox } from '../../support/helpers.js'

/*
 * The end of a process (src/runtime/exit.ts). With `process.exit`, Node stops its platform's threads before V8's
 * heap, and a background job waiting for a garbage collection then never ends: the process prints its envelope
 * and hangs for ever, deaf to SIGTERM. V8's own stress flag keeps a background thread allocating, and a small heap
 * makes it ask for collections, which makes that hang happen in most runs of a command that allocates up to its
 * end (6 to 8 runs of `churn` in 10 here before the fix); ended by its event loop, the process stops the heap
 * first.
 */
const box = useSandbox()

type Ended = { code: number | null; signal: NodeJS.Signals | null; stdout: string }

/** Run the fixture's `churn` under V8's stress flags; a run still alive after `ms` is killed (and fails the test). */
function churn(env: Record<string, string>, ms: number): Promise<Ended> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--stress-concurrent-allocation', '--max-old-space-size=64', FIXTURE_BIN, 'churn', '--ms', '800'],
      { env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...env }, stdio: ['ignore', 'pipe', 'ignore'] },
    )
    const out: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), ms)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout: Buffer.concat(out).toString('utf8') })
    })
  })
}

describe('a process ends once its envelope is out, whatever V8’s background threads are doing', () => {
  it('four runs that keep the collector busy up to their exit all exit, with their code', async () => {
    const env = box().env as Record<string, string>
    const runs = await Promise.all([1, 2, 3, 4].map(() => churn(env, 20_000)))
    for (const run of runs) {
      expect(run.signal).toBeNull()
      expect(run.code).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ ok: true, data: { objects: expect.any(Number) } })
    }
  }, 60_000)
})
