import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import {
  cacheFileName,
  cacheWord,
  MAX_CACHE_FILES,
  readCodeCache,
  runKey,
  writeCodeCache,
} from '../../../src/boot/code-cache.js'

describe('which cache a run reads and writes', () => {
  it('is kept under the first command word, never a value; no word before a flag is the common cache', () => {
    expect(cacheWord(['list'])).toBe('list')
    expect(cacheWord(['get', '1'])).toBe('get')
    expect(cacheWord(['get', 'abc'])).toBe('get')
    expect(cacheWord(['job', 'status', '--id', 'x'])).toBe('job')
    expect(cacheWord(['--version'])).toBe('')
    expect(cacheWord(['--pretty', 'list'])).toBe('')
    expect(cacheWord([])).toBe('')
    // Not a command word: a value first, a path, an upper-case or over-long word.
    expect(cacheWord(['1', 'list'])).toBe('list')
    expect(cacheWord(['../x'])).toBe('')
    expect(cacheWord(['LIST'])).toBe('')
    expect(cacheWord(['a'.repeat(41)])).toBe('')
    // The run key still tells the flags apart inside one file.
    expect(runKey(['list', '--status', 'done'])).toBe('list --status')
  })

  it('names the file `<bundle>-<build>-<word>.v8`, and `<bundle>-<build>.v8` for the common one', () => {
    const common = cacheFileName('/t/dist/bundle.cjs', 10, 20)
    expect(common).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}\.v8$/)
    expect(cacheFileName('/t/dist/bundle.cjs', 10, 20, 'list')).toBe(common.replace('.v8', '-list.v8'))
    // A word that is not a command word never reaches the file name.
    expect(cacheFileName('/t/dist/bundle.cjs', 10, 20, '../../x')).toBe(common)
    // Another build of the same bundle: same first part, another second.
    const rebuilt = cacheFileName('/t/dist/bundle.cjs', 11, 20, 'list')
    expect(rebuilt.split('-')[0]).toBe(common.split('-')[0])
    expect(rebuilt.split('-')[1]).not.toBe(common.split('-')[1])
  })
})

describe('writing a cache file', () => {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), 'agentcli-code-cache-'))
    made.push(d)
    return d
  }

  it(`writes no new file past ${MAX_CACHE_FILES} of one build, but still rewrites one that exists`, () => {
    const d = dir()
    const name = (word: string) => cacheFileName('/t/dist/bundle.cjs', 1, 2, word)
    for (let i = 0; i < MAX_CACHE_FILES; i++)
      writeCodeCache(join(d, name(`w${i}`)), Buffer.from('x'), { rewrites: 1, covers: [] })
    expect(readdirSync(d)).toHaveLength(MAX_CACHE_FILES)
    writeCodeCache(join(d, name('one-more')), Buffer.from('x'), { rewrites: 1, covers: ['one-more'] })
    expect(readdirSync(d)).not.toContain(name('one-more'))
    writeCodeCache(join(d, name('w0')), Buffer.from('y'), { rewrites: 2, covers: ['w0 --x'] })
    expect(readCodeCache(join(d, name('w0')))).toMatchObject({ rewrites: 2, covers: ['w0 --x'] })
  })

  it("removes the files of the bundle's other builds, and keeps this build's other commands", () => {
    const d = dir()
    const old = cacheFileName('/t/dist/bundle.cjs', 1, 2, 'list')
    const other = cacheFileName('/other/dist/bundle.cjs', 1, 2, 'list')
    writeFileSync(join(d, old), 'x', { mode: 0o600 })
    writeFileSync(join(d, other), 'x', { mode: 0o600 })
    const get = cacheFileName('/t/dist/bundle.cjs', 3, 4, 'get')
    writeFileSync(join(d, get), 'x', { mode: 0o600 })
    writeCodeCache(join(d, cacheFileName('/t/dist/bundle.cjs', 3, 4, 'list')), Buffer.from('x'), {
      rewrites: 1,
      covers: ['list'],
    })
    expect(readdirSync(d).sort()).toEqual([cacheFileName('/t/dist/bundle.cjs', 3, 4, 'list'), get, other].sort())
  })
})
