import { describe, expect, it } from 'vitest'
import { invocation, runnableText } from '../../../src/runtime/invocation.js'

describe('runnableText', () => {
  it('rewrites the commands a hint names in backticks to start as this process was started', () => {
    // Under vitest `tasks` is not on PATH: the command must start the script that runs, not a bare `tasks`.
    const start = invocation('tasks')
    expect(start).not.toBe('tasks')
    expect(runnableText('run `tasks list` to see task ids', 'tasks')).toBe(`run \`${start} list\` to see task ids`)
    expect(runnableText('`tasks` alone, then `tasks get 1`', 'tasks')).toBe(
      `\`${start}\` alone, then \`${start} get 1\``,
    )
  })

  it('leaves other backticked text and other tools alone', () => {
    for (const text of ['set `TASKS_TOKEN`', 'run `tasksctl list`', 'no commands here', 'run `git status`'])
      expect(runnableText(text, 'tasks')).toBe(text)
    expect(runnableText('run `tasks list`', '')).toBe('run `tasks list`')
  })
})
