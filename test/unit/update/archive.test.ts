import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { afterAll, describe, expect, it } from 'vitest'
import { extractRelease, verifyInstalled } from '../../../src/update/archive.js'
import { DEFAULT_UPDATE_LIMITS, type UpdateLimits } from '../../../src/update/limits.js'
import { ROOT } from '../../support/helpers.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-archive-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

const GiB = 2 ** 30
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex')

/** A tar header block for `path` (the release's top directory is `tasks/`, stripped on extraction). */
async function header(path: string, size: number, type = 'File', linkpath?: string): Promise<Buffer> {
  const { Header } = await import('tar')
  const block = Buffer.alloc(512)
  new Header({
    path,
    mode: type === 'Directory' ? 0o755 : 0o644,
    size,
    type: type as never,
    mtime: new Date(0),
    ...(linkpath ? { linkpath } : {}),
  }).encode(block)
  return block
}

const pad = (data: Buffer) => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)])

/** A gzipped tar of these entries, written to a file of its own; its path and verified digest. */
async function archive(
  name: string,
  entries: Array<{ path: string; data?: Buffer; type?: string; linkpath?: string }>,
): Promise<{ path: string; sha256: string }> {
  const blocks: Buffer[] = []
  for (const e of entries) {
    blocks.push(await header(e.path, e.data?.length ?? 0, e.type, e.linkpath))
    if (e.data) blocks.push(pad(e.data))
  }
  blocks.push(Buffer.alloc(1024))
  const bytes = gzipSync(Buffer.concat(blocks))
  const path = join(work, `${name}.tar.gz`)
  writeFileSync(path, bytes)
  return { path, sha256: sha256(bytes) }
}

/**
 * A real compression bomb, made in milliseconds: one entry that declares and holds `size` zero bytes, as a
 * multi-member gzip (each member 1 MiB of zeros, compressed once and repeated; gunzip reads the members as one
 * stream). `size` GiB of content in about `size` MiB of archive.
 */
async function bomb(name: string, size = GiB): Promise<{ path: string; sha256: string }> {
  const mib = gzipSync(Buffer.alloc(2 ** 20), { level: 9 })
  const parts = [gzipSync(Buffer.concat([await header('tasks/', 0, 'Directory'), await header('tasks/big.bin', size)]))]
  for (let i = 0; i < size / 2 ** 20; i++) parts.push(mib)
  parts.push(gzipSync(Buffer.alloc(1024)))
  const bytes = Buffer.concat(parts)
  const path = join(work, `${name}.tar.gz`)
  writeFileSync(path, bytes)
  return { path, sha256: sha256(bytes) }
}

/** A fresh install root with a `versions/` directory and a current version. */
function installRoot(): string {
  const root = mkdtempSync(join(work, 'root-'))
  mkdirSync(join(root, 'versions', '1.0.0'), { recursive: true })
  symlinkSync('versions/1.0.0', join(root, 'current'))
  return root
}

const release = (a: { path: string; sha256: string }, limits: Partial<UpdateLimits> = {}) => ({
  ...a,
  name: 'tasks-v2.0.0-linux-x64.tar.gz',
  limits: { ...DEFAULT_UPDATE_LIMITS, ...limits },
})

const failure = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (error) {
    return error as { code: string; message: string; details: Record<string, unknown> }
  }
  throw new Error('expected a failure')
}

/** The version directory holds nothing but the installed version (no partial or old leftovers). */
const versionsOf = (root: string) => readdirSync(join(root, 'versions')).sort()

const GOOD = [
  { path: 'tasks/', type: 'Directory' },
  { path: 'tasks/package.json', data: Buffer.from('{"version":"2.0.0"}\n') },
  { path: 'tasks/bin/run.js', data: Buffer.from('console.log(1)\n') },
  { path: 'tasks/skills/tasks/SKILL.md', data: Buffer.from('---\nname: tasks\n---\nUse it.\n') },
  { path: 'tasks/empty.txt', data: Buffer.alloc(0) },
]

