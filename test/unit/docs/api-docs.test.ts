import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

type Exports = Record<string, string | { types: string; default: string }>
const EXPORTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Exports }).exports
/** Every entry point of the package, as `exports` in package.json lists them (their sources). */
const ENTRIES = Object.values(EXPORTS)
  .filter((target) => typeof target === 'object')
  .map((target) => target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'))

type ApiDoc = { markdown: string; undocumented: string[] }

/**
 * `buildApiDoc(root)` of scripts/api-doc.mjs, in a worker thread of this process: the same function on the same files,
 * but the TypeScript compiler it drives runs outside the test worker's V8 coverage (the gated tier collects it), which
 * counts every block the compiler runs and made the call ≈ 3× slower (3 s → 10 s alone; 24–29 s in the tier under
 * load, the tier's last file to finish).
 */
function buildApiDoc(root: string): Promise<ApiDoc> {
  const code = `const { parentPort, workerData } = require('node:worker_threads')
import(workerData.script).then((m) => parentPort.postMessage(m.buildApiDoc(workerData.root)))`
  const worker = new Worker(code, {
    eval: true,
    workerData: { script: pathToFileURL(join(ROOT, 'scripts/api-doc.mjs')).href, root },
  })
  return new Promise((resolve, reject) => {
    worker.once('message', (doc: ApiDoc) => resolve(doc))
    worker.once('error', reject)
    worker.once('exit', (code) => reject(new Error(`the api-doc worker exited (${code}) without an answer`)))
  })
}

describe('the public API', () => {
  // One program for both checks: reading the entry points with the compiler takes seconds.
  const api = () => {
    built ??= buildApiDoc(ROOT)
    return built
  }
  let built: Promise<ApiDoc> | undefined

  it('has JSDoc on every export of every entry point, and on every member docs/api.md shows', async () => {
    expect((await api()).undocumented).toEqual([])
  }, 60_000)

  it('matches docs/api.md (`npm run api-doc` rewrites it)', async () => {
    expect(readFileSync(join(ROOT, 'docs/api.md'), 'utf8')).toBe((await api()).markdown)
  }, 60_000)

  it('lists every entry point and every export of each in docs/api.md', async () => {
    const { markdown } = await api()
    for (const entry of ENTRIES) expect(markdown).toContain(`\`${entry}\``)
    for (const key of Object.keys(EXPORTS).filter((k) => k !== './package.json')) {
      const name = key.replace(/^\./, 'agentcli')
      const section = markdown.split(`\n## ${name}\n`)[1]?.split('\n## ')[0] ?? ''
      for (const exported of Object.keys(await import(name)))
        expect(section, `${name}: ${exported}`).toContain(`\n### ${exported}\n`)
    }
  }, 60_000)

  it('has every anchor that the README and the docs link to in docs/api.md', () => {
    const page = readFileSync(join(ROOT, 'docs/api.md'), 'utf8')
    const seen = new Map<string, number>()
    const anchors = new Set<string>()
    // GitHub's slugs: lower case, punctuation dropped, spaces as dashes, a repeat numbered from -1.
    for (const [, heading] of page.matchAll(/^#{1,6} (.+)$/gm)) {
      const base = heading!
        .toLowerCase()
        .replace(/[^a-z0-9 _-]/g, '')
        .replace(/ /g, '-')
      const n = seen.get(base) ?? 0
      seen.set(base, n + 1)
      anchors.add(n === 0 ? base : `${base}-${n}`)
    }
    const sources = ['README.md', 'docs/api.md', ...readdirSync(join(ROOT, 'docs/guide')).map((f) => `docs/guide/${f}`)]
    const links = sources.flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\]\((?:\.\.\/)?(?:api\.md)?#([\w-]+)\)/g)]
        .filter((m) => file === 'docs/api.md' || m[0].includes('api.md'))
        .map((m) => `${file}: #${m[1]}`),
    )
    expect(links.length).toBeGreaterThan(100)
    expect(links.filter((link) => !anchors.has(link.split('#')[1]!))).toEqual([])
  })

  it('names an export or a member without JSDoc, and renders members, signatures and examples', async () => {
    const root = mkdtempSync(join(tmpdir(), 'api-doc-'))
    try {
      mkdirSync(join(root, 'src'))
      writeFileSync(
        join(root, 'package.json'),
        JSON.stringify({ name: 'demo', exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' } } }),
      )
      writeFileSync(
        join(root, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { strict: true }, include: ['src'] }),
      )
      writeFileSync(
        join(root, 'src/index.ts'),
        [
          '/** Options of a call. */',
          'export type Options = {',
          '  /** Documented. */',
          '  body?: unknown',
          '  headers: Record<string, string>',
          '}',
          '/**',
          ' * Greets.',
          ' * @example',
          " * greet('you')",
          ' */',
          'export function greet(name: string, options?: Options): string { return name }',
          'export const bare = 1',
          '',
        ].join('\n'),
      )
      const { markdown, undocumented } = await buildApiDoc(root)
      expect(undocumented).toEqual(['demo: bare (src/index.ts:13)', 'demo: Options.headers (src/index.ts:5)'])
      expect(markdown).toContain('- `body?: unknown` — Documented.')
      expect(markdown).toContain('- `headers: Record<string, string>`\n')
      expect(markdown).toContain('function greet(name: string, options?: Options): string')
      expect(markdown).toContain("**Example**\n\n```ts\ngreet('you')\n```")
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }, 60_000)

  it('shortens a long union to its first members and says how many it left out', async () => {
    const { shorten } = await import(join(ROOT, 'scripts/api-doc.mjs'))
    const union = Array.from({ length: 30 }, (_, i) => `'value_${i}'`).join(' | ')
    const short = shorten(`code: ${union}`) as string
    expect(short).toMatch(/^code: 'value_0' \| 'value_1' \| .* \| … \(\d+ more\)$/)
    expect(short.length).toBeLessThan(130)
    expect(shorten('a: string')).toBe('a: string')
  })

  it('is small: at most 6 entry points, none of them internal, at most 70 runtime exports in all', async () => {
    const entries = Object.keys(EXPORTS).filter((key) => key !== './package.json')
    expect(entries).toEqual(['.', './boot', './testing', './builtins'])
    let count = 0
    for (const entry of entries) count += Object.keys(await import(entry.replace(/^\./, 'agentcli'))).length
    expect(count).toBeLessThanOrEqual(70)
  })

  it('keeps the built-ins’ internals off the main entry point', async () => {
    const api = await import('agentcli')
    for (const name of [
      'envPrefix',
      'readToolSettings',
      'GLOBAL_FLAGS',
      'WRITE_FLAGS',
      'CORE_CATALOGUE',
      'dryRunSchema',
    ])
      expect(api, name).not.toHaveProperty(name)
  })

  it('has no static a command declares but nothing reads', async () => {
    const { AgentCommand } = await import('agentcli')
    expect(AgentCommand).not.toHaveProperty('interruptible')
  })
})
