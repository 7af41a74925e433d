import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../src/errors/agent-error.js'
import { DEFAULT_IN_PROCESS_READS, inProcessReadsOf, runsInProcess } from '../../../src/mcp/in-process-setting.js'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'
import { ROOT, useSandbox } from '../../support/helpers.js'
import { FIXTURE_ROOT, stubbornHang, TASKS_ROOT } from '../../support/in-process.js'

const withSetting = (mcp: unknown) => ({ pjson: { agentcli: { mcp } } }) as unknown as ToolConfig

/** agentcli as the tool's modules see it (dist/, the instance their commands extend: see support/in-process.ts). */
const dist = <T>(path: string) => import(/* @vite-ignore */ pathToFileURL(join(ROOT, 'dist', path)).href) as Promise<T>
type Runner = typeof import('../../../src/mcp/in-process.js')
type Configs = typeof import('../../../src/runtime/tool-config.js')
type RunEnv = typeof import('../../../src/settings/run-env.js')

async function runnerOf(root: string, graceMs?: number) {
  const [{ inProcessRunner }, { toolConfig }] = await Promise.all([
    dist<Runner>('mcp/in-process.js'),
    dist<Configs>('runtime/tool-config.js'),
  ])
  const config = toolConfig(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')))
  return inProcessRunner(config, join(root, 'bin/run.js'), graceMs)
}

describe('agentcli.mcp.in_process_reads', () => {
  it('defaults, takes a boolean, refuses anything else with E_CONFIG naming the setting', () => {
    expect(inProcessReadsOf(withSetting(undefined))).toBe(DEFAULT_IN_PROCESS_READS)
    expect(inProcessReadsOf(withSetting({ in_process_reads: false }))).toBe(false)
    expect(inProcessReadsOf(withSetting({ in_process_reads: true }))).toBe(true)
    for (const got of ['true', 1, null]) {
      let error: unknown
      try {
        inProcessReadsOf(withSetting({ in_process_reads: got }))
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(AgentError)
      expect((error as AgentError).code).toBe('E_CONFIG')
      expect((error as AgentError).details).toEqual({
        setting: 'agentcli.mcp.in_process_reads',
        allowed: [true, false],
        got,
      })
    }
  })

  it('only a plain read runs in the server: never local, write, stream, async or raw', () => {
    const read = { type: 'read', stream: false, async: false, raw: false } as const
    expect(runsInProcess(read)).toBe(true)
    for (const other of [
      { ...read, type: 'local' as const },
      { ...read, type: 'write' as const },
      { ...read, stream: true },
      { ...read, async: true },
      { ...read, raw: true },
    ])
      expect(runsInProcess(other)).toBe(false)
  })
})

describe('the in-process runner', () => {
  const box = useSandbox()

  it('one call at a time: a second take while one runs is refused, and free again once it ended', async () => {
    const runner = await runnerOf(TASKS_ROOT)
    expect(runner.take()).toBe(true)
    expect(runner.take()).toBe(false)
    const result = await runner.run(['--version'], { ...box().env, PATH: process.env.PATH ?? '' })
    expect(result?.exitCode).toBe(0)
    expect(JSON.parse(result!.stdout).data).toEqual({ tool: 'tasks', version: '0.1.0' })
    expect(runner.take()).toBe(true)
    expect(runner.broken()).toBe(false)
  })

  it.each([
    [['crash', '--how', 'exit'], 3, /^$/],
    [['crash', '--how', 'timer'], null, /uncaught in the server's process: Error: thrown in a timer \(timer\)/],
    [['reject'], null, /uncaught in the server's process: Error: nobody caught me/],
  ])(
    '%j: a process.exit or an uncaught error ends only the run, and breaks the runner',
    async (argv, exitCode, stderr) => {
      const [{ runEnv }] = await Promise.all([dist<RunEnv>('settings/run-env.js')])
      const runner = await runnerOf(FIXTURE_ROOT)
      const stdin = process.stdin
      expect(runner.take()).toBe(true)
      const result = await runner.run(argv, { ...box().env, PATH: process.env.PATH ?? '' })
      expect(result).toMatchObject({ stdout: '', exitCode })
      expect(result!.stderr).toMatch(stderr)
      expect(runner.broken()).toBe(true)
      expect(runner.take()).toBe(false)
      expect(runEnv()).toBe(process.env)
      expect(process.stdin).toBe(stdin)
    },
  )

  it('an error a run leaves after its answer breaks the runner, and reaches no one else', async () => {
    const runner = await runnerOf(FIXTURE_ROOT)
    expect(runner.take()).toBe(true)
    const result = await runner.run(['crash', '--how', 'later'], { ...box().env, PATH: process.env.PATH ?? '' })
    expect(JSON.parse(result!.stdout).data).toEqual({ left: 'a timer' })
    expect(runner.broken()).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(runner.broken()).toBe(true)
  })

  it('a run still going after its grace once cancelled is abandoned: the runner is broken, the state is the process’s again', async () => {
    const [{ runEnv }] = await Promise.all([dist<RunEnv>('settings/run-env.js')])
    // `hang` ignores its signal: the run's own 2 s grace is longer than ours. The cancel is sent once it waits.
    const hang = stubbornHang()
    try {
      const runner = await runnerOf(FIXTURE_ROOT, 50)
      const stdin = process.stdin
      const controller = new AbortController()
      expect(runner.take()).toBe(true)
      const pending = runner.run(['hang'], { ...box().env, PATH: process.env.PATH ?? '' }, controller.signal)
      await hang.ready
      // While it runs, the process's stdin is not the run's.
      expect(process.stdin).not.toBe(stdin)
      controller.abort()
      expect(await pending).toBeUndefined()
      expect(runner.broken()).toBe(true)
      expect(runner.take()).toBe(false)
      expect(runEnv()).toBe(process.env)
      expect(process.stdin).toBe(stdin)
    } finally {
      hang.restore()
    }
  })
})
