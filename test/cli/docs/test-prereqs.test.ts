import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { KEYRING_COMMANDS, missingLine, missingLines } from '../../support/prereqs.js'

const SCRIPT = join(ROOT, 'scripts/test-prereqs.sh')

/** What the script may call to change the machine: each stand-in only records its call. */
const CHANGERS = ['apt-get', 'pg_createcluster', 'pg_ctlcluster', 'pg_lsclusters', 'runuser', 'redis-server']

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

type World = { path: string; calls(): string[] }

/**
 * A PATH for the script: `id` answers `uid`, every command in `CHANGERS` (less `without`) records its arguments
 * and does nothing, `present` are empty programs; then the real PATH (`real`), or only bash and timeout.
 */
function world(opts: {
  uid: number
  present?: readonly string[]
  without?: string[] | undefined
  real: boolean
}): World {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-prereqs-'))
  dirs.push(dir)
  const bin = join(dir, 'bin')
  mkdirSync(bin)
  const log = join(dir, 'calls.log')
  const write = (name: string, body: string) => writeFileSync(join(bin, name), `#!/bin/sh\n${body}\n`, { mode: 0o755 })
  write('id', `echo ${opts.uid}`)
  for (const name of CHANGERS.filter((c) => !opts.without?.includes(c))) write(name, `echo "${name} $*" >> "${log}"`)
  for (const name of opts.present ?? []) write(name, 'exit 0')
  let path = bin
  if (opts.real) path = `${bin}:${process.env.PATH}`
  else {
    const tools = join(dir, 'tools')
    mkdirSync(tools)
    for (const tool of ['bash', 'timeout'])
      symlinkSync(execFileSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).trim(), join(tools, tool))
    path = `${bin}:${tools}`
  }
  return { path, calls: () => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) }
}

function runScript(w: World, args: string[] = []) {
  const r = spawnSync(SCRIPT, args, { env: { PATH: w.path }, encoding: 'utf8', timeout: 60_000 })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

describe("scripts/test-prereqs.sh, the README test command's set-up", () => {
  // PostgreSQL and Redis answer here (this project's global setup checked): the script must leave them alone.
  it('a ready machine, as root: exit 0, not a word, no apt and no service command', () => {
    const w = world({ uid: 0, present: KEYRING_COMMANDS, real: true })
    for (const args of [[], ['--check']]) {
      const r = runScript(w, args)
      expect(r, args.join(' ')).toMatchObject({ status: 0, stdout: '', stderr: '' })
    }
    expect(w.calls()).toEqual([])
  })

  // The keyring's programs missing (a PATH without them) stand for every prerequisite: the servers cannot be
  // taken away from the machine, and the install path itself is not run here.
  const keyringLines = async () => missingLines(KEYRING_COMMANDS, { onPath: () => false, answers: async () => false })

  it.each([
    { name: '--check, as root', uid: 0, args: ['--check'], last: 'scripts/test-prereqs.sh, run as root on Debian' },
    { name: 'not root', uid: 1000, args: [], last: 'not root, nothing installed: run scripts/test-prereqs.sh as root' },
    { name: 'root without apt-get', uid: 0, args: [], without: ['apt-get'], last: 'no apt-get (not Debian or Ubuntu)' },
  ])("$name: one line per missing one (the spawn tier's words), what to do, exit 1, nothing installed", async (c) => {
    const r = runScript(world({ uid: c.uid, without: c.without, real: false }), c.args)
    expect(r.status, r.stderr).toBe(1)
    expect(r.stdout).toBe('')
    const lines = r.stderr.trimEnd().split('\n')
    expect(lines.slice(0, -1)).toEqual(await keyringLines())
    expect(lines.at(-1)).toContain(c.last)
  })

  it('root on Debian: one apt-get for exactly the missing packages; what it did not bring is then named', async () => {
    const w = world({ uid: 0, real: false })
    const r = runScript(w)
    expect(w.calls()).toEqual([
      'apt-get update -qq',
      'apt-get install -y -qq --no-install-recommends dbus gnome-keyring',
    ])
    // The stand-in installed nothing, so the check after the install still finds them missing.
    expect(r.status, r.stderr).toBe(1)
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'test-prereqs: apt-get install dbus gnome-keyring',
      ...(await keyringLines()),
      'still missing after the set-up above.',
    ])
  })

  it("the lines for PostgreSQL and Redis are the spawn tier's, word for word", () => {
    const script = readFileSync(SCRIPT, 'utf8')
    expect(script).toContain(`'${missingLine('postgres')}'`)
    expect(script).toContain(`'${missingLine('redis')}'`)
  })
})
