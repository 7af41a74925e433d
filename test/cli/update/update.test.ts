import { spawn, spawnSync } from 'node:child_process'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { runTool, type Sandbox } from 'agentcli/testing'
import { delay, HttpResponse, http } from 'msw'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import { makeInstall, makeRelease, snapshot } from '../../support/release.js'
import { schemaValidator } from '../../support/schema.js'
import {
  type Assets,
  api,
  identityFor,
  REPO,
  type Release,
  rootFile,
  serveRelease,
  signedAssets,
  updateEnv,
  useUpdateWorld,
} from '../../support/update-world.js'

const box = useSandbox()
useUpdateWorld('trusted-root')

let release: Release
let install: ReturnType<typeof makeInstall>

function goodAssets(tag = 'v0.2.0', r = release): Promise<Assets> {
  return signedAssets(r, identityFor(tag))
}

function tool(b: Sandbox, args: string[]) {
  return runTool(install.bin, args, { env: updateEnv(b.env) })
}

/** A call that needs no process of its own (a dry run for its token, --version), made in-process. */
function inProcess(b: Sandbox, args: string[]) {
  return runBinInProcess(install.bin, args, { env: updateEnv(b.env) })
}

/** A dry run in-process for its token, then the confirm, which installs or rolls back, by the real bin. */
async function confirmByBin(b: Sandbox, flags: string[] = []) {
  const dry = await inProcess(b, ['update', '--dry-run', ...flags])
  if (dry.code !== 0) return dry
  return tool(b, ['update', '--confirm', env(dry).data.confirm_token, ...flags])
}

/**
 * The invariant after any interruption: the tool runs and reports exactly one version, the one `current`
 * points at (its directory and package.json agree, and so does the launcher); `previous`, if kept, is complete.
 * The launcher runs the real bin (the bundle); the first --version, in-process, reads the modules.
 */
async function coherentVersion(b: Sandbox, where: string): Promise<string> {
  const run = await inProcess(b, ['--version'])
  expect(run.code, `${where}: ${run.stdout}${run.stderr}`).toBe(0)
  const version = env(run).data.version
  expect(['0.1.0', '0.2.0'], where).toContain(version)
  const current = realpathSync(join(install.root, 'current'))
  expect(current, where).toBe(join(realpathSync(install.root), 'versions', version))
  expect(JSON.parse(readFileSync(join(current, 'package.json'), 'utf8')).version, where).toBe(version)
  const launcher = spawnSync(join(install.root, 'bin', 'tasks'), ['--version'], {
    env: { PATH: process.env.PATH, ...b.env },
    encoding: 'utf8',
  })
  expect(JSON.parse(launcher.stdout).data.version, where).toBe(version)
  if (existsSync(join(install.root, 'previous'))) {
    const previous = realpathSync(join(install.root, 'previous'))
    expect(existsSync(join(previous, 'bin', 'run.js')), where).toBe(true)
    expect(existsSync(join(previous, 'package.json')), where).toBe(true)
  }
  return version
}

beforeAll(async () => {
  release = await makeRelease('0.2.0')
}, 60_000)
beforeEach(() => {
  install = makeInstall({ trusted_root: rootFile })
})
afterEach(() => install.cleanup())

