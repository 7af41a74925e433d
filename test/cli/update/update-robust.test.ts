import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { runTool, type Sandbox, type ToolRun } from 'agentcli/testing'
import { delay } from 'msw'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { alive, env, ROOT, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { attestationsFor, provenanceStatement, serveNpmPackage, sha512 } from '../../support/npm-provenance.js'
import { makeInstall, makeReleases, snapshot } from '../../support/release.js'
import { stalledAsset } from '../../support/update-kit.js'
import {
  type Assets,
  api,
  authority,
  confirmUpdate,
  identityFor,
  type Release,
  rootFile,
  serveRelease,
  signedAssets,
  updateEnv,
  useUpdateWorld,
} from '../../support/update-world.js'

const box = useSandbox()
useUpdateWorld('trusted-root-robust')
const PKG = 'tasks-example'
/** The npm tarball of 0.2.0: npm is a stub here, so any bytes do, as long as the provenance is about them. */
const TARBALL = randomBytes(4096)
const CHANGED = ['install_changed', 'state_drift']

let good: Release
let install: ReturnType<typeof makeInstall>
const broken: Record<string, Release> = {}

/** A release signed correctly by the mock authority for the v0.2.0 workflow identity. */
const signed = (r: Release): Promise<Assets> => signedAssets(r, identityFor('v0.2.0'))
const toolEnv = (b: Sandbox) => updateEnv(b.env)

/** A standalone install at 0.1.0 that pins the mock authority's trusted root in its package.json. */
const freshInstall = () => makeInstall({ trusted_root: rootFile })

function tool(b: Sandbox, args: string[]): Promise<ToolRun> {
  return runTool(install.bin, args, { env: toolEnv(b) })
}

/** A dry run, which needs no process of its own (only its token and code are used), made in-process. */
const inProcess = (b: Sandbox, args: string[]): Promise<ToolRun> =>
  runBinInProcess(install.bin, args, { env: toolEnv(b) })

/** A dry run in-process for its token, then the confirm, which installs or rolls back, by the real bin. */
const confirmed = (b: Sandbox, flags: string[] = []): Promise<ToolRun> =>
  confirmUpdate((args) => (args.includes('--dry-run') ? inProcess(b, args) : tool(b, args)), flags)

/** Declare update timeouts in the installed version's package.json (what a tool author would ship). */
function setTimeouts(versionDir: string, timeouts: Record<string, number>): void {
  const path = join(versionDir, 'package.json')
  const pjson = JSON.parse(readFileSync(path, 'utf8'))
  pjson.agentcli.update.timeouts = timeouts
  writeFileSync(path, JSON.stringify(pjson, null, 2))
}

/**
 * The invariant of an install: the tool runs and reports one version, which is the version `current` points
 * at (and the launcher agrees); `previous`, when present, is a complete version; nothing half-done is left.
 */
async function coherentVersion(b: Sandbox, root: string): Promise<string> {
  const run = await tool(b, ['--version'])
  expect(run.code, run.stdout + run.stderr).toBe(0)
  const version = env(run).data.version
  const current = realpathSync(join(root, 'current'))
  expect(JSON.parse(readFileSync(join(current, 'package.json'), 'utf8')).version).toBe(version)
  expect(current).toBe(join(realpathSync(root), 'versions', version))
  if (existsSync(join(root, 'previous'))) {
    const previous = realpathSync(join(root, 'previous'))
    expect(existsSync(join(previous, 'bin', 'run.js'))).toBe(true)
    expect(existsSync(join(previous, 'dist'))).toBe(true)
  }
  return version
}

function leftovers(root: string): string[] {
  const top = readdirSync(root).filter((n) => n === '.staging' || n.startsWith('update.lock'))
  const partial = readdirSync(join(root, 'versions')).filter((n) => n.startsWith('.'))
  return [...top, ...partial.map((n) => `versions/${n}`)]
}

beforeAll(async () => {
  // One build of 0.2.0, packed five ways: as built, and broken in each way an update must survive.
  const releases = await makeReleases('0.2.0', {
    good: undefined,
    no_bin: (dir) => rmSync(join(dir, 'bin'), { recursive: true }),
    wrong_version: (dir) => {
      const path = join(dir, 'package.json')
      writeFileSync(path, JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), version: '0.3.0' }))
    },
    crashes: (dir) => writeFileSync(join(dir, 'bin', 'run.js'), "throw new Error('boom')\n"),
    hangs: (dir) => writeFileSync(join(dir, 'bin', 'run.js'), 'setInterval(() => {}, 1000)\n'),
  })
  good = releases.good
  broken.no_bin = releases.no_bin
  broken.wrong_version = releases.wrong_version
  broken.crashes = releases.crashes
  broken.hangs = releases.hangs
}, 120_000)
beforeEach(() => {
  install = freshInstall()
})
afterEach(() => install.cleanup())

