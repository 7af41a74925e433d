import type { ChildProcess } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { envelopeViolations, type Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { env, fixture, ROOT, storePath, tasks, useSandbox } from '../../support/helpers.js'
import { tasksInProcess } from '../../support/in-process.js'

const box = useSandbox()
const INTERRUPTED_EXIT = CORE_ERRORS.E_INTERRUPTED.exit

/** The text of a store of `n` tasks, made once for the tests that seed it. */
const storeTexts = new Map<number, string>()

/**
 * A store big enough that `export` streams for about a second unloaded (its writes wait on this reader): a signal sent
 * after its first 64 KiB lands mid-stream.
 */
function seedMany(b: Sandbox, n: number): void {
  let text = storeTexts.get(n)
  if (text === undefined) {
    const at = '2026-01-02T03:04:05.000Z'
    const list = Array.from({ length: n }, (_, i) => ({
      id: String(i + 1),
      title: `task number ${i + 1} with a title long enough to make the stream take its time`,
      status: 'open',
      created_at: at,
      updated_at: at,
      version: 1,
    }))
    text = JSON.stringify({ schema: 1, next_id: n + 1, tasks: list })
    storeTexts.set(n, text)
  }
  mkdirSync(dirname(storePath(b)), { recursive: true })
  writeFileSync(storePath(b), text)
}

/** Send `signal` once `bytes` of stdout arrived; records when it was sent. */
function afterOutput(bytes: number, signal: NodeJS.Signals, sent: { at?: number }) {
  return (child: ChildProcess) => {
    let seen = 0
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.length
      if (seen >= bytes && sent.at === undefined) {
        sent.at = performance.now()
        child.kill(signal)
      }
    })
  }
}

const lines = (stdout: string) =>
  stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { ok: boolean; type: string; error?: { code: string; details: object } })

describe('a signal during a long NDJSON stream', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)(
    '%s stops `export` promptly: exit from the catalogue, the last line an E_INTERRUPTED error',
    async (signal) => {
      const total = 100_000
      seedMany(box(), total)
      const sent: { at?: number } = {}
      const run = await tasks(box(), ['export'], { onSpawn: afterOutput(64 * 1024, signal, sent), timeoutMs: 60_000 })
      const closedAt = performance.now()
      expect(sent.at, 'the signal was sent mid-stream').toBeDefined()
      expect(run.code).toBe(INTERRUPTED_EXIT)
      expect(INTERRUPTED_EXIT).toBe(130)
      const out = lines(run.stdout)
      const last = out.at(-1)!
      expect(last).toMatchObject({ ok: false, type: 'error', error: { code: 'E_INTERRUPTED', retryable: true } })
      expect(last.error!.details).toEqual({ signal })
      expect(out.filter((l) => l.type === 'summary')).toEqual([])
      expect(out.slice(0, -1).every((l) => l.type === 'item')).toBe(true)
      expect(out.length - 1).toBeLessThan(total)
      // Promptly: well inside the 2 s grace period the entry would otherwise wait.
      expect(closedAt - sent.at!).toBeLessThan(1500)
    },
    60_000,
  )

  it.each([
    ['json', ['item', 'item', 'item', 'error']],
    ['raw', ['line 0', 'line 1', 'line 2']],
    ['text', ['I', '0', '1', '2']],
  ] as const)(
    '%s: a producer stuck in an await, deaf to the abort, does not hold the output past a signal',
    async (format, expected) => {
      const sent: { at?: number } = {}
      const run = await fixture(box(), ['stall', '--n', '3', '--format', format], {
        env: { FIXTURE_GRACE_MS: '10000' },
        onSpawn: (child) => {
          let seen = ''
          child.stderr?.on('data', (chunk: Buffer) => {
            seen += chunk.toString()
            if (seen.includes('ready') && sent.at === undefined) {
              sent.at = performance.now()
              child.kill('SIGINT')
            }
          })
        },
      })
      expect(run.code).toBe(INTERRUPTED_EXIT)
      expect(performance.now() - sent.at!).toBeLessThan(1500)
      if (format !== 'json') {
        expect(run.stdout.trimEnd().split('\n')).toEqual(expected)
        expect(run.stderr).toContain('error E_INTERRUPTED')
        return
      }
      const out = lines(run.stdout)
      expect(out.map((l) => l.type)).toEqual(expected)
      expect(out[3]!.error!.code).toBe('E_INTERRUPTED')
    },
  )

  it('raw output cut short by a signal exits from the catalogue and says so on stderr', async () => {
    seedMany(box(), 100_000)
    const sent: { at?: number } = {}
    const run = await tasks(box(), ['export', '--format', 'raw'], {
      onSpawn: afterOutput(64 * 1024, 'SIGINT', sent),
      timeoutMs: 60_000,
    })
    expect(sent.at).toBeDefined()
    expect(run.code).toBe(INTERRUPTED_EXIT)
    expect(run.stderr).toContain('error E_INTERRUPTED')
    expect(run.stdout.startsWith('id,title,status')).toBe(true)
  }, 60_000)

  it('a second signal answers at once, with one envelope, when the command ignores the first', async () => {
    let first: number | undefined
    const run = await fixture(box(), ['hang'], {
      env: { FIXTURE_IGNORE_ABORT: '1', FIXTURE_GRACE_MS: '20000' },
      onSpawn: (child) => {
        let seen = ''
        child.stderr?.on('data', (chunk: Buffer) => {
          seen += chunk.toString()
          if (seen.includes('ready') && first === undefined) {
            first = performance.now()
            child.kill('SIGINT')
            setTimeout(() => child.kill('SIGINT'), 200)
          }
        })
      },
    })
    expect(run.code).toBe(INTERRUPTED_EXIT)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error.code).toBe('E_INTERRUPTED')
    expect(performance.now() - first!).toBeLessThan(3000)
  })
})

