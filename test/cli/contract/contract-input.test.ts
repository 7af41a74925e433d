import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { env, fixture, TASKS_BIN, tasks, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess, tasksInProcess } from '../../support/in-process.js'
import { type TerminalRun, onTerminal as terminal } from '../../support/terminal.js'

/*
 * What needs a process: a terminal (`script`), stdin, job workers. The rest runs in-process:
 * test/unit/contract/contract-input.test.ts; so do the calls here around a job (a dry-run, the job list, a
 * clean-up cancel).
 */
const box = useSandbox()

/** The example on a real terminal, answering the title question with `input`. */
function onTerminal(args: string, input?: string): Promise<TerminalRun> {
  const answer = input === undefined ? undefined : { question: 'Title of the new task?', type: input }
  return terminal(`${process.execPath} ${TASKS_BIN} ${args}`, box().env, answer)
}

/** Wait until the detached worker of a job has exited, so the sandbox is not removed under its last writes. */
async function workerGone(bin: string, jobId: string): Promise<void> {
  const path = join(box().env.XDG_DATA_HOME!, bin, 'jobs', jobId, 'job.json')
  for (let i = 0; i < 100; i++) {
    const pid = existsSync(path)
      ? (JSON.parse(readFileSync(path, 'utf8')) as { worker_pid: number | null }).worker_pid
      : null
    if (pid === null) return
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 100))
  }
}

const firstJson = (text: string) => JSON.parse(text.slice(text.indexOf('{"ok"'), text.lastIndexOf('}') + 1))

describe('--no-input: nothing ever waits for a person who is not there', () => {
  it('off a terminal a question is E_USAGE naming the flag that answers it, at once', async () => {
    const run = await tasks(box(), ['create', '--dry-run'])
    expect(run.code).toBe(2)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error).toMatchObject({
      code: 'E_USAGE',
      details: { missing: ['--title'], reason: 'stdin_not_a_tty' },
    })
  })

  it('on a terminal the question is asked (stderr) and answered', async () => {
    const run = await onTerminal('create --dry-run --compact', 'Typed title')
    expect(run.stdout).toContain('Title of the new task?')
    expect(firstJson(run.stdout).data.preview.changes[0].after).toEqual({ title: 'Typed title', status: 'open' })
  })

  it('on a terminal, --no-input still answers at once instead of asking', async () => {
    const run = await onTerminal('create --dry-run --compact --no-input')
    expect(run.stdout).not.toContain('Title of the new task?')
    expect(firstJson(run.stdout).error).toMatchObject({ code: 'E_USAGE', details: { reason: 'no_input' } })
  })
})

describe('--wait on every async command', () => {
  it('blocks until the job settles and returns its result envelope', async () => {
    const run = await fixture(box(), ['sleepy', '--ms', '100', '--wait'])
    expect(run.code).toBe(0)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run)).toMatchObject({ ok: true, data: { slept_ms: 100 } })
    const jobs = await fixtureInProcess(box(), ['job', 'list'])
    // The answer names the job it waited for, so its status and result stay reachable.
    expect(env(run).meta.job_id).toBe(env(jobs).data.items[0].job_id)
    for (const job of env(jobs).data.items) await workerGone('fixture', job.job_id)
  })

  it("a failed job answers with the job's own error (code, exit, retryable) and its id", async () => {
    const run = await fixture(box(), ['sleepy', '--ms', '50', '--fail', '--wait'])
    expect(run.code).toBe(7)
    expect(env(run).error).toMatchObject({
      code: 'E_SERVER',
      retryable: true,
      details: { job_id: expect.stringMatching(/^job_/) },
    })
    await workerGone('fixture', env(run).error.details.job_id)
  })

  it('past --wait-timeout it is E_TIMEOUT with the job id and a poll command that works', async () => {
    const started = Date.now()
    const run = await fixture(box(), ['sleepy', '--ms', '4000', '--wait', '--wait-timeout', '1'])
    expect(Date.now() - started).toBeLessThan(3500)
    expect(run.code).toBe(8)
    const error = env(run).error
    expect(error).toMatchObject({ code: 'E_TIMEOUT', retryable: true, details: { status: expect.any(String) } })
    expect(error.details.poll).toContain(`job status --id ${error.details.job_id}`)
    // The job kept running: the poll command, run as printed, sees it.
    const poll = spawnSync('sh', ['-c', error.details.poll], {
      encoding: 'utf8',
      env: { ...process.env, ...box().env },
    })
    expect(JSON.parse(poll.stdout).data.job_id).toBe(error.details.job_id)
    await fixtureInProcess(box(), ['job', 'cancel', '--id', error.details.job_id])
    await workerGone('fixture', error.details.job_id)
  })

  it('a write confirmed with --wait: the token does not bind --wait, and the import result comes back', async () => {
    const file = `${box().root}/in.jsonl`
    spawnSync('sh', ['-c', `printf '{"title":"a"}\\n{"title":"b"}\\n' > ${file}`])
    const dry = env(await tasksInProcess(box(), ['import', '--file', file, '--dry-run'])).data
    const run = await tasks(box(), ['import', '--file', file, '--confirm', dry.confirm_token, '--wait'])
    expect(run.code).toBe(0)
    expect(env(run).data).toEqual({ imported: 2, ids: ['1', '2'] })
    expect(env(run).meta.job_id).toMatch(/^job_/)
    for (const job of env(await tasksInProcess(box(), ['job', 'list'])).data.items)
      await workerGone('tasks', job.job_id)
  })
})

describe('a bare invocation', () => {
  it('on a terminal is help for people', async () => {
    const run = await onTerminal('')
    expect(run.stdout).toContain('USAGE')
    expect(run.stdout).not.toContain('"ok"')
  })
})
