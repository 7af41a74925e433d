// Command-level tests: each spawns the real bin (as an agent would) in a throw-away HOME and checks stdout,
// stderr and the exit code. `npm test` runs them with `node --test` after the build.
import assert from 'node:assert/strict'
import { dirname, join } from 'node:path'
import { afterEach, describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'
import { fccGuard, runTool, type Sandbox, sandbox } from 'agentcli/testing'

const HERE = dirname(fileURLToPath(import.meta.url))
const BIN = join(HERE, '..', 'bin', 'run.js')

let box: Sandbox | undefined
afterEach(() => {
  box?.cleanup()
  box = undefined
})
const run = (args: string[]) => {
  box ??= sandbox('{{bin}}-test-')
  return runTool(BIN, args, { env: box.env })
}
type Envelope = {
  ok: boolean
  data: Record<string, unknown>
  error: { code: string; details: Record<string, unknown> }
}
const envelope = (stdout: string) => JSON.parse(stdout) as Envelope

async function setNote(name: string, text: string) {
  const dry = await run(['set', name, '--text', text, '--dry-run'])
  assert.equal(dry.code, 0, dry.stdout)
  const token = (envelope(dry.stdout).data as { confirm_token: string }).confirm_token
  return run(['set', name, '--text', text, '--confirm', token])
}

describe('list', () => {
  it('pages through the notes with a cursor', async () => {
    for (const name of ['a', 'b', 'c']) assert.equal((await setNote(name, `note ${name}`)).code, 0)
    const first = await run(['list', '--limit', '2'])
    assert.equal(first.code, 0, first.stderr)
    const page = envelope(first.stdout).data as { items: Array<{ name: string }>; next_cursor: string }
    assert.deepEqual(
      page.items.map((n) => n.name),
      ['a', 'b'],
    )
    const second = envelope((await run(['list', '--limit', '2', '--cursor', page.next_cursor])).stdout)
    assert.deepEqual(
      (second.data as { items: Array<{ name: string }> }).items.map((n) => n.name),
      ['c'],
    )
  })

  it('refuses a limit out of range: E_VALIDATION, exit 2, naming the flag', async () => {
    const result = await run(['list', '--limit', '0'])
    assert.equal(result.code, 2)
    const { error } = envelope(result.stdout)
    assert.equal(error.code, 'E_VALIDATION')
    assert.equal(error.details.param, '--limit')
  })
})

describe('set', () => {
  it('writes nothing without a confirm token', async () => {
    const result = await run(['set', 'greeting', '--text', 'hello'])
    assert.equal(result.code, 5)
    assert.equal(envelope(result.stdout).error.code, 'E_CONFIRMATION_REQUIRED')
    assert.deepEqual((envelope((await run(['list'])).stdout).data as { items: unknown[] }).items, [])
  })

  it('applies the previewed change with its token', async () => {
    const applied = await setNote('greeting', 'hello')
    assert.equal(applied.code, 0, applied.stdout)
    assert.equal((envelope(applied.stdout).data as { text: string }).text, 'hello')
  })

  it('refuses a token whose note changed since the preview', async () => {
    const dry = await run(['set', 'greeting', '--text', 'first', '--dry-run'])
    const token = (envelope(dry.stdout).data as { confirm_token: string }).confirm_token
    assert.equal((await setNote('greeting', 'someone else')).code, 0)
    const stale = await run(['set', 'greeting', '--text', 'first', '--confirm', token])
    assert.notEqual(stale.code, 0)
    assert.equal(envelope(stale.stdout).ok, false)
  })

  it('rejects an invalid name with E_VALIDATION', async () => {
    const result = await run(['set', 'Bad Name', '--text', 'x', '--dry-run'])
    assert.equal(envelope(result.stdout).error.code, 'E_VALIDATION')
  })
})

describe('export', () => {
  it('streams one NDJSON item line per note, then a summary', async () => {
    await setNote('a', 'one')
    const result = await run(['export'])
    assert.equal(result.code, 0, result.stderr)
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    assert.equal(lines.length, 2)
  })
})

describe('functional contract coverage', () => {
  it('has a command-level test for every command of the tool', async () => {
    const report = await fccGuard({ bin: BIN, testDir: HERE })
    assert.deepEqual(report.missing, [])
  })
})