/** How long one undisturbed run takes, spawn to exit (the slowest of three, so a busy machine widens it). */
async function runSpan(args: string[], extra: Record<string, string> = {}): Promise<number> {
  let span = 0
  for (let i = 0; i < 3; i++) {
    const started = performance.now()
    await tasks(box(), args, { env: extra })
    span = Math.max(span, performance.now() - started)
  }
  return span
}

describe('a signal during start-up', () => {
  // Both signals meet the same handler at every point of a start (the boot's hold, then the session's), so the two
  // tests split one grid of 40 moments over a run: SIGINT at the even ones, SIGTERM at the odd ones. Each signal
  // still lands from the spawn to the exit, 1/20 of a run apart, and together they cover every 1/40.
  let listSpan: Promise<number> | undefined
  it.each([
    ['SIGINT', 0],
    ['SIGTERM', 1],
  ] as const)(
    '%s at any moment after spawn: one envelope, or death by it where no JavaScript listens (before the first, after the envelope)',
    async (signal, offset) => {
      const outcomes: Record<string, number> = {}
      // Spread the signals over one whole run, however slow the machine is today (measured once for both).
      listSpan ??= runSpan(['list'])
      const span = await listSpan
      for (let round = offset; round < 40; round += 2) {
        const delay = Math.round((round * span) / 40)
        const run = await tasks(box(), ['list'], {
          onSpawn: (child) => {
            setTimeout(() => child.kill(signal), delay)
          },
        })
        if (run.signal !== null) {
          // The default disposition kills the process where no JavaScript handler listens: in Node's own bootstrap
          // (≈ 15-25 ms here, the same for an empty script), before anything reached stdout, and in Node's own
          // teardown (src/runtime/exit.ts), once the run's one envelope is whole and its exit code set.
          expect(run.signal).toBe(signal)
          if (run.stdout === '') outcomes.killed_before_js = (outcomes.killed_before_js ?? 0) + 1
          else {
            expect(envelopeViolations(run.stdout, 0), `delay ${delay} ms: ${run.stdout}`).toEqual([])
            expect(env(run).ok, run.stdout).toBe(true)
            outcomes.killed_in_teardown = (outcomes.killed_in_teardown ?? 0) + 1
          }
          continue
        }
        expect(envelopeViolations(run.stdout, run.code), `delay ${delay} ms: ${run.stdout}`).toEqual([])
        const envelope = env(run)
        if (envelope.ok) {
          expect(run.code).toBe(0)
          outcomes.finished = (outcomes.finished ?? 0) + 1
        } else {
          expect(envelope.error.code, `delay ${delay} ms: ${run.stdout} ${run.stderr}`).toBe('E_INTERRUPTED')
          expect(run.code).toBe(INTERRUPTED_EXIT)
          outcomes.interrupted = (outcomes.interrupted ?? 0) + 1
        }
      }
      // And the start-up window the fix is about, hit for certain: the signal sent as the boot starts holding it.
      const held = await tasks(box(), ['list'], {
        env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/fixtures/signal-at-hold.mjs')}`, SIGNAL_AT_HOLD: signal },
      })
      expect(held.signal, JSON.stringify(outcomes)).toBeNull()
      expect(envelopeViolations(held.stdout, held.code)).toEqual([])
      expect([held.code, env(held).error.code]).toEqual([INTERRUPTED_EXIT, 'E_INTERRUPTED'])
    },
    120_000,
  )

  it('a signal held during start-up is answered before the command runs: a write changes nothing', async () => {
    // Sent at the moment the boot starts holding signals (a preload), so it certainly arrives during start-up.
    const b = box()
    const token = env(await tasksInProcess(b, ['create', '--title', 'held', '--dry-run'])).data.confirm_token
    const held = await tasks(b, ['create', '--title', 'held', '--confirm', token], {
      env: { NODE_OPTIONS: `--import=${join(ROOT, 'test/fixtures/signal-at-hold.mjs')}` },
    })
    expect(held.signal).toBeNull()
    expect(envelopeViolations(held.stdout, held.code)).toEqual([])
    expect([held.code, env(held).error.code]).toEqual([130, 'E_INTERRUPTED'])
    expect(env(await tasksInProcess(b, ['list'])).data.items).toEqual([])
    // The token was not spent: the same confirm, without the signal, makes the change once.
    const retry = await tasksInProcess(b, ['create', '--title', 'held', '--confirm', token])
    expect(env(retry).ok, retry.stdout).toBe(true)
  }, 60_000)

  it('a signal at any point of a confirm: the write ran to completion, or nothing changed and the token stays usable', async () => {
    const span = await runSpan(['create', '--title', 'calibration', '--dry-run'], {})
    for (let round = 0; round < 16; round++) {
      const b = box()
      // Only the signalled confirm needs a process: its token is minted, and the outcome read, in-process.
      const token = env(await tasksInProcess(b, ['create', '--title', `t${round}`, '--dry-run'])).data.confirm_token
      const run = await tasks(b, ['create', '--title', `t${round}`, '--confirm', token], {
        onSpawn: (child) => {
          setTimeout(() => child.kill('SIGINT'), Math.round((span * (round + 2)) / 20))
        },
      })
      if (run.signal !== null) continue
      expect(envelopeViolations(run.stdout, run.code)).toEqual([])
      if (env(run).ok) continue
      expect(env(run).error.code).toBe('E_INTERRUPTED')
      const items = env(await tasksInProcess(b, ['list', '--limit', '100'])).data.items
      expect(items.map((t: { title: string }) => t.title)).not.toContain(`t${round}`)
      const retry = await tasksInProcess(b, ['create', '--title', `t${round}`, '--confirm', token])
      expect(env(retry).ok, retry.stdout).toBe(true)
    }
  }, 180_000)
})
