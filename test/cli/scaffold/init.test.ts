import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { afterAll, describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { tempDirs } from '../../support/temp-dirs.js'

// `agentcli init` where its process matters: its working directory, a Node.js older than engines (a preload), a
// temp dir it cannot use. The rest of the command runs in-process: test/unit/cli/init.test.ts, init-names.test.ts.
const AGENTCLI_BIN = join(ROOT, 'bin/agentcli.js')

const temp = tempDirs('agentcli-init-test-')
/**
 * One HOME for the file: its code cache, where the bin and the staged tool init asks for its reference keep their
 * compiled modules, serves every call after the first (a HOME each compiled everything again).
 */
const HOME = mkdtempSync(join(tmpdir(), 'agentcli-init-home-'))
afterAll(() => rmSync(HOME, { recursive: true, force: true }))
const init = (cwd: string | undefined, args: string[], env: Record<string, string> = {}) =>
  runTool(AGENTCLI_BIN, ['init', ...args], { ...(cwd ? { cwd } : {}), env: { HOME, ...env } })
type Ok = { ok: true; data: { dir: string; name: string; bin: string; agentcli: string; files: string[] } }
type Failed = { ok: false; error: { code: string; details: Record<string, unknown> } }

describe('agentcli init', () => {
  it('rewrites a relative file: spec so that it names, from the tool, what the author named from where they stand', async () => {
    const here = join(temp(), 'here')
    mkdirSync(here)
    mkdirSync(join(here, '../pkgs'))
    writeFileSync(join(here, '../pkgs/agentcli-0.1.0.tgz'), '')
    for (const spec of ['file:../pkgs/agentcli-0.1.0.tgz', '../pkgs/agentcli-0.1.0.tgz']) {
      const run = await init(here, [join('tools', `t${spec.length}`), '--agentcli', spec])
      expect(run.code, run.stdout).toBe(0)
      const pjson = JSON.parse(readFileSync(join(here, 'tools', `t${spec.length}`, 'package.json'), 'utf8')) as {
        dependencies: Record<string, string>
      }
      expect(pjson.dependencies.agentcli).toBe('file:../../../pkgs/agentcli-0.1.0.tgz')
      expect((run.json as Ok).data.agentcli).toBe('file:../../../pkgs/agentcli-0.1.0.tgz')
    }
  })

  it('refuses a Node.js older than engines before writing anything; the same call then works on a supported one', async () => {
    const dir = join(temp(), 'deep', 'mytool')
    const old = await init(undefined, [dir], {
      NODE_OPTIONS: `--import=${join(ROOT, 'test/fixtures/old-node.mjs')}`,
      TEST_NODE_VERSION: '20.20.2',
    })
    expect(old.code, old.stdout).toBe(4)
    const { error } = old.json as Failed
    expect(error.code).toBe('E_CONFIG')
    expect(error.details).toMatchObject({ reason: 'unsupported_node', got: 'v20.20.2' })
    expect(existsSync(dirname(dir)), 'not even the parent directory').toBe(false)
    const retry = await init(undefined, [dir])
    expect(retry.code, retry.stdout).toBe(0)
  })

  it('accepts an existing empty directory, the current one included', async () => {
    const dir = join(temp(), 'empty')
    mkdirSync(dir)
    const run = await init(dir, ['.'])
    expect(run.code, run.stdout).toBe(0)
    expect((run.json as Ok & { data: { next: string[] } }).data).toMatchObject({
      name: 'empty',
      next: ['npm install', 'npm test'],
    })
    expect(existsSync(join(dir, 'package.json'))).toBe(true)
  })
})

describe('agentcli init leaves nothing behind when it fails half-way', () => {
  it('a failure after the files are written: no tool, no parents, no stage; the retry works', async () => {
    const cwd = temp()
    // A temp dir that is a file: the skill cannot be rendered, after every other file was written.
    const notADir = join(temp(), 'file')
    writeFileSync(notADir, '')
    const broken = { TMPDIR: notADir }
    const failed = await init(cwd, [join('tools', 'mytool')], broken)
    expect(failed.code, failed.stdout).toBe(1)
    expect((failed.json as Failed).error).toMatchObject({
      code: 'E_IO',
      details: { path: join(cwd, 'tools', 'mytool'), fix: expect.any(String) },
    })
    expect(readdirSync(cwd)).toEqual([])
    const empty = join(cwd, 'empty')
    mkdirSync(empty)
    expect((await init(empty, ['.'], broken)).code).toBe(1)
    expect(readdirSync(cwd)).toEqual(['empty'])
    expect(readdirSync(empty)).toEqual([])
    const retry = await init(cwd, [join('tools', 'mytool')])
    expect(retry.code, retry.stdout).toBe(0)
    expect(readdirSync(join(cwd, 'tools'))).toEqual(['mytool'])
    expect(readdirSync(join(cwd, 'tools', 'mytool'))).toContain('package.json')
  })
})
