import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { toolConfig } from '../../../src/runtime/tool-config.js'
import { fetchText } from '../../../src/update/_fetch.js'
import { downloadTo } from '../../../src/update/install.js'
import { DEFAULT_UPDATE_LIMITS, updateLimits } from '../../../src/update/limits.js'
import { type Asset, directorySource, type ReleaseSource } from '../../../src/update/source.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-download-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const MiB = 2 ** 20
const CHUNK = 64 * 1024

/** A body that never ends (a hostile source): it counts how many chunks were pulled from it. */
function endless(declared?: number): { response: Response; pulled: () => number } {
  let pulls = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++
      controller.enqueue(new Uint8Array(CHUNK).fill(48))
    },
  })
  const headers = declared === undefined ? undefined : { 'content-length': String(declared) }
  return { response: new Response(body, headers ? { headers } : {}), pulled: () => pulls }
}

const failure = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}

const ARCHIVE = { maxBytes: MiB, name: 'tasks-v2.0.0-linux-x64.tar.gz', url: 'https://example.test/a.tar.gz' }

describe('the release archive download is capped before anything is verified', () => {
  it('refuses a declared Content-Length over archive_bytes without reading the body', async () => {
    const { response, pulled } = endless(700 * MiB)
    const path = join(work, 'declared.tar.gz')
    const error = await failure(downloadTo(response, path, undefined, undefined, ARCHIVE))
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      details: {
        reason: 'too_large',
        stage: 'download',
        name: ARCHIVE.name,
        path: ARCHIVE.url,
        limit: MiB,
        got: 700 * MiB,
        setting: 'agentcli.update.limits.archive_bytes',
      },
    })
    // The stream may prefetch a chunk or so as it is set up; nothing near the body was read.
    expect(pulled()).toBeLessThanOrEqual(2)
    expect(existsSync(path)).toBe(false)
  })

  it('stops an endless body at the limit: what is read and written stays within archive_bytes + one chunk', async () => {
    const { response, pulled } = endless()
    const path = join(work, 'endless.tar.gz')
    const error = await failure(downloadTo(response, path, undefined, undefined, ARCHIVE))
    expect(error).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'too_large', limit: MiB } })
    expect(error.message).toMatch(/at least/)
    expect(pulled() * CHUNK).toBeLessThanOrEqual(MiB + 4 * CHUNK)
    expect(statSync(path).size).toBeLessThanOrEqual(MiB + CHUNK)
  })

  it('a download that fits is written whole, and its SHA-256 returned', async () => {
    const bytes = new Uint8Array(MiB).fill(1)
    const path = join(work, 'fits.tar.gz')
    const digest = await downloadTo(new Response(bytes), path, undefined, undefined, ARCHIVE)
    expect(readFileSync(path).length).toBe(MiB)
    expect(digest).toMatch(/^[0-9a-f]{64}$/)
  })

  it('a write that fails is E_IO naming the file, not a (retryable) network error: a full disk and a missing dir', async () => {
    // /dev/full answers every write with ENOSPC: a full disk, for real, without root.
    const full = await failure(
      downloadTo(new Response(new Uint8Array(CHUNK)), '/dev/full', undefined, undefined, ARCHIVE),
    )
    expect(full).toMatchObject({ code: 'E_IO', details: { stage: 'download', path: '/dev/full', errno: 'ENOSPC' } })
    expect(String(full.details.fix)).toMatch(/free space/)
    const gone = join(work, 'no-such-dir', 'a.tar.gz')
    const missing = await failure(downloadTo(new Response(new Uint8Array(CHUNK)), gone, undefined, undefined, ARCHIVE))
    expect(missing).toMatchObject({ code: 'E_IO', details: { path: gone, errno: 'ENOENT' } })
  })
})

describe('checksums.txt and the bundle are read within their limits, never whole', () => {
  const asset: Asset = { name: 'checksums.txt', url: 'https://example.test/checksums.txt' }
  const sourceOf = (response: () => Response): ReleaseSource => ({
    describe: 'test',
    list: async () => [],
    fetch: async () => response(),
  })
  const cap = { limit: 'checksums_bytes' as const, maxBytes: DEFAULT_UPDATE_LIMITS.checksums_bytes }

  it('refuses a 700 MB checksums.txt from its declared size, reading none of it', async () => {
    const { response, pulled } = endless(700 * 1000 * 1000)
    const error = await failure(
      fetchText(
        sourceOf(() => response),
        asset,
        { timeoutMs: 5000 },
        cap,
      ),
    )
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      details: {
        reason: 'too_large',
        name: 'checksums.txt',
        path: asset.url,
        setting: 'agentcli.update.limits.checksums_bytes',
      },
    })
    expect(pulled()).toBeLessThanOrEqual(2)
  })

  it('stops an endless checksums.txt at its limit: memory holds at most the limit', async () => {
    const { response, pulled } = endless()
    const error = await failure(
      fetchText(
        sourceOf(() => response),
        asset,
        { timeoutMs: 5000 },
        cap,
      ),
    )
    expect(error).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'too_large', limit: MiB } })
    expect(pulled() * CHUNK).toBeLessThanOrEqual(MiB + 4 * CHUNK)
  })

  it('reads one within its limit', async () => {
    const text = `${'ab'.repeat(32)}  tasks.tar.gz\n`
    expect(
      await fetchText(
        sourceOf(() => new Response(text)),
        asset,
        { timeoutMs: 5000 },
        cap,
      ),
    ).toBe(text)
  })

  it('a directory source declares its files’ sizes: a 700 MB (sparse) checksums.txt is refused unread', async () => {
    const dir = mkdtempSync(join(work, 'dir-'))
    const path = join(dir, 'checksums.txt')
    writeFileSync(path, '')
    truncateSync(path, 700 * 1000 * 1000)
    const source = directorySource(dir)
    const error = await failure(fetchText(source, { name: 'checksums.txt', url: path }, { timeoutMs: 5000 }, cap))
    expect(error).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'too_large', got: 700 * 1000 * 1000, path } })
    expect((await source.fetch({ name: 'x', url: join(dir, 'missing') })).status).toBe(404)
    expect((await source.fetch({ name: 'x', url: dir })).status).toBe(404)
  })
})

describe('updateLimits: declared by the tool, validated', () => {
  const config = (limits: unknown) =>
    toolConfig(work, { name: 'tasks', version: '1.0.0', agentcli: { update: { limits } } } as never)

  it('defaults, and a declared value over them', () => {
    expect(updateLimits(config(undefined))).toEqual(DEFAULT_UPDATE_LIMITS)
    expect(updateLimits(config({ archive_bytes: 1000 })).archive_bytes).toBe(1000)
    expect(DEFAULT_UPDATE_LIMITS.registry_bytes).toBe(32 * 1024 * 1024)
    expect(updateLimits(config({ registry_bytes: 4096 })).registry_bytes).toBe(4096)
  })

  it.each([
    [{ archive_byte: 1 }, 'unknown update limit'],
    [{ ratio: 0 }, 'positive whole number'],
    [{ entries: 1.5 }, 'positive whole number'],
    [{ checksums_bytes: '1' }, 'positive whole number'],
  ])('refuses %j with E_CONFIG', (limits, message) => {
    expect(() => updateLimits(config(limits))).toThrow(message)
    try {
      updateLimits(config(limits))
    } catch (error) {
      expect(error).toMatchObject({ code: 'E_CONFIG', details: { allowed: expect.anything() } })
    }
  })
})