describe('concurrent updates of one install', () => {
  it('N parallel confirms: one wins, the rest are E_CONFLICT; the tool, previous and rollback stay intact', async () => {
    serveRelease('v0.2.0', await signed(good))
    const N = 4
    // One round of the two races (updates, then rollbacks): rounds were the same races from the same start (a
    // fresh install), and the three losers of each already wait on the install lock and find the install changed
    // under it, where every loser of repeated rounds landed too.
    const tokens = await Promise.all(
      Array.from({ length: N }, async () => env(await inProcess(box(), ['update', '--dry-run'])).data.confirm_token),
    )
    const runs = await Promise.all(tokens.map((t) => tool(box(), ['update', '--confirm', t])))
    const ok = runs.filter((r) => r.code === 0)
    const why = runs.map((r) => `${r.code} ${r.stdout}`).join('\n')
    expect(ok, why).toHaveLength(1)
    expect(env(ok[0]!).data).toMatchObject({ previous_version: '0.1.0', current_version: '0.2.0' })
    // A loser finds the install changed: under the lock (install_changed), or already when its confirm
    // re-plans and the plan no longer matches its token (state_drift). Either way it changed nothing.
    for (const lost of runs.filter((r) => r.code !== 0)) {
      expect(lost.code, why).toBe(6)
      expect(env(lost).error.code).toBe('E_CONFLICT')
      expect(CHANGED, why).toContain(env(lost).error.details.reason)
    }
    expect(await coherentVersion(box(), install.root)).toBe('0.2.0')
    expect(readlinkSync(join(install.root, 'previous'))).toBe('versions/0.1.0')
    expect(readdirSync(join(install.root, 'versions')).sort()).toEqual(['0.1.0', '0.2.0'])
    expect(leftovers(install.root)).toEqual([])

    // Parallel rollbacks: again exactly one switch.
    const backTokens = await Promise.all(
      Array.from(
        { length: N },
        async () => env(await inProcess(box(), ['update', '--rollback', '--dry-run'])).data.confirm_token,
      ),
    )
    const backs = await Promise.all(backTokens.map((t) => tool(box(), ['update', '--rollback', '--confirm', t])))
    expect(
      backs.filter((r) => r.code === 0),
      backs.map((r) => r.stdout).join('\n'),
    ).toHaveLength(1)
    for (const lost of backs.filter((r) => r.code !== 0)) {
      expect(env(lost).error.code).toBe('E_CONFLICT')
      expect(CHANGED).toContain(env(lost).error.details.reason)
    }
    expect(await coherentVersion(box(), install.root)).toBe('0.1.0')
    expect(readlinkSync(join(install.root, 'previous'))).toBe('versions/0.2.0')
    // Updating to the version `previous` points at replaces that directory safely; rollback still works.
    const again = await confirmed(box())
    expect(again.code, again.stdout).toBe(0)
    expect(await coherentVersion(box(), install.root)).toBe('0.2.0')
    expect(readlinkSync(join(install.root, 'previous'))).toBe('versions/0.1.0')
    expect((await confirmed(box(), ['--rollback'])).code).toBe(0)
    expect(await coherentVersion(box(), install.root)).toBe('0.1.0')
  }, 240_000)
})

