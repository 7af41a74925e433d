import type { ChildProcess } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, seed, storePath, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox()

function whenReady(child: ChildProcess, then: () => void): void {
  let seen = ''
  child.stderr?.on('data', (chunk: Buffer) => {
    seen += chunk.toString()
    if (seen.includes('ready')) {
      seen = ''
      then()
    }
  })
}

describe('signals', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('%s → E_INTERRUPTED, exit 130, retryable', async (signal) => {
    const run = await fixture(box(), ['hang'], { onSpawn: (child) => whenReady(child, () => child.kill(signal)) })
    expect(run.code).toBe(130)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error).toMatchObject({ code: 'E_INTERRUPTED', retryable: true })
  })

  it('a command that ignores the abort is still cut off after the grace period', async () => {
    const run = await fixture(box(), ['hang'], {
      env: { FIXTURE_IGNORE_ABORT: '1', FIXTURE_GRACE_MS: '300' },
      onSpawn: (child) => whenReady(child, () => child.kill('SIGINT')),
    })
    expect(run.code).toBe(130)
    expect(env(run).error.code).toBe('E_INTERRUPTED')
  })
})

describe('closed pipes', () => {
  it('`tasks list | head -c 10` ends quietly, without a stack trace', () => {
    seed(
      box(),
      Array.from({ length: 100 }, (_, i) => ({ id: String(i + 1), title: 'x'.repeat(1000) })),
    )
    const script = `"${process.execPath}" "${TASKS_BIN}" list --limit 100 | head -c 10; echo " status=\${PIPESTATUS[0]}"`
    const result = spawnSync('bash', ['-c', script], { env: { ...process.env, ...box().env }, encoding: 'utf8' })
    expect(result.stdout).toBe('{"ok":true status=0\n')
    expect(result.stderr).toBe('')
  })
})

describe('the local store', () => {
  it('a corrupt store file is E_IO naming the path, and is left as it was', async () => {
    seed(box(), [])
    writeFileSync(storePath(box()), '{not json')
    const run = await tasks(box(), ['list'])
    expect(readFileSync(storePath(box()), 'utf8')).toBe('{not json')
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({ code: 'E_IO', details: { path: storePath(box()) } })
    expect(env(run).error.details.fix).toContain(storePath(box()))
  })

  it('a store of the wrong shape is E_IO too', async () => {
    seed(box(), [])
    writeFileSync(storePath(box()), JSON.stringify({ schema: 1, next_id: 1, tasks: [{ id: 1 }] }))
    const run = await tasks(box(), ['get', '1'])
    expect(env(run).error.code).toBe('E_IO')
  })
})
