import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { appendAudit } from '../../../src/audit/writer.js'
import { fileSecretSource } from '../../../src/confirm/secret.js'
import { isBeforeChange } from '../../../src/errors/before-change.js'
import { readJsonFile, withFileLock, writeJsonAtomic } from '../../../src/fs/index.js'
import { checkStateDir, inspectStateFile, openStateFile } from '../../../src/fs/state-file.js'
import { fileJobStore, newJobId } from '../../../src/jobs/file-store.js'

const dirs: string[] = []
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'state-file-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  vi.restoreAllMocks()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const ROOT_USER = process.getuid?.() === 0
const isNumber = (v: unknown): v is number => typeof v === 'number'
const KNOWN = 'ab'.repeat(32)

describe('openStateFile / inspectStateFile / checkStateDir', () => {
  it('open a real file of this user and pass a fresh directory', () => {
    const dir = temp()
    writeFileSync(join(dir, 'a'), 'x', { mode: 0o600 })
    closeSync(openStateFile(join(dir, 'a'), 'read'))
    closeSync(openStateFile(join(dir, 'b'), 'append'))
    expect(inspectStateFile(join(dir, 'b'))?.isFile()).toBe(true)
    expect(inspectStateFile(join(dir, 'missing', 'c'))).toBeUndefined()
    expect(checkStateDir(join(dir, 'missing'))).toBe(false)
  })

  it('refuse a link (live or dangling) to the file with E_CONFIG naming the path and the fix', () => {
    const dir = temp()
    writeFileSync(join(dir, 'target'), 'x')
    symlinkSync(join(dir, 'target'), join(dir, 'live'))
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling'))
    for (const name of ['live', 'dangling']) {
      const path = join(dir, name)
      const expected = { code: 'E_CONFIG', details: { path, fix: expect.stringContaining(path) } }
      expect(() => openStateFile(path, 'read')).toThrow(expect.objectContaining(expected))
      expect(() => openStateFile(path, 'append')).toThrow(expect.objectContaining(expected))
      expect(() => inspectStateFile(path)).toThrow(expect.objectContaining(expected))
    }
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('x')
  })

  it('refuse a linked directory, and a directory or file others (or the group) can write', () => {
    const dir = temp()
    mkdirSync(join(dir, 'real'), { mode: 0o700 })
    symlinkSync(join(dir, 'real'), join(dir, 'linked'))
    expect(() => openStateFile(join(dir, 'linked', 'f'), 'append')).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', details: expect.objectContaining({ path: join(dir, 'linked') }) }),
    )
    mkdirSync(join(dir, 'shared'))
    chmodSync(join(dir, 'shared'), 0o775)
    expect(() => checkStateDir(join(dir, 'shared'))).toThrow(
      expect.objectContaining({
        code: 'E_CONFIG',
        details: { path: join(dir, 'shared'), mode: '775', fix: `chmod go-w ${join(dir, 'shared')}` },
      }),
    )
    writeFileSync(join(dir, 'open'), '1')
    chmodSync(join(dir, 'open'), 0o646)
    expect(() => openStateFile(join(dir, 'open'), 'read')).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', details: expect.objectContaining({ mode: '646' }) }),
    )
  })

  it('a secret must be unreadable by others too', () => {
    const dir = temp()
    writeFileSync(join(dir, 's'), KNOWN)
    chmodSync(join(dir, 's'), 0o640)
    closeSync(openStateFile(join(dir, 's'), 'read'))
    expect(() => openStateFile(join(dir, 's'), 'read', { secret: true })).toThrow(
      expect.objectContaining({
        code: 'E_CONFIG',
        details: expect.objectContaining({ fix: `chmod 600 ${join(dir, 's')}` }),
      }),
    )
  })

  it('a path through a regular file is left to the operation (ENOTDIR), not misreported', () => {
    const dir = temp()
    writeFileSync(join(dir, 'file'), '')
    expect(checkStateDir(join(dir, 'file'))).toBe(true)
    expect(() => openStateFile(join(dir, 'file', 'x'), 'read')).toThrow(expect.objectContaining({ code: 'ENOTDIR' }))
  })

  it.runIf(ROOT_USER)('refuse a file or directory another user owns, root included', () => {
    const dir = temp()
    writeFileSync(join(dir, 'theirs'), '1', { mode: 0o600 })
    chownSync(join(dir, 'theirs'), 4321, 4321)
    expect(() => openStateFile(join(dir, 'theirs'), 'read')).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', details: expect.objectContaining({ owner: '4321' }) }),
    )
    mkdirSync(join(dir, 'their-dir'), { mode: 0o700 })
    chownSync(join(dir, 'their-dir'), 4321, 4321)
    expect(() => inspectStateFile(join(dir, 'their-dir', 'f'))).toThrow(
      expect.objectContaining({ code: 'E_CONFIG', details: expect.objectContaining({ path: join(dir, 'their-dir') }) }),
    )
  })
})