describe('a signed release that cannot start is refused before the switch', () => {
  const cases = [
    ['no bin/', 'no_bin', 'bin_missing'],
    ['package.json says another version', 'wrong_version', 'package_version'],
    ['bin/run.js crashes', 'crashes', 'smoke_run'],
    ['bin/run.js never answers', 'hangs', 'smoke_run'],
  ] as const
  it.each(cases)('%s → E_INTEGRITY release_broken (%s), install untouched', async (_, key, check) => {
    setTimeouts(join(install.root, 'versions', '0.1.0'), { smoke_ms: 2_000 })
    serveRelease('v0.2.0', await signed(broken[key]!))
    const dry = await inProcess(box(), ['update', '--dry-run'])
    expect(dry.code, dry.stdout).toBe(0)
    const before = snapshot(install.root)
    const started = Date.now()
    const run = await tool(box(), ['update', '--confirm', env(dry).data.confirm_token])
    expect(run.code, run.stdout).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_INTEGRITY',
      retryable: false,
      details: { reason: 'release_broken', check, stage: 'smoke_test', binary_replaced: false },
    })
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(snapshot(install.root)).toEqual(before)
    expect(await coherentVersion(box(), install.root)).toBe('0.1.0')
  })
})

describe('the smoke run of a good release', () => {
  it("passes whatever the person's output default is (<BIN>_FORMAT=text)", async () => {
    serveRelease('v0.2.0', await signed(good))
    const dry = await inProcess(box(), ['update', '--dry-run'])
    const run = await runTool(install.bin, ['update', '--confirm', env(dry).data.confirm_token], {
      env: { ...toolEnv(box()), TASKS_FORMAT: 'text' },
    })
    expect(run.code, run.stdout + run.stderr).toBe(0)
    expect(await coherentVersion(box(), install.root)).toBe('0.2.0')
  })
})

