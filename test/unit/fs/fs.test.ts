import { spawnSync } from 'node:child_process'
import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { isBeforeChange } from '../../../src/errors/before-change.js'
import { readJsonFile, withFileLock, writeJsonAtomic } from '../../../src/fs/index.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const dirs: string[] = []
function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'fs-unit-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  vi.useRealTimers()
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const mode = (path: string) => statSync(path).mode & 0o777
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null

describe('writeJsonAtomic', () => {
  it('writes the JSON with the exact mode, whatever the umask, and leaves no temp file', async () => {
    const dir = temp()
    const old = process.umask(0o077)
    try {
      await writeJsonAtomic(join(dir, 'a.json'), { a: 1 }, { mode: 0o644 })
    } finally {
      process.umask(old)
    }
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('{\n  "a": 1\n}\n')
    expect(mode(join(dir, 'a.json'))).toBe(0o644)
    await writeJsonAtomic(join(dir, 'b.json'), [])
    expect(mode(join(dir, 'b.json'))).toBe(0o600)
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'b.json'])
  })

  it('replaces an existing file with the given mode, and makes a missing directory with dirMode', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'a.json'), 'old', { mode: 0o644 })
    chmodSync(join(dir, 'a.json'), 0o644)
    await writeJsonAtomic(join(dir, 'a.json'), 2, { mode: 0o600 })
    expect(mode(join(dir, 'a.json'))).toBe(0o600)
    expect(
      await readJsonFile(
        join(dir, 'a.json'),
        () => 0,
        (v): v is number => typeof v === 'number',
      ),
    ).toBe(2)
    await writeJsonAtomic(join(dir, 'new', 'deep', 'c.json'), 3, { dirMode: 0o750 })
    expect(mode(join(dir, 'new', 'deep'))).toBe(0o750)
    expect(readFileSync(join(dir, 'new', 'deep', 'c.json'), 'utf8')).toBe('3\n')
  })

  it('never writes through a symlink, live or dangling: E_CONFIG before any change, the target untouched', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'real.json'), '1')
    symlinkSync(join(dir, 'real.json'), join(dir, 'link.json'))
    const error = await writeJsonAtomic(join(dir, 'link.json'), 2).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_CONFIG', details: { path: join(dir, 'link.json') } })
    expect(isBeforeChange(error)).toBe(true)
    expect(readFileSync(join(dir, 'real.json'), 'utf8')).toBe('1')
    expect(lstatSync(join(dir, 'link.json')).isSymbolicLink()).toBe(true)
    symlinkSync(join(dir, 'nowhere.json'), join(dir, 'dangling.json'))
    await expect(writeJsonAtomic(join(dir, 'dangling.json'), 3)).rejects.toMatchObject({ code: 'E_CONFIG' })
    expect(existsSync(join(dir, 'nowhere.json'))).toBe(false)
    expect(readdirSync(dir).sort()).toEqual(['dangling.json', 'link.json', 'real.json'])
  })

  it.runIf(process.getuid?.() === 0)('refuses to replace a file another user owns (root included)', async () => {
    const dir = temp()
    const path = join(dir, 'owned.json')
    writeFileSync(path, '1')
    chownSync(path, 4321, 4321)
    await expect(writeJsonAtomic(path, 2)).rejects.toMatchObject({
      code: 'E_CONFIG',
      details: { path, owner: '4321', fix: expect.stringContaining(path) },
    })
    expect(readFileSync(path, 'utf8')).toBe('1')
  })

  it('fails with E_IO marked as before any change, the file as it was and no temp file left', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'a.json'), 'kept')
    // A directory where the file goes: the rename fails after the temp file was written.
    mkdirSync(join(dir, 'a.json.d'))
    writeFileSync(join(dir, 'a.json.d', 'x'), '')
    const error = await writeJsonAtomic(join(dir, 'a.json.d'), 1).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_IO', details: { path: join(dir, 'a.json.d') } })
    expect(isBeforeChange(error)).toBe(true)
    expect(readdirSync(dir).sort()).toEqual(['a.json', 'a.json.d'])
    writeFileSync(join(dir, 'file'), '')
    const under = await writeJsonAtomic(join(dir, 'file', 'a.json'), 1).catch((e: unknown) => e)
    expect(under).toMatchObject({ code: 'E_IO', message: expect.stringContaining('ENOTDIR') })
    expect(readFileSync(join(dir, 'a.json'), 'utf8')).toBe('kept')
  })

  it('writes to one file in call order: the last call is what stays', async () => {
    const path = join(temp(), 'n.json')
    await Promise.all(Array.from({ length: 20 }, (_, i) => writeJsonAtomic(path, i)))
    expect(readFileSync(path, 'utf8')).toBe('19\n')
  })
})

// A child process that takes the lock `rounds` times and increments a counter file inside it, non-atomically.
const COUNTER = `
import { readFileSync, writeFileSync } from 'node:fs'
import { withFileLock } from ${JSON.stringify(join(ROOT, 'dist/fs/index.js'))}
const [path, rounds] = process.argv.slice(1)
for (let i = 0; i < Number(rounds); i++) {
  await withFileLock(path, async () => {
    const n = Number(readFileSync(path, 'utf8'))
    await new Promise((r) => setImmediate(r))
    writeFileSync(path, String(n + 1))
  })
}
`

function node(script: string, args: string[]) {
  return spawnSync(process.execPath, ['--input-type=module', '-e', script, ...args], {
    encoding: 'utf8',
  })
}

