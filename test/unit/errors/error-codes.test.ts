import { AgentError, defineErrorCodes } from 'agentcli'
import { describe, expect, it } from 'vitest'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { suggest } from '../../../src/errors/suggest.js'

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
