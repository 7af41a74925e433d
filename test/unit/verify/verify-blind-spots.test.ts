import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { missingTarget } from '../../../src/verify/call.js'
import { fillInfo, NOTHING, type Seen, varied } from '../../../src/verify/examples.js'
import type { RefCommand } from '../../../src/verify/reference-types.js'
import { needsStateVerdict } from '../../../src/verify/self-checks.js'
import {
  changes,
  describeEntry,
  dryRunSideEffects,
  localOverreach,
  snapshot,
} from '../../../src/verify/side-effects.js'

// The pieces behind the checks that close verify's blind spots; each spawn fixture in test/cli/verify/ shows the
// whole check failing its defect.
const root = mkdtempSync(join(tmpdir(), 'verify-blind-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let n = 0
const home = () => {
  const dir = join(root, String(n++))
  for (const d of ['cache', 'config', 'data/t', 'work']) mkdirSync(join(dir, d), { recursive: true })
  return dir
}
const step = (dir: string, act: () => void) => {
  const before = snapshot(dir, join(dir, 'cache'))
  act()
  return { before, changed: changes(before, snapshot(dir, join(dir, 'cache'))) }
}

describe('verify: a snapshot of the sandbox', () => {
  // A call's detached job worker makes and removes its lock files while verify walks the home (seen: the guide's
  // tool, `job.json.lock` gone between the listing and its lstat, turned into verify's E_INTERNAL).
  it('skips an entry removed between the listing and the look, and still fails on any other error', () => {
    const dir = home()
    writeFileSync(join(dir, 'data/t/file'), 'x')
    expect(describeEntry(join(dir, 'data/t/gone.lock'))).toBeUndefined()
    expect(describeEntry(join(dir, 'data/t/file/under-a-file'))).toBeUndefined()
    expect(describeEntry(join(dir, 'data/t/file'))).toMatchObject({ kind: 'other' })
    expect(describeEntry(join(dir, 'data/t'))).toEqual({ kind: 'dir', value: expect.stringMatching(/^dir \d+$/) })
    expect(() => describeEntry(`${join(dir, 'data/t/file')}\0`)).toThrow()
  })
})

describe('verify: a dry-run has no side effect but its audit line', () => {
  it('allows an appended audit line and a confirm secret made on first use (with the dirs that hold them)', () => {
    const dir = home()
    writeFileSync(join(dir, 'data/t/audit.jsonl'), '{"a":1}\n')
    const { before, changed } = step(dir, () => {
      appendFileSync(join(dir, 'data/t/audit.jsonl'), '{"a":2}\n')
      mkdirSync(join(dir, 'config/t'))
      writeFileSync(join(dir, 'config/t/confirm.secret'), 'x')
      writeFileSync(join(dir, 'cache/anything'), 'x')
    })
    expect(changed).toHaveLength(3)
    expect(dryRunSideEffects(changed, before)).toEqual([])
  })

  it('fails a file in the working directory, a rewritten audit log, a replaced secret, anything in the data dir', () => {
    const dir = home()
    writeFileSync(join(dir, 'data/t/audit.jsonl'), '{"a":1}\n')
    writeFileSync(join(dir, 'config/confirm.secret'), 'old')
    const { before, changed } = step(dir, () => {
      writeFileSync(join(dir, 'work/preview.json'), '{}')
      writeFileSync(join(dir, 'data/t/audit.jsonl'), '{"b":1}\n{"a":2}\n')
      writeFileSync(join(dir, 'config/confirm.secret'), 'new')
      mkdirSync(join(dir, 'data/t/pending'))
      writeFileSync(join(dir, 'data/t/pending/tok'), '1')
    })
    expect(dryRunSideEffects(changed, before).map((c) => c.replace(dir, ''))).toEqual([
      '+/data/t/pending/',
      '+/data/t/pending/tok',
      '+/work/preview.json',
      '~/config/confirm.secret',
      '~/data/t/audit.jsonl',
    ])
  })
})

describe('verify: a local command keeps what the writes own', () => {
  it('may append its audit line, touch a job or checkpoint, and write its own session; not the store', () => {
    const dir = home()
    const file = (p: string, body = 'x') => {
      mkdirSync(join(dir, p, '..'), { recursive: true })
      writeFileSync(join(dir, p), body)
    }
    file('data/t/tasks.json', '[]')
    file('data/t/audit.jsonl', '{"a":1}\n')
    file('data/t/jobs/j1/record.json', '{}')
    file('data/t/checkpoints/c1.json', '{}')
    file('data/t/old.json', '{}')
    const owned = new Set(
      ['tasks.json', 'audit.jsonl', 'jobs/j1/record.json', 'checkpoints/c1.json', 'old.json'].map((p) =>
        join(dir, 'data/t', p),
      ),
    )
    const fine = step(dir, () => {
      appendFileSync(join(dir, 'data/t/audit.jsonl'), '{"a":2}\n')
      file('data/t/jobs/j1/record.json', '{"status":"cancelled"}')
      rmSync(join(dir, 'data/t/checkpoints/c1.json'))
      file('config/t/session.json', '{}')
    })
    expect(localOverreach(fine.changed, fine.before, owned)).toEqual([])
    const bad = step(dir, () => {
      file('data/t/tasks.json', '[{"id":"1"}]')
      rmSync(join(dir, 'data/t/old.json'))
      file('data/t/audit.jsonl', 'rewritten\n')
    })
    expect(localOverreach(bad.changed, bad.before, owned).map((c) => c.replace(dir, ''))).toEqual([
      '-/data/t/old.json',
      '~/data/t/audit.jsonl',
      '~/data/t/tasks.json',
    ])
  })
})

describe('verify: a read that fails on populated data', () => {
  const plain = { argv: ['list'], placeholders: 0, guessed: false }
  it('skips only what answers the same on an empty state, and never a not-found for ids its own output gave', () => {
    // A login the sandbox cannot give: the same answer before and after populating.
    expect(needsStateVerdict(4, 4, plain)).toBe('skip')
    // Fine when empty, broken on data.
    expect(needsStateVerdict(4, 0, plain)).toBe('fail')
    expect(needsStateVerdict(3, 0, plain)).toBe('fail')
    // `get <id>` with the id its own list gave, not found: broken, whatever the empty state said.
    expect(needsStateVerdict(3, 3, { argv: ['get', '1'], placeholders: 1, guessed: false })).toBe('fail')
    // `job status --id <job_id>` filled by a task's `id` (a guess): not found is no proof.
    expect(needsStateVerdict(3, 3, { argv: ['job', 'status', '1'], placeholders: 1, guessed: true })).toBe('skip')
    // An example's literal id the sandbox does not have: the same not-found on an empty state.
    expect(needsStateVerdict(3, 3, { argv: ['get', '9'], placeholders: 0, guessed: false })).toBe('skip')
    // Not a "needs state" exit at all.
    expect(needsStateVerdict(1, 1, plain)).toBe('fail')
  })

  it('tells a grounded fill from a guessed one, and fills anything with a value that names nothing', () => {
    const seen: Seen = new Map([['id', '7']])
    expect(fillInfo(['get', '<id>'], seen)).toEqual({ argv: ['get', '7'], placeholders: 1, guessed: false })
    expect(fillInfo(['get', '<job_id>'], seen)).toEqual({ argv: ['get', '7'], placeholders: 1, guessed: true })
    expect(fillInfo(['get', '<job_id>'], NOTHING)?.argv).toEqual(['get', 'agentcli-verify-none'])
  })
})

describe('verify: the second populating item differs from the first', () => {
  const command = {
    path: 'tag add',
    params: [
      { name: 'name', kind: 'arg', type: 'string', required: true, options: null },
      { name: 'colour', kind: 'flag', type: 'enum', required: false, options: ['red', 'blue'] },
      { name: 'note', kind: 'flag', type: 'string', required: false, options: null },
      { name: 'count', kind: 'flag', type: 'integer', required: false, options: null },
      { name: 'idempotency-key', kind: 'flag', type: 'string', required: false, options: null },
      { name: 'force', kind: 'flag', type: 'boolean', required: false, options: null },
    ],
  } as unknown as RefCommand
  it('varies literal free text, never an option, a number, a placeholder or the idempotency key', () => {
    expect(
      varied(
        ['tag', 'add', 'urgent', '--force', '--colour', 'red', '--note', 'n', '--count', '2', '--idempotency-key', 'k'],
        command,
      ),
    ).toEqual([
      'tag',
      'add',
      'urgent-2',
      '--force',
      '--colour',
      'red',
      '--note',
      'n-2',
      '--count',
      '2',
      '--idempotency-key',
      'k',
    ])
    expect(varied(['tag', 'add', '<name>', '--colour', 'red'], command)).toBeUndefined()
  })
})

describe('verify: a target that cannot start', () => {
  it('names a program on no PATH dir, a missing program path, or the missing script an interpreter is given', () => {
    const path = dirname(process.execPath)
    expect(missingTarget(['node', 'x.js'], path)).toBe('x.js')
    expect(missingTarget(['node', '--no-warnings', './bin/nope'], path)).toBe('./bin/nope')
    expect(missingTarget(['agentcli-verify-nope'], path)).toBe('agentcli-verify-nope')
    expect(missingTarget(['/no/such/program'], path)).toBe('/no/such/program')
    // A program that is there, a word that is no file by its form, a URL: nothing to name.
    expect(missingTarget(['node', '-e', 'console.log(1)'], path)).toBeUndefined()
    expect(missingTarget(['node', 'https://example.com/cli.js'], path)).toBeUndefined()
    expect(missingTarget([process.execPath, join(root, '..', basename(root))], path)).toBeUndefined()
  })
})
