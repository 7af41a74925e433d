import { describe, expect, it } from 'vitest'
import { BUILTIN_TOPICS, describeTopics } from '../../../src/runtime/topics.js'

type Topic = { name: string; description?: string }

/** What oclif's Config gives: topics nobody declared carry the summary of their first command. */
function config(topics: Topic[], ids: string[], declared: Record<string, { description: string }> = {}) {
  return {
    topics,
    commands: ids.map((id) => ({ id, hidden: id.endsWith('hidden') })),
    pjson: { oclif: { topics: declared } },
    topicSeparator: ' ',
  } as never
}

describe('topic descriptions', () => {
  it("a topic gets its own description, never one of its commands' summaries", () => {
    const topics: Topic[] = [
      { name: 'job', description: 'Cancel an async job' },
      { name: 'login', description: 'Log in with a device code' },
      { name: 'repo', description: 'Archive a repository' },
      // oclif already set the declared description over the first command's summary.
      { name: 'team', description: 'Teams and their members' },
    ]
    const ids = ['job:cancel', 'job:list', 'login', 'login:resume', 'repo:archive', 'repo:git:push', 'repo:hidden']
    ids.push('team:add')
    describeTopics(config(topics, ids, { team: { description: 'Teams and their members' } }))
    expect(Object.fromEntries(topics.map((t) => [t.name, t.description]))).toEqual({
      // A built-in topic the tool does not describe: the framework's description.
      job: BUILTIN_TOPICS.job,
      // A topic that is also a command keeps that command's summary.
      login: 'Log in with a device code',
      // Undeclared: the commands under it (a hidden one left out), not the first one's summary.
      repo: 'Commands: archive, git push',
      // Declared by the tool: kept.
      team: 'Teams and their members',
    })
  })
})
