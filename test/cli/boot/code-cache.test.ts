import {
  chmodSync,
  lstatSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, seed, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox({ ownCodeCache: true })
const MAGIC = 'agentcli-code-cache 1\n'

function cacheDir(): string {
  return join(box().env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
}

function cacheNames(): string[] {
  return readdirSync(cacheDir()).filter((name) => name.endsWith('.v8'))
}

/** The one cache file of a command word (`<bundle>-<build>-<word>.v8`), or the common one for `''`. */
function cacheFile(word = 'list'): string {
  const names = cacheNames().filter((name) =>
    word ? name.endsWith(`-${word}.v8`) : /^[0-9a-f]{8}-[0-9a-f]{8}\.v8$/.test(name),
  )
  expect(names).toHaveLength(1)
  return join(cacheDir(), names[0]!)
}

/** The file's own header: how often it was rewritten and which runs it covers. */
function header(file = cacheFile()): { rewrites: number; covers: string[] } {
  const bytes = readFileSync(file)
  expect(bytes.toString('latin1', 0, MAGIC.length)).toBe(MAGIC)
  const length = bytes.readUInt32LE(MAGIC.length)
  return JSON.parse(bytes.toString('utf8', MAGIC.length + 4, MAGIC.length + 4 + length))
}

/** The same V8 data under another header (or other data under the same header). */
function rewrite(file: string, head: object, data?: Buffer): void {
  const bytes = readFileSync(file)
  const start = MAGIC.length + 4 + bytes.readUInt32LE(MAGIC.length)
  const json = Buffer.from(JSON.stringify(head))
  const length = Buffer.alloc(4)
  length.writeUInt32LE(json.length)
  writeFileSync(file, Buffer.concat([Buffer.from(MAGIC), length, json, data ?? bytes.subarray(start)]), { mode: 0o600 })
}

/** A run that must answer, and its command's cache file's identity afterwards (a rewrite renames a new file in). */
async function run(args: string[], word = 'list'): Promise<{ ino: number; bytes: Buffer }> {
  const result = await tasks(box(), args)
  expect(result.code, result.stderr).toBe(0)
  expect(result.stderr).toBe('')
  const file = cacheFile(word)
  return { ino: statSync(file).ino, bytes: readFileSync(file) }
}

describe('the code cache covers every command a user runs, one file per command', () => {
  it('is rewritten when a new run of its command first comes, and then left alone', async () => {
    seed(box(), [
      { id: '1', title: 'a' },
      { id: '2', title: 'b' },
    ])
    const first = await run(['list'])
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })
    expect(statSync(cacheFile()).mode & 0o777).toBe(0o600)
    // Another command writes its own file: the list's cache neither grows nor is rewritten.
    const get = await run(['get', '1'], 'get')
    expect(header(cacheFile('get'))).toEqual({ rewrites: 1, covers: ['get'] })
    expect(statSync(cacheFile()).ino).toBe(first.ino)
    expect(cacheNames()).toHaveLength(2)
    // Neither command rewrites its file again; a cache V8 rejected would be replaced, so both were accepted.
    expect((await run(['list'])).ino).toBe(first.ino)
    const getAgain = await run(['get', '1'], 'get')
    expect(getAgain.ino).toBe(get.ino)
    expect(getAgain.bytes.equals(get.bytes)).toBe(true)
    // Flag values and positional values are not a new run; a new flag is, and the new cache holds both runs'.
    expect((await run(['get', '2'], 'get')).ino).toBe(get.ino)
    const withFlag = await run(['list', '--status', 'done'])
    expect(withFlag.ino).not.toBe(first.ino)
    expect(withFlag.bytes.length).toBeGreaterThan(first.bytes.length)
    expect(header().covers).toEqual(['list', 'list --status'])
    expect((await run(['list', '--status', 'open'])).bytes.equals(readFileSync(cacheFile()))).toBe(true)
    expect(header().rewrites).toBe(2)
  })

  it('keeps the commands of one topic in one file, and a run naming no command in the common one', async () => {
    await run(['job', 'list'], 'job')
    await run(['job', 'list', '--limit', '5'], 'job')
    expect(header(cacheFile('job')).covers).toEqual(['job list', 'job list --limit'])
    await run(['--version'], '')
    expect(header(cacheFile('')).covers).toEqual(['--version'])
    expect(cacheNames()).toHaveLength(2)
  })

  it('a command without a file of its own answers and writes one, even with the common cache damaged', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await run(['--version'], '')
    await run(['list'])
    // The common cache damaged: the next new command still answers and writes its own file, as from nothing.
    writeFileSync(cacheFile(''), Buffer.alloc(statSync(cacheFile('')).size, 7), { mode: 0o600 })
    const got = await tasks(box(), ['get', '1'])
    expect(got.code, got.stderr).toBe(0)
    expect(env(got).data.id).toBe('1')
    expect(header(cacheFile('get'))).toEqual({ rewrites: 1, covers: ['get'] })
  })

  it('writes no new file past 32 of one bundle build, and the command still answers', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await run(['list'])
    const build = cacheNames()[0]!.split('-').slice(0, 2).join('-')
    for (let i = 0; i < 31; i++) writeFileSync(join(cacheDir(), `${build}-word${i}.v8`), 'x', { mode: 0o600 })
    const got = await tasks(box(), ['get', '1'])
    expect(got.code, got.stderr).toBe(0)
    expect(cacheNames().filter((name) => name.endsWith('-get.v8'))).toEqual([])
    expect(cacheNames()).toHaveLength(32)
    // A file that exists is still rewritten when its command needs it.
    await run(['list', '--status', 'open'])
    expect(header().covers).toEqual(['list', 'list --status'])
  })

  it('stops rewriting one cache file after 64 rewrites, and still answers from the cache it has', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await run(['list'])
    rewrite(cacheFile(), { rewrites: 64, covers: ['list'] })
    const before = readFileSync(cacheFile())
    const list = await tasks(box(), ['list', '--status', 'open'])
    expect(list.code, list.stderr).toBe(0)
    expect(env(list).data.items.map((t: { id: string }) => t.id)).toEqual(['1'])
    expect(readFileSync(cacheFile()).equals(before)).toBe(true)
  })

  it('replaces a cache V8 rejects, counting the rewrite, so a cache rejected on every run is bounded too', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await run(['get', '1'], 'get')
    const file = cacheFile('get')
    const size = statSync(file).size
    rewrite(file, { rewrites: 5, covers: ['get', 'get --fields'] }, Buffer.alloc(size - 100, 7))
    const answered = await tasks(box(), ['get', '9'])
    expect(env(answered).error.code).toBe('E_NOT_FOUND')
    expect(header(file)).toEqual({ rewrites: 6, covers: ['get'] })
    rewrite(file, { rewrites: 64, covers: ['get'] }, Buffer.alloc(size - 100, 7))
    const capped = readFileSync(file)
    expect((await tasks(box(), ['get', '9'])).code).toBe(3)
    expect(readFileSync(file).equals(capped)).toBe(true)
  })

  it('does not read a file over 16 MB, a file of another shape, or a link: each is replaced by a fresh cache', async () => {
    await run(['list'])
    const file = cacheFile()
    rewrite(
      file,
      { rewrites: 9, covers: ['list'] },
      Buffer.concat([readFileSync(file), Buffer.alloc(16 * 1024 * 1024)]),
    )
    await run(['list'])
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })

    writeFileSync(file, Buffer.alloc(4096, 1), { mode: 0o600 })
    await run(['list'])
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })

    // A valid cache reached through a link is not followed (O_NOFOLLOW): this run writes its own file in place.
    rewrite(file, { rewrites: 7, covers: ['list'] })
    const elsewhere = join(box().root, 'elsewhere.v8')
    renameSync(file, elsewhere)
    symlinkSync(elsewhere, file)
    await run(['list'])
    expect(lstatSync(file).isFile()).toBe(true)
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })
    expect(header(elsewhere)).toEqual({ rewrites: 7, covers: ['list'] })
  })

  it('does not read a valid cache others could have written: it is replaced by a fresh one', async () => {
    await run(['list'])
    rewrite(cacheFile(), { rewrites: 7, covers: ['list'] })
    chmodSync(cacheFile(), 0o666)
    await run(['list'])
    expect(statSync(cacheFile()).mode & 0o777).toBe(0o600)
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })
  })
})
