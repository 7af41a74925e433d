import { AgentError, CORE_ERRORS, defineErrorCodes } from 'agentcli'
import { describe, expect, it } from 'vitest'
import { suggest } from '../src/errors/suggest.js'
import { normalizeArgv, scanGlobals } from '../src/globals.js'
import { paginate } from '../src/list.js'
import { checkFields, parseFields, projectData } from '../src/output/fields.js'

describe('defineErrorCodes', () => {
  it('derives retryable from the exit class', () => {
    const c = defineErrorCodes({ E_QUOTA: { exit: 7 }, E_GONE: { exit: 3 } })
    expect(c.lookup('E_QUOTA')).toMatchObject({ exit: 7, retryable: true })
    expect(c.lookup('E_GONE')).toMatchObject({ exit: 3, retryable: false })
    expect(c.extensions).toEqual(['E_GONE', 'E_QUOTA'])
  })
  it.each([
    [{ E_NOT_FOUND: { exit: 3 } }, /core code/],
    [{ E_HUMAN: { exit: 9 } }, /exit must be/],
    [{ E_OK: { exit: 0 } }, /exit must be/],
    [{ E_BAD: { exit: 2 } }, /exit must be/],
    [{ E_SIG: { exit: 130 } }, /exit must be/],
    [{ bad_name: { exit: 1 } }, /must match/],
    [{ E_LIAR: { exit: 3, retryable: true } }, /retryable/],
  ])('rejects %j', (ext, message) => {
    expect(() => defineErrorCodes(ext as never)).toThrow(message)
  })
  it('keeps exit and retryable consistent in the core table', () => {
    for (const entry of Object.values(CORE_ERRORS)) expect(entry.retryable).toBe([7, 8, 130].includes(entry.exit))
  })
  it('does not treat inherited object keys as codes', () => {
    expect(defineErrorCodes().lookup('toString')).toBeUndefined()
  })
})

describe('AgentError', () => {
  it('always has object details and folds the hint in', () => {
    const e = new AgentError('E_NOT_FOUND', 'gone', { hint: 'list first' })
    expect(e.details).toEqual({ hint: 'list first' })
  })
})

describe('suggest', () => {
  it('finds near misses, transpositions and prefixes', () => {
    expect(suggest('lsit', ['list', 'get'])).toEqual(['list'])
    expect(suggest('li', ['list', 'get'])).toEqual(['list'])
    expect(suggest('zzzzzz', ['list', 'get'])).toEqual([])
  })
})

describe('globals', () => {
  it('moves leading universal flags behind the command, before --', () => {
    expect(normalizeArgv(['--format', 'text', 'list', '--', 'x'])).toEqual(['list', '--format', 'text', '--', 'x'])
    expect(normalizeArgv(['--json', 'get', '1'])).toEqual(['get', '1', '--json'])
    expect(normalizeArgv(['get', '1'])).toEqual(['get', '1'])
  })
  it('reads flags after -- as arguments', () => {
    expect(scanGlobals(['get', '--', '--format', 'text']).format).toBe('json')
  })
  it('accepts --format=value', () => {
    expect(scanGlobals(['list', '--format=text']).format).toBe('text')
  })
})

describe('fields', () => {
  it('projects nested paths and array elements', () => {
    const data = { a: { b: 1, c: 2 }, list: [{ x: 1, y: 2 }], z: 3 }
    expect(projectData(data, parseFields('a.b,list.x'), 'data')).toEqual({ a: { b: 1 }, list: [{ x: 1 }] })
  })
  it('keeps _untrusted entries under the kept paths', () => {
    const data = { title: 't', body: 'b', _untrusted: ['title', 'body'] }
    expect(projectData(data, parseFields('title'), 'data')).toEqual({ title: 't', _untrusted: ['title'] })
  })
  it('accepts paths under open members', () => {
    expect(() => checkFields(parseFields('labels.anything'), ['labels', 'labels.*'])).not.toThrow()
    expect(() => checkFields(parseFields('nope'), ['labels', 'labels.*'])).toThrow(/Unknown field/)
  })
  it('rejects an empty list', () => {
    expect(() => parseFields(' , ')).toThrow(/at least one/)
  })
})

describe('paginate', () => {
  it('walks every item exactly once', () => {
    const all = Array.from({ length: 7 }, (_, i) => i)
    const seen: number[] = []
    let cursor: string | undefined
    do {
      const { page } = paginate(all, { limit: 3, cursor })
      seen.push(...page.items)
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    expect(seen).toEqual(all)
  })
})