describe('every step of an update is bounded', () => {
  /**
   * An npm global layout of the example (pinning the mock root, as the install it is copied from does) with a
   * stub `npm` on PATH, and a loopback registry whose 0.2.0 carries a valid provenance attestation, so that an
   * update gets through verification to the npm step under test. The tool's temp dir is the layout's own.
   */
  async function npmLayout(script: (pidFile: string) => string) {
    const attestations = await attestationsFor(
      authority,
      provenanceStatement(`pkg:npm/${PKG}@0.2.0`, TARBALL),
      identityFor('v0.2.0'),
    )
    const registry = serveNpmPackage(api, { name: PKG, version: '0.2.0', tarball: TARBALL, attestations })
    const base = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-install-npm-'))
    const prefix = join(base, 'prefix')
    const pkg = join(prefix, 'lib', 'node_modules', 'tasks-example')
    cpSync(join(install.root, 'versions', '0.1.0'), pkg, { recursive: true })
    const stubs = join(base, 'stubs')
    mkdirSync(stubs)
    const pidFile = join(base, 'npm.pid')
    const tmp = join(base, 'tmp')
    mkdirSync(tmp)
    writeFileSync(join(stubs, 'npm'), `#!/bin/sh\n${script(pidFile).replaceAll('PREFIX', prefix)}`, { mode: 0o755 })
    const settings = () => ({
      ...box().env,
      PATH: `${stubs}:${process.env.PATH}`,
      TMPDIR: tmp,
      TASKS_UPDATE_API_URL: api.url,
      TASKS_NPM_REGISTRY: registry,
      TASKS_HTTP_RETRIES: '0',
    })
    const run = (args: string[]) => runTool(join(pkg, 'bin', 'run.js'), args, { env: settings() })
    /** A dry run (only its token is used), in-process: its npm prefix is asked with the same PATH. */
    const dryRun = (args: string[]) => runBinInProcess(join(pkg, 'bin', 'run.js'), args, { env: settings() })
    const pid = () => (existsSync(pidFile) ? Number(readFileSync(pidFile, 'utf8')) : undefined)
    return {
      pkg,
      run,
      dryRun,
      pid,
      /** What the tool left in its temp dir (the verified tarball must be gone however npm ended). */
      temp: () => readdirSync(tmp),
      cleanup() {
        const p = pid()
        if (p && alive(p)) process.kill(p, 'SIGKILL')
        rmSync(base, { recursive: true, force: true })
      },
    }
  }

  it('npm install -g that hangs is stopped at its deadline (E_TIMEOUT), and the npm it started is gone', async () => {
    serveRelease('v0.2.0', await signed(good))
    const layout = await npmLayout(
      (pidFile) => `if [ "$1" = prefix ]; then echo "PREFIX"; exit 0; fi\necho $$ > "${pidFile}"\nexec sleep 60\n`,
    )
    try {
      setTimeouts(layout.pkg, { npm_install_ms: 1_500 })
      const dry = await layout.dryRun(['update', '--dry-run'])
      expect(env(dry).data.preview.changes[0].action).toBe('npm_install')
      const started = Date.now()
      const run = await layout.run(['update', '--confirm', env(dry).data.confirm_token])
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(run.code, run.stdout).toBe(8)
      expect(env(run).error).toMatchObject({
        code: 'E_TIMEOUT',
        details: { stage: 'switch', timeout_ms: 1_500, fix: 'npm install -g tasks-example@0.2.0' },
      })
      expect(layout.pid()).toBeGreaterThan(0)
      expect(alive(layout.pid()!)).toBe(false)
      expect(layout.temp()).toEqual([])
      expect(JSON.parse(readFileSync(join(layout.pkg, 'package.json'), 'utf8')).version).toBe('0.1.0')
    } finally {
      layout.cleanup()
    }
  }, 30_000)

  it('parallel confirms of an npm install run npm once; the others find the install changed', async () => {
    serveRelease('v0.2.0', await signed(good))
    const layout = await npmLayout(
      () =>
        `if [ "$1" = prefix ]; then echo "PREFIX"; exit 0; fi\n` +
        // What npm was asked to install: the attested tarball the tool downloaded, by its SHA-512.
        `echo "$1 $2 $(sha512sum "$3" | cut -d' ' -f1)" >> "PREFIX/../npm.log"\nsleep 1\n` +
        `sed -i 's/"version": "0.1.0"/"version": "0.2.0"/' "PREFIX/lib/node_modules/tasks-example/package.json"\n`,
    )
    try {
      const tokens = await Promise.all(
        [0, 1, 2].map(async () => env(await layout.dryRun(['update', '--dry-run'])).data.confirm_token),
      )
      const runs = await Promise.all(tokens.map((t) => layout.run(['update', '--confirm', t])))
      const why = runs.map((r) => `${r.code} ${r.stdout}`).join('\n')
      expect(
        runs.filter((r) => r.code === 0),
        why,
      ).toHaveLength(1)
      for (const lost of runs.filter((r) => r.code !== 0))
        expect(env(lost).error, why).toMatchObject({ code: 'E_CONFLICT', details: { reason: 'install_changed' } })
      expect(
        readFileSync(join(layout.pkg, '..', '..', '..', '..', 'npm.log'), 'utf8')
          .trim()
          .split('\n'),
      ).toEqual([`install -g ${sha512(TARBALL).toString('hex')}`])
      expect(layout.temp()).toEqual([])
    } finally {
      layout.cleanup()
    }
  }, 30_000)

  it('npm prefix -g that hangs bounds update --check; the install is then reported as unknown', async () => {
    serveRelease('v0.2.0', await signed(good))
    const layout = await npmLayout((pidFile) => `echo $$ > "${pidFile}"\nexec sleep 60\n`)
    try {
      setTimeouts(layout.pkg, { npm_prefix_ms: 1_000 })
      const started = Date.now()
      const run = await layout.run(['update', '--check'])
      expect(Date.now() - started).toBeLessThan(8_000)
      expect(run.code, run.stdout).toBe(0)
      expect(env(run).data).toMatchObject({ install_method: 'unknown', update_available: true })
      expect(alive(layout.pid()!)).toBe(false)
    } finally {
      layout.cleanup()
    }
  }, 30_000)
})

