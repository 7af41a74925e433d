import { describe, expect, it } from 'vitest'
import type { AgentError } from '../../../src/errors/agent-error.js'
import { idDepth, leadingWords, longestMatch } from '../../../src/route/match.js'
import { unknownCommand } from '../../../src/route/unknown.js'
import { isUniversalToken, UNIVERSAL_FLAGS, UNIVERSAL_SWITCH_TOKENS } from '../../../src/universal-flags/table.js'

const IDS = new Set(['login', 'login:approve', 'job:status', 'job:list', 'list'])
const names = [...IDS].map((id) => id.replaceAll(':', ' '))

function refusal(words: string[]): AgentError {
  try {
    unknownCommand(words, names, 'run `tasks reference`')
  } catch (error) {
    return error as AgentError
  }
  throw new Error('unknownCommand returned')
}

describe('the router', () => {
  it('takes the longest run of leading words that names an id', () => {
    const find = (id: string) => (IDS.has(id) ? id : undefined)
    expect(longestMatch(leadingWords(['login', 'approve', '--id', 'x']), find)).toEqual({
      found: 'login:approve',
      id: 'login:approve',
      words: 2,
    })
    expect(longestMatch(leadingWords(['login', 'nope']), find)?.id).toBe('login')
    expect(longestMatch(leadingWords(['--json', 'list']), find)).toBeUndefined()
    expect(longestMatch(leadingWords(['job']), find)).toBeUndefined()
  })

  it('asks for no candidate id longer than the deepest id: a batch of ids after the command is never joined', () => {
    const asked: string[] = []
    const find = (id: string) => {
      asked.push(id)
      return IDS.has(id) ? id : undefined
    }
    const ids = Array.from({ length: 5000 }, (_, i) => String(i))
    expect(idDepth(IDS)).toBe(2)
    expect(longestMatch(['login', ...ids], find, idDepth(IDS))).toMatchObject({ id: 'login', words: 1 })
    expect(asked).toEqual(['login:0', 'login'])
    expect(longestMatch(['login', 'approve'], find, 1)?.id).toBe('login')
    expect(idDepth([])).toBe(0)
    expect(longestMatch(['login'], find, 0)).toBeUndefined()
  })

  it('answers a miss with E_USAGE: a topic, an unknown word with did-you-mean, no command at all', () => {
    const topic = refusal(['job'])
    expect([topic.code, topic.message]).toEqual([
      'E_USAGE',
      "job is a topic; name one of its commands. Did you mean 'job list' or 'job status'?",
    ])
    expect(topic.details).toMatchObject({ got: 'job', allowed: ['job list', 'job status'] })
    const typo = refusal(['lst'])
    expect(typo.message).toBe("Unknown command: lst. Did you mean 'list'?")
    expect(typo.details).toMatchObject({ got: 'lst', suggestions: ['list'] })
    const under = refusal(['job', 'stat'])
    expect(under.message).toBe("Unknown command: job stat. Did you mean 'job status'?")
    const none = refusal([])
    expect([none.message, none.details.hint]).toEqual(['No command given', 'run `tasks reference`'])
  })

  it('knows every universal flag, --pretty included (the boot’s old copy had lost it)', () => {
    expect(Object.keys(UNIVERSAL_FLAGS)).toEqual(['format', 'json', 'fields', 'compact', 'pretty', 'quiet', 'no-input'])
    expect(UNIVERSAL_SWITCH_TOKENS.has('--pretty')).toBe(true)
    expect(['--format=text', '--fields', '--pretty', '--no-input'].every(isUniversalToken)).toBe(true)
    expect(['--format-x', '--help', 'list', '--limit'].some(isUniversalToken)).toBe(false)
  })
})
