import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BUILTIN_TOPICS } from '../../../src/runtime/topics.js'
import { ROOT, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()

describe('--help topics', () => {
  it('labels the built-in job topic with its own description, which the tool does not have to declare', async () => {
    const pjson = JSON.parse(readFileSync(join(ROOT, 'examples/tasks/package.json'), 'utf8'))
    expect(pjson.oclif.topics?.job).toBeUndefined()
    const help = await tasks(box(), ['--help'])
    expect(help.code).toBe(0)
    const topics = help.stdout.slice(help.stdout.indexOf('TOPICS'), help.stdout.indexOf('COMMANDS'))
    expect(topics.replace(/\s+/g, ' ')).toContain(`job ${BUILTIN_TOPICS.job}`)
    // Not the summary of one of its commands, which is what oclif gives a topic nobody described.
    expect(topics).not.toContain('Cancel an async job')
    const topicHelp = await tasks(box(), ['job', '--help'])
    expect(topicHelp.stdout.startsWith(BUILTIN_TOPICS.job!)).toBe(true)
  })
})