describe('extractRelease', () => {
  it('installs exactly what the archive holds, verified as installed', async () => {
    const root = installRoot()
    const dir = await extractRelease(release(await archive('good', GOOD)), root, '2.0.0')
    expect(dir).toBe(join(root, 'versions', '2.0.0'))
    expect(readFileSync(join(dir, 'skills/tasks/SKILL.md'), 'utf8')).toContain('Use it.')
    expect(readFileSync(join(dir, 'empty.txt')).length).toBe(0)
    expect(versionsOf(root)).toEqual(['1.0.0', '2.0.0'])
  })

  it('refuses bytes that are not the verified ones (the file changed after its digest was checked)', async () => {
    const root = installRoot()
    const good = await archive('changed', GOOD)
    const error = await failure(extractRelease(release({ ...good, sha256: 'ab'.repeat(32) }), root, '2.0.0'))
    expect(error).toMatchObject({ code: 'E_INTEGRITY', details: { reason: 'checksum_mismatch', stage: 'extract' } })
    expect(versionsOf(root)).toEqual(['1.0.0'])
  })

  it('never writes links, and refuses entries that leave the directory or that it cannot make', async () => {
    const root = installRoot()
    const linked = await archive('links', [
      ...GOOD,
      { path: 'tasks/escape', type: 'SymbolicLink', linkpath: '/etc' },
      { path: 'tasks/hard', type: 'Link', linkpath: 'tasks/package.json' },
    ])
    const dir = await extractRelease(release(linked), root, '2.0.0')
    expect(existsSync(join(dir, 'escape'))).toBe(false)
    expect(existsSync(join(dir, 'hard'))).toBe(false)
    for (const [name, entry] of [
      ['dotdot', { path: 'tasks/../../outside.txt', data: Buffer.from('x') }],
      ['fifo', { path: 'tasks/pipe', type: 'FIFO' }],
      ['chardev', { path: 'tasks/null', type: 'CharacterDevice' }],
    ] as const) {
      const other = installRoot()
      const error = await failure(extractRelease(release(await archive(name, [...GOOD, entry])), other, '2.0.0'))
      expect(error.code, name).toBe('E_IO')
      expect(error.details).toMatchObject({ stage: 'extract' })
      expect(versionsOf(other), name).toEqual(['1.0.0'])
      expect(existsSync(join(other, 'outside.txt'))).toBe(false)
    }
  })

  it('refuses a compression bomb (a 1 GiB entry in 1 MiB) from its header, before any of it is written', async () => {
    const root = installRoot()
    const bombed = await bomb('bomb')
    const error = await failure(extractRelease(release(bombed), root, '2.0.0'))
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      details: {
        reason: 'too_large',
        stage: 'extract',
        setting: 'agentcli.update.limits.entry_bytes',
        got: GiB,
        limit: DEFAULT_UPDATE_LIMITS.entry_bytes,
        name: 'tasks-v2.0.0-linux-x64.tar.gz: tasks/big.bin',
        path: bombed.path,
      },
    })
    // Under a raised entry_bytes, the same header breaks the ratio: ~1000 times the archive, 100 allowed.
    const ratio = await failure(extractRelease(release(bombed, { entry_bytes: 2 * GiB }), root, '2.0.0'))
    expect(ratio).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', setting: 'agentcli.update.limits.ratio', limit: 100 },
    })
    expect(ratio.details.got as number).toBeGreaterThan(900)
    expect(versionsOf(root)).toEqual(['1.0.0'])
  })

  it('refuses files that add up to more than ratio × the archive, or than unpacked_bytes, or too many entries', async () => {
    const root = installRoot()
    const many = await archive(
      'many',
      Array.from({ length: 20 }, (_, i) => ({ path: `tasks/f${i}.txt`, data: Buffer.alloc(100, 97) })),
    )
    const total = await failure(extractRelease(release(many, { unpacked_bytes: 1500 }), root, '2.0.0'))
    expect(total).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', setting: 'agentcli.update.limits.unpacked_bytes', limit: 1500 },
    })
    const count = await failure(extractRelease(release(many, { entries: 10 }), root, '2.0.0'))
    expect(count).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', setting: 'agentcli.update.limits.entries', limit: 10, got: 11 },
    })
    expect(versionsOf(root)).toEqual(['1.0.0'])
  })

  it('refuses the bomb with memory bounded far below it (peak RSS of a bare node under 1/8 of the entry)', () => {
    // Measured in a process of its own (the test worker's peak is everyone's). Unbounded, this took 1.2 GB. Linux
    // carries the parent's peak across fork and exec into getrusage's maxRSS, so a worker that has grown would
    // count here: VmHWM is this image's own peak.
    const script = `import { readFileSync } from 'node:fs'
import { extractRelease } from ${JSON.stringify(join(ROOT, 'dist/update/archive.js'))}
import { DEFAULT_UPDATE_LIMITS } from ${JSON.stringify(join(ROOT, 'dist/update/limits.js'))}
const [path, sha256, root, entry] = process.argv.slice(1)
const limits = { ...DEFAULT_UPDATE_LIMITS, entry_bytes: Number(entry) }
let reason = 'extracted'
try {
  await extractRelease({ path, name: 'bomb', sha256, limits }, root, '2.0.0')
} catch (error) { reason = error.details?.setting ?? String(error) }
let hwm = null
try { hwm = Number(/VmHWM:\\s+(\\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))[1]) * 1024 } catch {}
console.log(JSON.stringify({ reason, max_rss: hwm ?? process.resourceUsage().maxRSS * 1024 }))`
    return (async () => {
      const bombed = await bomb('rss')
      for (const [entry, limit] of [
        [String(DEFAULT_UPDATE_LIMITS.entry_bytes), 'agentcli.update.limits.entry_bytes'],
        [String(2 * GiB), 'agentcli.update.limits.ratio'],
      ]) {
        const run = spawnSync(
          process.execPath,
          ['--input-type=module', '-e', script, bombed.path, bombed.sha256, installRoot(), entry!],
          { encoding: 'utf8' },
        )
        expect(run.status, run.stderr).toBe(0)
        const out = JSON.parse(run.stdout) as { reason: string; max_rss: number }
        expect(out.reason).toBe(limit)
        expect(out.max_rss).toBeLessThan(GiB / 8)
      }
    })()
  }, 60_000)
})