describe('a full standalone update', () => {
  it('installs v2 next to v1, switches, syncs the skill, clears the notice; rollback restores v1', async () => {
    serveRelease('v0.2.0', await goodAssets())
    mkdirSync(join(box().root, '.claude'))
    // Only what installs or switches is the bin's run; the calls around it need no process of their own.
    await inProcess(box(), ['update', '--check'])
    const dryBefore = snapshot(install.root)
    const dry = await inProcess(box(), ['update', '--dry-run'])
    expect(env(dry).data.preview.changes.map((c: { action: string }) => c.action)).toEqual([
      'download',
      'verify_signature',
      'verify_checksum',
      'install',
      'smoke_test',
      'switch',
      'skill_sync',
      'cleanup',
    ])
    expect(snapshot(install.root)).toEqual(dryBefore)
    const done = await tool(box(), ['update', '--confirm', env(dry).data.confirm_token])
    expect(done.code, done.stdout).toBe(0)
    expect(env(done).data).toEqual({
      previous_version: '0.1.0',
      current_version: '0.2.0',
      install_method: 'standalone',
      signature_status: 'verified',
      signature_verified: true,
      checksum_verified: true,
      skill_sync_status: 'synced',
      hint: 'run "tasks changelog --since 0.1.0" to see what changed',
    })
    expect(env(await inProcess(box(), ['--version'])).data.version).toBe('0.2.0')
    expect(existsSync(join(install.root, 'versions', '0.1.0', 'package.json'))).toBe(true)
    expect(readlinkSync(join(install.root, 'previous'))).toBe('versions/0.1.0')
    const skill = readFileSync(join(box().root, '.agents', 'skills', 'tasks', 'SKILL.md'), 'utf8')
    expect(skill).toContain('min_version: "0.2.0"')
    expect(lstatSync(join(box().root, '.claude', 'skills', 'tasks')).isSymbolicLink()).toBe(true)
    expect(realpathSync(join(box().root, '.claude', 'skills', 'tasks'))).toBe(
      realpathSync(join(box().root, '.agents', 'skills', 'tasks')),
    )
    const lock = JSON.parse(readFileSync(join(box().env.XDG_STATE_HOME!, 'skills', '.skill-lock.json'), 'utf8'))
    expect(lock.skills.tasks).toMatchObject({
      source: REPO,
      skillPath: 'skills/tasks/SKILL.md',
      skillFolderHash: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    const list = await inProcess(box(), ['list'])
    expect(env(list).meta.notices).toBeUndefined()
    const changes = await inProcess(box(), ['changelog', '--since', '0.1.0'])
    expect(env(changes).data.entries.map((e: { version: string }) => e.version)).toEqual(['0.2.0'])
    const launcher = spawnSync(join(install.root, 'bin', 'tasks'), ['--version', '--compact'], {
      env: { PATH: process.env.PATH, ...box().env },
      encoding: 'utf8',
    })
    expect(JSON.parse(launcher.stdout).data.version).toBe('0.2.0')

    const ref = env(await inProcess(box(), ['reference'])).data
    const validate = schemaValidator().compile(
      ref.commands.find((c: { path: string }) => c.path === 'update').output_schema,
    )
    for (const out of [env(dry).data, env(done).data, env(await inProcess(box(), ['update', '--check'])).data])
      expect(validate(out), JSON.stringify(validate.errors)).toBe(true)
    const back = await confirmByBin(box(), ['--rollback'])
    expect(back.code, back.stdout + back.stderr).toBe(0)
    expect(env(back).data).toMatchObject({ previous_version: '0.2.0', current_version: '0.1.0' })
    expect(env(await inProcess(box(), ['--version'])).data.version).toBe('0.1.0')
  })

  it('--to installs a given version; nothing newer is E_CONFLICT', async () => {
    serveRelease('v0.2.0', await goodAssets())
    expect((await confirmByBin(box(), ['--to', '0.2.0'])).code).toBe(0)
    const again = await inProcess(box(), ['update', '--dry-run'])
    expect(again.code).toBe(6)
    expect(env(again).error.details.reason).toBe('up_to_date')
  })
})

describe('interruptions', () => {
  it('SIGINT during the download → exit 130, nothing changed, no partial version left', async () => {
    serveRelease('v0.2.0', await goodAssets())
    api.use(
      http.get(`*/assets/${release.name}`, () => {
        const stream = new ReadableStream({
          async start(controller) {
            controller.enqueue(new Uint8Array(release.bytes.subarray(0, 1000)))
            await delay(15_000)
            controller.close()
          },
        })
        return new HttpResponse(stream)
      }),
    )
    const dry = await inProcess(box(), ['update', '--dry-run'])
    const before = snapshot(install.root)
    const run = await runTool(install.bin, ['update', '--confirm', env(dry).data.confirm_token], {
      env: { ...box().env, TASKS_UPDATE_API_URL: api.url },
      onSpawn: (child) => {
        const timer = setInterval(() => {
          if (api.requests.some((r) => r.url.endsWith(release.name))) {
            clearInterval(timer)
            setTimeout(() => child.kill('SIGINT'), 100)
          }
        }, 20)
      },
    })
    expect(run.code).toBe(130)
    expect(env(run).error.code).toBe('E_INTERRUPTED')
    expect(snapshot(install.root)).toEqual(before)
  }, 30_000)

  it('SIGKILL at each stage of the install: after every kill one coherent version runs, and the next update or rollback leaves no partial install', async () => {
    serveRelease('v0.2.0', await goodAssets())
    const versions = () => readdirSync(join(install.root, 'versions'))
    const switched = () => readlinkSync(join(install.root, 'current')) === 'versions/0.2.0'
    const locked = () => readdirSync(install.root).some((n) => n.startsWith('update.lock'))
    // One kill per stage, sent when the install first shows that stage (polled every 2 ms): each leaves its own
    // debris (none, a lock, a staged download, a partial version, a complete unused one, a switch without its
    // clean-up) for the next operation to clear. Kills timed by the clock landed wherever a loaded machine happened
    // to be: twelve of them hit some stages several times, after the exit often, and could miss a short stage.
    const stages: Array<[string, (fromRequest: number) => boolean]> = [
      ['planning, before the lock', (from) => api.requests.length > from],
      ['holding the lock', locked],
      ['downloading', (from) => api.requests.slice(from).some((r) => r.url.endsWith(release.name))],
      ['extracting', () => versions().some((n) => n.startsWith('.'))],
      ['smoke-testing the new version', () => versions().includes('0.2.0')],
      ['switched, before the clean-up and the skill sync', switched],
      ['done, the lock released, not yet exited', () => switched() && !locked()],
    ]
    // A late stage may see the run exit before its kill (a loaded machine stalls this poll): counted, not required.
    let killed = 0
    for (const [trial, [stage, reached]] of stages.entries()) {
      install.cleanup()
      install = makeInstall({ trusted_root: rootFile })
      const dry = await inProcess(box(), ['update', '--dry-run'])
      const from = api.requests.length
      const child = spawn(process.execPath, [install.bin, 'update', '--confirm', env(dry).data.confirm_token], {
        env: {
          PATH: process.env.PATH,
          ...box().env,
          TASKS_UPDATE_API_URL: api.url,
        },
        stdio: 'ignore',
      })
      const closed = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on('close', (_code, signal) => resolve(signal)),
      )
      const poll = setInterval(() => {
        let now = false
        try {
          now = reached(from)
        } catch {
          // A directory or link read while the update replaces it: not there yet.
        }
        if (now) {
          clearInterval(poll)
          child.kill('SIGKILL')
        }
      }, 2)
      const signal = await closed
      clearInterval(poll)
      const where = `trial ${trial} (${stage})`
      if (signal === 'SIGKILL') killed++
      const version = await coherentVersion(box(), where)
      // Whatever the kill left, the next operation of the install takes over its lock, clears its debris and
      // succeeds: an update when the kill came before the switch, a rollback when it came after.
      const next = version === '0.1.0' ? await confirmByBin(box()) : await confirmByBin(box(), ['--rollback'])
      expect(next.code, `${where}: ${next.stdout}`).toBe(0)
      expect(await coherentVersion(box(), where)).toBe(version === '0.1.0' ? '0.2.0' : '0.1.0')
      const debris = [
        ...readdirSync(install.root).filter((n) => n === '.staging' || n.startsWith('update.lock')),
        ...readdirSync(join(install.root, 'versions')).filter((n) => n.startsWith('.')),
      ]
      expect(debris, where).toEqual([])
      expect(readdirSync(join(install.root, 'versions')).sort(), where).toEqual(['0.1.0', '0.2.0'])
    }
    // Not vacuous: the early stages leave hundreds of milliseconds of the run ahead of their kill.
    expect(killed).toBeGreaterThan(0)
  }, 180_000)
})

describe('after the commit point', () => {
  it('a failed skill sync answers ok:false with binary_replaced and the sync command', async () => {
    serveRelease('v0.2.0', await goodAssets())
    writeFileSync(join(box().root, '.agents'), 'not a directory')
    const run = await confirmByBin(box())
    expect(run.code).toBe(1)
    expect(env(run).error).toMatchObject({
      code: 'E_IO',
      details: {
        stage: 'skill_sync',
        binary_replaced: true,
        skill_sync_status: 'failed',
        skill_sync_command: `npx --yes skills add ${REPO} -y -g`,
        previous_version: '0.1.0',
        current_version: '0.2.0',
      },
    })
    expect(env(await inProcess(box(), ['--version'])).data.version).toBe('0.2.0')
  })
})
