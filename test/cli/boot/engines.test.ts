import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { envelopeViolations, type Sandbox } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { FRAMEWORK_NODE_RANGE, inFrameworkRange, satisfiesRange, unmetEngines } from '../../../src/boot/engines.js'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { editJson, useToolCopy } from '../../support/copy.js'
import { env, ROOT, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'

const box = useSandbox({ ownCodeCache: true })
const copy = useToolCopy()
// The system Node (v20) is older than the range agentcli supports; the suite itself runs on the pinned Node 24.
const OLD_NODE = '/usr/bin/node'
const oldVersion = spawnSync(OLD_NODE, ['--version'], { encoding: 'utf8' }).stdout.trim().slice(1)

function runWith(node: string, bin: string, args: string[], b: Sandbox, nodeFlags: string[] = []) {
  const run = spawnSync(node, [...nodeFlags, bin, ...args], {
    env: { PATH: process.env.PATH ?? '', NO_COLOR: '1', ...b.env },
    encoding: 'utf8',
    timeout: 20_000,
  })
  let json: unknown
  try {
    json = JSON.parse(run.stdout)
  } catch {}
  return { code: run.status, stdout: run.stdout, stderr: run.stderr, json }
}

/** Every file under the sandbox, with its size and mtime: proof that nothing was written. */
function files(root: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      const s = statSync(p)
      if (s.isDirectory()) walk(p)
      else out.push(`${p}:${s.size}:${s.mtimeMs}`)
    }
  }
  if (existsSync(root)) walk(root)
  return out.sort()
}

describe('the Node engine check at start', () => {
  it('the framework range is the one package.json declares', () => {
    const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    expect(pjson.engines.node).toBe(FRAMEWORK_NODE_RANGE)
    expect(satisfiesRange(oldVersion, FRAMEWORK_NODE_RANGE)).toBe(false)
    expect(satisfiesRange(process.versions.node, FRAMEWORK_NODE_RANGE)).toBe(true)
  })

  it('on an older Node the example answers one E_CONFIG envelope naming the Node it needs, and writes nothing', () => {
    const b = box()
    const before = files(b.root)
    const run = runWith(OLD_NODE, TASKS_BIN, ['list'], b)
    expect(run.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    const error = (run.json as { error: { code: string; message: string; details: Record<string, unknown> } }).error
    expect(error.code).toBe('E_CONFIG')
    expect(error.message).toContain(FRAMEWORK_NODE_RANGE)
    expect(error.message).toContain(oldVersion)
    expect(error.details).toMatchObject({ allowed: [FRAMEWORK_NODE_RANGE], got: oldVersion })
    expect(files(b.root)).toEqual(before)
  })

  it('with a code cache present and a confirm token in hand, the old Node neither crashes nor consumes the token', async () => {
    const b = box()
    // A run on the supported Node leaves the bundle's code cache behind (the crash needed one) and a token.
    const token = env(await tasks(b, ['create', '--title', 'kept', '--dry-run'])).data.confirm_token
    const cacheDir = join(b.env.XDG_CACHE_HOME!, 'agentcli', 'code-cache')
    expect(readdirSync(cacheDir).length).toBeGreaterThan(0)
    const before = files(b.root)
    const old = runWith(OLD_NODE, TASKS_BIN, ['create', '--title', 'kept', '--confirm', token], b)
    expect(old.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(old.stdout).not.toContain('dynamic import callback')
    expect(old.stderr).not.toContain('dynamic import callback')
    expect(envelopeViolations(old.stdout, old.code)).toEqual([])
    expect(files(b.root)).toEqual(before)
    // The token was not used up: the same confirm on the supported Node applies the write.
    const ok = await tasks(b, ['create', '--title', 'kept', '--confirm', token])
    expect(env(ok).ok, ok.stdout).toBe(true)
  })

  it('a Node too old to have process.getBuiltinModule (< 20.16, < 22.3) gets the envelope too, not a TypeError', () => {
    const b = box()
    const run = runWith(OLD_NODE, TASKS_BIN, ['list'], b, [
      '--import',
      'data:text/javascript,delete process.getBuiltinModule',
    ])
    expect(run.stderr).not.toContain('TypeError')
    expect(run.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect((run.json as { error: { code: string } }).error.code).toBe('E_CONFIG')
    expect(files(b.root)).toEqual([])
  })

  it("a tool's own engines.node is enforced too, even on a Node the framework supports", () => {
    const dir = copy('examples/tasks', (d) =>
      editJson(join(d, 'package.json'), (p) => {
        p.engines = { node: '>=99' }
      }),
    )
    const run = runWith(process.execPath, join(dir, 'bin/run.js'), ['list', '--compact'], box())
    expect(run.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(run.stdout.trimEnd().split('\n')).toHaveLength(1)
    expect((run.json as { error: { details: { allowed: string[] } } }).error.details.allowed).toEqual(['>=99'])
  })

  it('the precomputed framework bounds agree with the range on every nearby version', () => {
    for (let major = 16; major <= 32; major++)
      for (let minor = 0; minor <= 30; minor++)
        for (const patch of [0, 1, 2, 3, 9]) {
          const v = `${major}.${minor}.${patch}`
          expect(inFrameworkRange(v), v).toBe(satisfiesRange(v, FRAMEWORK_NODE_RANGE))
        }
  })

  it('the range matcher reads what npm writes', () => {
    const cases: Array<[string, string, boolean]> = [
      ['22.22.2', '^22.22.2 || ^24.15.0 || >=26', true],
      ['22.22.1', '^22.22.2 || ^24.15.0 || >=26', false],
      ['23.0.0', '^22.22.2 || ^24.15.0 || >=26', false],
      ['24.21.0', '^22.22.2 || ^24.15.0 || >=26', true],
      ['26.0.0', '^22.22.2 || ^24.15.0 || >=26', true],
      ['20.20.2', '>=20 <21', true],
      ['21.0.0', '>=20 <21', false],
      ['18.1.0', '~18.1', true],
      ['18.2.0', '~18.1', false],
      ['20.5.0', '20.x', true],
      ['21.0.0', '20', false],
      ['20.0.0', '18 - 20', true],
      ['20.9.9', '18 - 20.9', true],
      ['20.10.0', '18 - 20.9', false],
      ['0.0.3', '^0.0.3', true],
      ['0.0.4', '^0.0.3', false],
      ['24.0.0', '*', true],
      ['24.0.0', '>24', false],
      ['24.0.1', '>24.0.0', true],
      ['24.9.9', '<=24', true],
    ]
    for (const [version, range, expected] of cases)
      expect(satisfiesRange(version, range), `${version} in ${range}`).toBe(expected)
    expect(() => satisfiesRange('24.0.0', 'latest')).toThrow(/unsupported range/)
    expect(unmetEngines('latest', '24.21.0')).toEqual([])
    expect(unmetEngines('>=25', '24.15.0')).toEqual(['>=25'])
    expect(unmetEngines(undefined, '20.0.0')).toEqual([FRAMEWORK_NODE_RANGE])
  })

  it('is cheap: well under a tenth of a millisecond per start', () => {
    const started = performance.now()
    for (let i = 0; i < 1000; i++) unmetEngines('^22.22.2 || ^24.15.0 || >=26', '24.21.0')
    expect((performance.now() - started) / 1000).toBeLessThan(0.1)
  })
})