/** Field 22 of /proc/<pid>/stat: the start time that, with the PID, identifies a process. */
function startTime(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]!
}

describe('the install lock', () => {
  it('held by a live process: a confirm waits for it, then answers E_TIMEOUT (retryable) with nothing changed', async () => {
    setTimeouts(join(install.root, 'versions', '0.1.0'), { lock_wait_ms: 1_500 })
    serveRelease('v0.2.0', await signed(good))
    const holder = spawn('sleep', ['60'], { stdio: 'ignore' })
    try {
      const pid = holder.pid!
      const dry = await inProcess(box(), ['update', '--dry-run'])
      writeFileSync(join(install.root, 'update.lock'), JSON.stringify({ pid, start: startTime(pid), nonce: 'x' }))
      const before = snapshot(install.root)
      const run = await tool(box(), ['update', '--confirm', env(dry).data.confirm_token])
      expect(run.code, run.stdout).toBe(8)
      expect(env(run).error).toMatchObject({
        code: 'E_TIMEOUT',
        retryable: true,
        details: { stage: 'lock', holder_pid: pid, binary_replaced: false },
      })
      expect(snapshot(install.root)).toEqual(before)
    } finally {
      holder.kill('SIGKILL')
    }
  }, 30_000)

  it('naming a live PID whose start time is not the recorded one (a reused PID): taken over at once', async () => {
    serveRelease('v0.2.0', await signed(good))
    const other = spawn('sleep', ['60'], { stdio: 'ignore' })
    try {
      writeFileSync(join(install.root, 'update.lock'), JSON.stringify({ pid: other.pid, start: '1', nonce: 'x' }))
      const run = await confirmed(box())
      expect(run.code, run.stdout).toBe(0)
      expect(await coherentVersion(box(), install.root)).toBe('0.2.0')
      expect(leftovers(install.root)).toEqual([])
      expect(alive(other.pid!)).toBe(true)
    } finally {
      other.kill('SIGKILL')
    }
  }, 30_000)
})

describe('a killed update', () => {
  it('leaves staging and its lock behind, which the next update clears before it succeeds', async () => {
    serveRelease('v0.2.0', await signed(good))
    api.use(stalledAsset(good.name, good.bytes))
    const dry = await inProcess(box(), ['update', '--dry-run'])
    const child = spawn(process.execPath, [install.bin, 'update', '--confirm', env(dry).data.confirm_token], {
      env: { PATH: process.env.PATH, ...toolEnv(box()) },
      stdio: 'ignore',
    })
    const closed = new Promise((resolve) => child.on('close', resolve))
    const deadline = Date.now() + 15_000
    while (!api.requests.some((r) => r.url.endsWith(good.name)) && Date.now() < deadline) await delay(20)
    child.kill('SIGKILL')
    await closed
    // The kill really left debris (so the next assertions prove the cleanup, not an empty start).
    expect(leftovers(install.root)).toEqual(expect.arrayContaining(['.staging', 'update.lock']))
    expect(await coherentVersion(box(), install.root)).toBe('0.1.0')

    api.reset()
    api.use(authority.handler)
    serveRelease('v0.2.0', await signed(good))
    const next = await confirmed(box())
    expect(next.code, next.stdout).toBe(0)
    expect(leftovers(install.root)).toEqual([])
    expect(await coherentVersion(box(), install.root)).toBe('0.2.0')
  }, 60_000)
})