describe('verifyInstalled: what is on disk must be what the archive holds', () => {
  async function installed() {
    const root = installRoot()
    const dir = await extractRelease(release(await archive('verify', GOOD)), root, '2.0.0')
    const files = new Map(
      GOOD.filter((e) => e.data).map((e) => [
        e.path.replace(/^tasks\//, ''),
        { size: e.data!.length, sha256: sha256(e.data!) },
      ]),
    )
    return { dir, files }
  }

  it('passes the install as extracted', async () => {
    const { dir, files } = await installed()
    await verifyInstalled(dir, files)
  })

  it.each([
    [
      'a truncated file (a full disk)',
      (dir: string) => truncateSync(join(dir, 'skills/tasks/SKILL.md'), 0),
      'SKILL.md',
    ],
    [
      'a file with other bytes of the same size',
      (dir: string) => writeFileSync(join(dir, 'bin/run.js'), 'console.log(2)\n'),
      'run.js',
    ],
    ['a longer file', (dir: string) => appendFileSync(join(dir, 'package.json'), ' '), 'package.json'],
    ['a missing file', (dir: string) => rmSync(join(dir, 'package.json')), 'package.json'],
    ['a file the archive does not have', (dir: string) => writeFileSync(join(dir, 'extra.js'), ''), 'extra.js'],
    [
      'a link in place of a file',
      (dir: string) => {
        rmSync(join(dir, 'bin/run.js'))
        symlinkSync('/etc/hostname', join(dir, 'bin/run.js'))
      },
      'run.js',
    ],
  ])('refuses %s, naming it', async (_, damage, file) => {
    const { dir, files } = await installed()
    damage(dir)
    const error = await failure(verifyInstalled(dir, files))
    expect(error).toMatchObject({ code: 'E_IO', details: { reason: 'install_mismatch', stage: 'extract' } })
    expect(String(error.details.path)).toMatch(new RegExp(`^${dir}/.*${file.replace('.', '\\.')}$`))
  })
})

/** Mount a tmpfs of `size` at a new directory (root only); undefined where mounting is not possible. */
function tmpfs(size: string): { dir: string; unmount(): void } | undefined {
  if (process.getuid?.() !== 0) return undefined
  const dir = mkdtempSync(join(work, 'tmpfs-'))
  if (spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]).status !== 0) return undefined
  return {
    dir,
    unmount: () => {
      spawnSync('umount', [dir])
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Whether this run may mount (as root, where the kernel lets it): the real disk-full test needs it. */
const CAN_MOUNT = (() => {
  const probe = tmpfs('64k')
  probe?.unmount()
  return probe !== undefined
})()

describe.runIf(CAN_MOUNT)('a full disk, for real (a small tmpfs)', () => {
  it('fails the extraction with E_IO naming the file (ENOSPC), and leaves no partial version', async () => {
    const mount = tmpfs('256k')
    expect(mount, 'mount -t tmpfs failed').toBeDefined()
    try {
      const root = join(mount!.dir, 'install')
      mkdirSync(join(root, 'versions', '1.0.0'), { recursive: true })
      symlinkSync('versions/1.0.0', join(root, 'current'))
      // 1 MiB of random bytes (incompressible, under every limit) cannot fit in 256 KiB.
      const big = await archive('full', [
        ...GOOD,
        { path: 'tasks/dist/bundle.cjs', data: Buffer.from(randomish(2 ** 20)) },
      ])
      const error = await failure(extractRelease(release(big), root, '2.0.0'))
      expect(error).toMatchObject({ code: 'E_IO', details: { stage: 'extract', errno: 'ENOSPC' } })
      expect(String(error.details.path)).toMatch(/versions\/2\.0\.0(\/|$)/)
      expect(String(error.details.fix)).toMatch(/free space/)
      expect(readdirSync(join(root, 'versions'))).toEqual(['1.0.0'])
    } finally {
      mount!.unmount()
    }
  })
})

/** Bytes that do not compress (a counter through SHA-256). */
function randomish(n: number): Buffer {
  const out = Buffer.alloc(n)
  for (let i = 0; i < n; i += 32) createHash('sha256').update(String(i)).digest().copy(out, i)
  return out
}
