import { describe, expect, it } from 'vitest'
import { useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
// Help is for people: text on stdout, exit 0, whether asked with --help, on a topic, or as `help <command>`.
describe('help', () => {
  const box = useSandbox()

  it('`tool <topic> --help` lists the commands of the topic, exit 0', async () => {
    const run = await tasks(box(), ['job', '--help'])
    expect(run.code, run.stdout).toBe(0)
    expect(run.stdout).toContain('job status')
    expect(run.json).toBeUndefined()
  })

  it('`tool help <command>` is the command help, exit 0', async () => {
    const run = await tasks(box(), ['help', 'list'])
    expect(run.code, run.stdout).toBe(0)
    expect(run.stdout).toContain('USAGE')
    expect(run.stdout).toContain('--cursor')
  })

  it('`tool help <topic> <command>` and `tool help <topic>` too', async () => {
    const leaf = await tasks(box(), ['help', 'job', 'status'])
    expect(leaf.code).toBe(0)
    expect(leaf.stdout).toContain('--id')
    const topic = await tasks(box(), ['help', 'job'])
    expect(topic.code).toBe(0)
    expect(topic.stdout).toContain('job cancel')
  })

  it('`tool help` alone is the root help, exit 0', async () => {
    const run = await tasks(box(), ['help'])
    expect(run.code).toBe(0)
    expect(run.stdout).toContain('COMMANDS')
  })

  it('help on a word that names nothing stays E_USAGE, exit 2, with suggestions', async () => {
    for (const args of [
      ['help', 'lst'],
      ['lst', '--help'],
    ]) {
      const run = await tasks(box(), args)
      expect(run.code, args.join(' ')).toBe(2)
      const error = (run.json as { error: { code: string; details: { suggestions: string[] } } }).error
      expect(error.code).toBe('E_USAGE')
      expect(error.details.suggestions).toContain('list')
    }
  })

  it('a topic without --help is still E_USAGE (an agent named no command)', async () => {
    const run = await tasks(box(), ['job'])
    expect(run.code).toBe(2)
    expect((run.json as { error: { code: string } }).error.code).toBe('E_USAGE')
  })
})
