// In-process tests of the audit module (src/audit): the one draft builder, the run's pending record, the one argv
// scrubber. The writer's own tests are in test/unit/confirm/confirm.test.ts ("appendAudit") and test/cli/fleet/fleet-keys.test.ts.
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { scrubArgv } from '../../../src/audit/argv.js'
import { caller, checkAuditLog, startAudit } from '../../../src/audit/open.js'
import { clearAudit, noteAudit, openAudit, pendingAudit } from '../../../src/audit/pending.js'
import { auditDraft, auditPath, withFacts } from '../../../src/audit/record.js'
import { appendAudit } from '../../../src/audit/writer.js'
import { REDACTED } from '../../../src/output/redact.js'
import { setRunStderr } from '../../../src/output/stderr.js'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-audit-unit-'))
  dirs.push(dir)
  return dir
}
const outcome = { result_code: 'OK', exit_code: 0, duration_ms: 4 }

/** The line the writer appends, with its time fixed: what byte-identity is judged on. */
async function line(draft: Parameters<typeof appendAudit>[0]): Promise<string> {
  await appendAudit(draft, outcome)
  return readFileSync(draft.path, 'utf8')
    .trimEnd()
    .split('\n')
    .at(-1)!
    .replace(/"time":"[^"]+"/, '"time":"T"')
}

