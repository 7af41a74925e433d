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

const box = useSandbox()
const MAGIC = 'agentcli-code-cache 1\n'

function cacheFile(): string {
  const dir = join(box().env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
  const names = readdirSync(dir).filter((name) => name.endsWith('.v8'))
  expect(names).toHaveLength(1)
  return join(dir, names[0]!)
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

/** A run that must answer, and the cache file's identity afterwards (a rewrite renames a new file into place). */
async function run(args: string[]): Promise<{ ino: number; bytes: Buffer }> {
  const result = await tasks(box(), args)
  expect(result.code, result.stderr).toBe(0)
  expect(result.stderr).toBe('')
  const file = cacheFile()
  return { ino: statSync(file).ino, bytes: readFileSync(file) }
}

describe('the code cache covers every command a user runs', () => {
  it('is rewritten when a new command first runs, and then left alone', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    const first = await run(['list'])
    expect(header()).toEqual({ rewrites: 1, covers: ['list'] })
    const afterGet = await run(['get', '1'])
    expect(afterGet.ino).not.toBe(first.ino)
    // It holds what the first run compiled and what `get` added.
    expect(afterGet.bytes.length).toBeGreaterThan(first.bytes.length)
    expect(header()).toEqual({ rewrites: 2, covers: ['list', 'get'] })
    expect(statSync(cacheFile()).mode & 0o777).toBe(0o600)
    // Neither command rewrites it again; a cache V8 rejected would be replaced, so both were accepted.
    const again = await run(['list'])
    expect(again.ino).toBe(afterGet.ino)
    const getAgain = await run(['get', '1'])
    expect(getAgain.ino).toBe(afterGet.ino)
    expect(getAgain.bytes.equals(afterGet.bytes)).toBe(true)
    // Flag values and positional values are not a new run; a new flag is.
    expect((await run(['get', '1'])).ino).toBe(afterGet.ino)
    expect((await run(['list', '--status', 'done'])).ino).not.toBe(afterGet.ino)
    expect(header().covers).toEqual(['list', 'get', 'list --status'])
    expect((await run(['list', '--status', 'open'])).bytes.equals(readFileSync(cacheFile()))).toBe(true)
    expect(header().rewrites).toBe(3)
  })

  it('stops rewriting one bundle build after 64 rewrites, and still answers from the cache it has', async () => {
    seed(box(), [{ id: '1', title: 'a' }])
    await run(['list'])
    rewrite(cacheFile(), { rewrites: 64, covers: ['list'] })
    const before = readFileSync(cacheFile())
    const get = await tasks(box(), ['get', '1'])
    expect(get.code, get.stderr).toBe(0)
    expect(env(get).data.id).toBe('1')
    expect(readFileSync(cacheFile()).equals(before)).toBe(true)
  })

  it('replaces a cache V8 rejects, counting the rewrite, so a cache rejected on every run is bounded too', async () => {
    await run(['list'])
    const file = cacheFile()
    const size = statSync(file).size
    rewrite(file, { rewrites: 5, covers: ['list', 'get'] }, Buffer.alloc(size - 100, 7))
    const answered = await tasks(box(), ['get', '9'])
    expect(env(answered).error.code).toBe('E_NOT_FOUND')
    expect(header()).toEqual({ rewrites: 6, covers: ['get'] })
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