describe('the state writers refuse what the check refuses', () => {
  it('the audit log: a linked audit.jsonl is never appended to (a warning names the path and the fix)', async () => {
    const dir = temp()
    const victim = join(dir, 'victim')
    writeFileSync(victim, 'precious\n')
    symlinkSync(victim, join(dir, 'audit.jsonl'))
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true)
    await appendAudit(
      { path: join(dir, 'audit.jsonl'), command: 'create', kind: 'write', args: ['--title', 'pwned'] } as never,
      { result_code: 'OK', exit_code: 0, duration_ms: 1 },
    )
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
    expect(String(stderr.mock.calls[0]?.[0])).toMatch(/audit\.jsonl.*symbolic link.*replace the link/)
  })

  it('the confirm secret: a link to a file whose value is known is refused, never used to sign', async () => {
    const dir = temp()
    const known = join(temp(), 'known')
    writeFileSync(known, `${KNOWN}\n`, { mode: 0o600 })
    symlinkSync(known, join(dir, 'confirm.secret'))
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({
      code: 'E_CONFIG',
      details: { path: join(dir, 'confirm.secret'), fix: expect.stringContaining('replace the link') },
    })
  })

  it('a linked config dir: no secret is created through it', async () => {
    const real = temp()
    const dir = join(temp(), 'cfg')
    symlinkSync(real, dir)
    await expect(fileSecretSource(dir).get()).rejects.toMatchObject({ code: 'E_CONFIG', details: { path: dir } })
    expect(readdirSync(real)).toEqual([])
  })

  it("a job's items: never appended through a link", async () => {
    const dataDir = temp()
    const id = newJobId()
    mkdirSync(join(dataDir, 'jobs', id), { recursive: true, mode: 0o700 })
    const victim = join(temp(), 'victim')
    writeFileSync(victim, 'precious\n')
    symlinkSync(victim, join(dataDir, 'jobs', id, 'items.ndjson'))
    await expect(fileJobStore(dataDir).appendItems(id, [{ a: 1 }])).rejects.toMatchObject({ code: 'E_CONFIG' })
    expect(readFileSync(victim, 'utf8')).toBe('precious\n')
  })

  it('a linked data dir: JSON is neither read nor written through it, and no lock is taken in it', async () => {
    const real = temp()
    writeFileSync(join(real, 'tasks.json'), '1', { mode: 0o600 })
    const data = join(temp(), 'data')
    symlinkSync(real, data)
    const path = join(data, 'tasks.json')
    for (const attempt of [
      () => readJsonFile(path, () => 0, isNumber),
      () => writeJsonAtomic(path, 2),
      () => withFileLock(path, async () => 'ran'),
    ]) {
      const error = await attempt().catch((e: unknown) => e)
      expect(error).toMatchObject({ code: 'E_CONFIG', details: { path: data } })
      expect(isBeforeChange(error)).toBe(true)
    }
    expect(readFileSync(join(real, 'tasks.json'), 'utf8')).toBe('1')
  })
})