describe('the draft builder', () => {
  it('notes nothing while no call is audited (a read command has no record)', () => {
    noteAudit({ mode: 'refused' })
    expect(pendingAudit()).toBeUndefined()
  })

  it('keeps what the caller knows: a given mode, a kind on a write draft, no kind at all, a shared sink', () => {
    const dataDir = temp()
    const shared = { append: async () => {}, alsoFile: false }
    expect(auditDraft({ dataDir, id: 'x', argv: [], mode: 'replay' })).toEqual({
      path: auditPath(dataDir),
      command: 'x',
      args: [],
      account: null,
      mode: 'replay',
      token_id: null,
    })
    expect(
      auditDraft({ dataDir, id: 'x', argv: [], principal: { account: 'a' }, kind: 'write', shared }),
    ).toMatchObject({
      kind: 'write',
      mode: 'refused',
      shared,
    })
  })

  it('names a remote subject (tool mcp --http) only when the principal has one, after the OS user', async () => {
    const dataDir = temp()
    const remote = auditDraft({
      dataDir,
      id: 'edit',
      argv: [],
      principal: { account: 'a', profile: 'default', os_user: 'u', subject: { iss: 'local', sub: 'ann' } },
      mode: 'confirm',
    })
    expect(Object.keys(remote)).toEqual([
      'path',
      'command',
      'args',
      'account',
      'profile',
      'os_user',
      'subject',
      'mode',
      'token_id',
    ])
    expect(remote).toMatchObject({ subject: 'ann (local)' })
    for (const subject of [undefined, 'ann', { iss: 'local' }, { sub: 'ann' }, { iss: 1, sub: 'ann' }])
      expect(auditDraft({ dataDir, id: 'edit', argv: [], principal: { account: 'a', subject } })).not.toHaveProperty(
        'subject',
      )
  })

  it("writes an entry's record in its historical key order, tokens scrubbed", async () => {
    const dataDir = temp()
    const draft = auditDraft({ dataDir, id: 'tasks:touch', argv: ['a', '--confirm', 'ct_2.x.y'], kind: 'local' })
    expect(draft.path).toBe(auditPath(dataDir))
    expect(Object.isFrozen(draft)).toBe(true)
    expect(await line(draft)).toBe(
      '{"time":"T","command":"tasks touch","kind":"local","args":["a","--confirm","<token>"],"account":null,' +
        '"mode":"direct","token_id":null,"result_code":"OK","exit_code":0,"duration_ms":4}',
    )
    expect(auditDraft({ dataDir, id: 'x', argv: [], kind: 'write' }).mode).toBe('refused')
  })

  it("writes a write's record with its principal before the kind it inherits from the entry", async () => {
    const dataDir = temp()
    openAudit(auditDraft({ dataDir, id: 'delete', argv: ['t1'], kind: 'write' }))
    const principal = { account: 'ann', profile: 7, os_user: 'ann' }
    const opened = openAudit(
      auditDraft({ dataDir, id: 'delete', argv: ['t1', '--confirm=ct'], principal, mode: 'confirm' }),
    )
    expect(opened.kind).toBe('write')
    noteAudit({ token_id: 'tid' })
    noteAudit({ mode: 'refused' })
    expect(opened.mode).toBe('confirm')
    expect(await line(pendingAudit()!)).toBe(
      '{"time":"T","command":"delete","args":["t1","--confirm=<token>"],"account":"ann","profile":null,' +
        '"os_user":"ann","mode":"refused","token_id":"tid","kind":"write","result_code":"OK","exit_code":0,"duration_ms":4}',
    )
    // A write run without the entry has no kind to inherit, and the default mode of a bare write is a refusal.
    const alone = auditDraft({ dataDir, id: 'delete', argv: [], principal: {} })
    expect(alone).not.toHaveProperty('kind')
    expect(alone).toMatchObject({ mode: 'refused', account: null })
  })

  it('withFacts returns a new record and leaves the old one whole', () => {
    const draft = auditDraft({ dataDir: temp(), id: 'x', argv: [], kind: 'local' })
    const next = withFacts(draft, { token_id: 'a' })
    expect(next).not.toBe(draft)
    expect(draft.token_id).toBeNull()
    expect(Object.keys(next)).toEqual(Object.keys(draft))
  })

  it('clearAudit drops the pending record: the next run in the process starts with none', () => {
    openAudit(auditDraft({ dataDir: temp(), id: 'delete', argv: ['t1'], kind: 'write' }))
    expect(pendingAudit()).toBeDefined()
    clearAudit()
    expect(pendingAudit()).toBeUndefined()
    noteAudit({ token_id: 'tok' })
    expect(pendingAudit()).toBeUndefined()
  })

  it('startAudit opens the run record, with no shared sink on machine-local state', async () => {
    const dataDir = temp()
    const draft = await startAudit({ dataDir, bin: 'tasks' } as never, { id: 'a:b', kind: 'local', argv: [] })
    expect(pendingAudit()).toBe(draft)
    expect(draft).toMatchObject({ command: 'a b', kind: 'local' })
    expect(draft).not.toHaveProperty('shared')
  })

  it('says who ran a call drafted before any principal: the profile and the OS user, in the record’s key order', async () => {
    const saved = process.env.AUDITED_PROFILE
    process.env.AUDITED_PROFILE = 'staging'
    try {
      expect(await caller('audited', () => 'ann')).toEqual({ profile: 'staging', os_user: 'ann' })
    } finally {
      if (saved === undefined) delete process.env.AUDITED_PROFILE
      else process.env.AUDITED_PROFILE = saved
    }
    const unknown = await caller('audited', () => {
      throw new Error('no passwd entry')
    })
    expect(unknown).toEqual({ profile: 'default', os_user: null })
    const dataDir = temp()
    const draft = await startAudit({ dataDir, bin: 'audited' } as never, { id: 'touch', kind: 'local', argv: [] })
    expect(draft).toMatchObject({ profile: 'default', os_user: expect.any(String) })
    const fixed = auditDraft({ dataDir, id: 'touch', argv: [], kind: 'local', caller: { profile: 'p', os_user: 'u' } })
    expect(await line(fixed)).toBe(
      '{"time":"T","command":"touch","kind":"local","args":[],"account":null,"profile":"p","os_user":"u",' +
        '"mode":"direct","token_id":null,"result_code":"OK","exit_code":0,"duration_ms":4}',
    )
    // A write's own draft names its principal's, not the caller's.
    const principal = { account: 'a', profile: 'x', os_user: 'y' }
    const own = await startAudit({ dataDir, bin: 'audited' } as never, { id: 'w', argv: [], principal })
    expect(own).toMatchObject({ profile: 'x', os_user: 'y' })
  })

  it('checkAuditLog refuses a linked audit.jsonl whenever the file log is kept, and only then', () => {
    const dataDir = temp()
    const victim = join(temp(), 'victim')
    writeFileSync(victim, '')
    const draft = auditDraft({ dataDir, id: 'x', argv: [], kind: 'write' })
    checkAuditLog(draft)
    symlinkSync(victim, draft.path)
    const refused = { code: 'E_CONFIG', details: expect.objectContaining({ path: draft.path }) }
    expect(() => checkAuditLog(draft)).toThrow(expect.objectContaining(refused))
    const shared = { append: async () => {}, alsoFile: true }
    expect(() => checkAuditLog({ ...draft, shared })).toThrow(expect.objectContaining(refused))
    expect(() => checkAuditLog({ ...draft, shared: { ...shared, alsoFile: false } })).not.toThrow()
    expect(readFileSync(victim, 'utf8')).toBe('')
  })
})