describe('withFileLock', () => {
  it('excludes other processes: concurrent read-modify-write loses no update', async () => {
    const path = join(temp(), 'counter')
    writeFileSync(path, '0')
    const { spawn } = await import('node:child_process')
    const runs = Array.from(
      { length: 4 },
      () =>
        new Promise<number | null>((resolve) => {
          const child = spawn(process.execPath, ['--input-type=module', '-e', COUNTER, path, '25'], {
            stdio: 'inherit',
          })
          child.on('close', resolve)
        }),
    )
    expect(await Promise.all(runs)).toEqual([0, 0, 0, 0])
    expect(readFileSync(path, 'utf8')).toBe('100')
    expect(existsSync(`${path}.lock`)).toBe(false)
  }, 60_000)

  it('excludes within one process: the second waits for the first to finish', async () => {
    const path = join(temp(), 'f')
    const order: string[] = []
    let release = () => {}
    const held = new Promise<void>((r) => {
      release = r
    })
    const first = withFileLock(path, async () => {
      order.push('first in')
      await held
      order.push('first out')
    })
    const second = withFileLock(path, async () => {
      order.push('second in')
    })
    await new Promise((r) => setTimeout(r, 50))
    release()
    await Promise.all([first, second])
    expect(order).toEqual(['first in', 'first out', 'second in'])
  })

  it('returns what fn returns, rethrows what it throws, and releases the lock either way', async () => {
    const path = join(temp(), 'f')
    expect(await withFileLock(path, async () => 42)).toBe(42)
    await expect(
      withFileLock(path, async () => {
        throw new Error('inside')
      }),
    ).rejects.toThrow('inside')
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it('breaks a stale lock (a dead holder) at once, and waits out a fresh one with E_TIMEOUT before any change', async () => {
    const dir = temp()
    const path = join(dir, 'f')
    mkdirSync(`${path}.lock`)
    const old = new Date(Date.now() - 60_000)
    utimesSync(`${path}.lock`, old, old)
    expect(await withFileLock(path, async () => existsSync(`${path}.lock`), { timeoutMs: 0 })).toBe(true)
    expect(readdirSync(dir)).toEqual([])
    mkdirSync(`${path}.lock`)
    const error = await withFileLock(path, async () => 'ran', { timeoutMs: 150 }).catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_TIMEOUT', details: { path } })
    expect(isBeforeChange(error)).toBe(true)
    expect(existsSync(`${path}.lock`)).toBe(true)
  })

  it('leaves a stale lock alone while another waiter breaks it, and clears a breaker its killed owner left', async () => {
    const dir = temp()
    const path = join(dir, 'f')
    const old = new Date(Date.now() - 60_000)
    mkdirSync(`${path}.lock`)
    utimesSync(`${path}.lock`, old, old)
    mkdirSync(`${path}.lock.break`)
    await expect(withFileLock(path, async () => 'ran', { timeoutMs: 100 })).rejects.toMatchObject({
      code: 'E_TIMEOUT',
    })
    utimesSync(`${path}.lock.break`, old, old)
    expect(await withFileLock(path, async () => 'ran', { timeoutMs: 2_000 })).toBe('ran')
    expect(readdirSync(dir)).toEqual([])
  })

  it('keeps a held lock fresh, so a long holder is never taken for dead', async () => {
    const path = join(temp(), 'f')
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    await withFileLock(
      path,
      async () => {
        const old = new Date(Date.now() - 60_000)
        utimesSync(`${path}.lock`, old, old)
        vi.advanceTimersByTime(5_000)
        expect(Date.now() - statSync(`${path}.lock`).mtimeMs).toBeLessThan(10_000)
      },
      { staleMs: 10_000 },
    )
  })

  it('does not remove a lock another process took after breaking ours (a holder frozen past staleMs)', async () => {
    const path = join(temp(), 'f')
    await withFileLock(path, async () => {
      rmdirSync(`${path}.lock`)
      mkdirSync(`${path}.lock`)
    })
    expect(existsSync(`${path}.lock`)).toBe(true)
  })

  it('a process that exits while holding the lock removes it', () => {
    const path = join(temp(), 'f')
    const script = `import { withFileLock } from ${JSON.stringify(join(ROOT, 'dist/fs/index.js'))}
await withFileLock(process.argv[1], async () => process.exit(3))`
    expect(node(script, [path]).status).toBe(3)
    expect(existsSync(`${path}.lock`)).toBe(false)
  })

  it('a directory that cannot hold a lock is E_IO at once, before any change', async () => {
    const dir = temp()
    writeFileSync(join(dir, 'file'), '')
    const error = await withFileLock(join(dir, 'file', 'f'), async () => 'ran').catch((e: unknown) => e)
    expect(error).toMatchObject({ code: 'E_IO', message: expect.stringContaining('ENOTDIR') })
    expect(isBeforeChange(error)).toBe(true)
    expect(isObject(error) && isObject(error.details) && typeof error.details.fix).toBe('string')
  })

  it('makes a missing directory (0700) for the lock', async () => {
    const dir = temp()
    expect(await withFileLock(join(dir, 'a', 'b', 'f'), async () => 'ran')).toBe('ran')
    expect(mode(join(dir, 'a', 'b'))).toBe(0o700)
    expect(readdirSync(join(dir, 'a', 'b'))).toEqual([])
  })
})