describe('the argv scrubber', () => {
  it('replaces confirm tokens in both spellings, and invents none after a trailing flag', () => {
    expect(scrubArgv(['--confirm', 'ct_2.a.b', 'x', '--confirm=ct_2.c.d', '--confirm'])).toEqual([
      '--confirm',
      '<token>',
      'x',
      '--confirm=<token>',
      '--confirm',
    ])
  })

  it('hides the values of secret flags and scrubs the rest like any text; scrubbing twice changes nothing', () => {
    const once = scrubArgv(['--password', 'hunter2', '--api-key=sk-1', 'Bearer abcdef0123456789xyzw', '--confirm', 'c'])
    expect(once).toEqual([
      '--password',
      REDACTED,
      `--api-key=${REDACTED}`,
      `Bearer ${REDACTED}`,
      '--confirm',
      '<token>',
    ])
    expect(scrubArgv(once)).toEqual(once)
    // A secret flag followed by another flag, or last, has no value to hide.
    expect(scrubArgv(['--password', '--quiet', '--token'])).toEqual(['--password', '--quiet', '--token'])
  })
})

describe("the writer and a fleet's shared audit log", () => {
  const draftIn = (dir: string, shared: NonNullable<Parameters<typeof appendAudit>[0]['shared']>) => ({
    ...auditDraft({ dataDir: dir, id: 'edit', argv: ['1', '--token', 'sk-secret'], principal: { account: 'a' } }),
    shared,
  })

  it('sends the redacted record to the shared log only, or to the file as well when alsoFile', async () => {
    for (const alsoFile of [false, true]) {
      const dir = temp()
      const sent: unknown[] = []
      const draft = draftIn(dir, { append: async (record) => void sent.push(record), alsoFile })
      await appendAudit(draft, outcome)
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatchObject({ command: 'edit', args: ['1', '--token', REDACTED], result_code: 'OK' })
      let file: string | undefined
      try {
        file = readFileSync(draft.path, 'utf8')
      } catch {}
      if (alsoFile) expect(JSON.parse(file!.trimEnd())).toEqual(sent[0])
      else expect(file).toBeUndefined()
    }
  })

  it('keeps the record in the local file when the shared log refuses it, and says so on stderr', async () => {
    const dir = temp()
    const warned: string[] = []
    const before = setRunStderr((text) => warned.push(text))
    try {
      const draft = draftIn(dir, {
        append: () => Promise.reject(new Error('store down')),
        alsoFile: false,
      })
      await appendAudit(draft, outcome)
      expect(JSON.parse(readFileSync(draft.path, 'utf8').trimEnd())).toMatchObject({ command: 'edit', mode: 'refused' })
      expect(warned).toEqual([`warning: cannot append to the shared audit log (store down); kept in ${draft.path}\n`])
    } finally {
      setRunStderr(before)
    }
  })
})
