import { AgentError, CORE_ERRORS, defineErrorCodes } from 'agentcli'
import { describe, expect, it } from 'vitest'
import { classify } from '../../../src/credentials/keychain-store.js'
import { suggest } from '../../../src/errors/suggest.js'
import { normalizeArgv, scanGlobals } from '../../../src/globals.js'
import { codeForStatus, errorForFailure, retryAfterSeconds } from '../../../src/http/status.js'
import { paginate } from '../../../src/list.js'
import { parseFields, projectObject } from '../../../src/output/fields.js'
import { addSensitiveKeys, REDACTED, redactForOutput as redact } from '../../../src/output/redact.js'

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
    expect(projectObject(data, parseFields('a.b,list.x'))).toEqual({ a: { b: 1 }, list: [{ x: 1 }] })
  })
  it('keeps _untrusted entries under the kept paths', () => {
    const data = { title: 't', body: 'b', _untrusted: ['title', 'body'] }
    expect(projectObject(data, parseFields('title'))).toEqual({ title: 't', _untrusted: ['title'] })
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
      const { page } = paginate({ items: all, sortKey: (n) => n, limit: 3, cursor, query: {}, issuer: 'unit' })
      seen.push(...page.items)
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    expect(seen).toEqual(all)
  })
})

describe('upstream mapping', () => {
  it('maps every status class by number', () => {
    expect([400, 401, 403, 404, 408, 409, 412, 422, 429, 500, 502, 503, 418].map(codeForStatus)).toEqual([
      'E_VALIDATION',
      'E_AUTH',
      'E_FORBIDDEN',
      'E_NOT_FOUND',
      'E_TIMEOUT',
      'E_CONFLICT',
      'E_CONFLICT',
      'E_VALIDATION',
      'E_RATE_LIMITED',
      'E_SERVER',
      'E_SERVER',
      'E_SERVER',
      'E_INTERNAL',
    ])
  })
  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterSeconds('12')).toBe(12)
    expect(retryAfterSeconds(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4)
    expect(retryAfterSeconds('soon')).toBeUndefined()
    expect(retryAfterSeconds(null)).toBeUndefined()
  })
  it('maps failures by their code, not their message', () => {
    const url = new URL('http://x.test/a')
    const failure = (code: string) => Object.assign(new TypeError('fetch failed'), { cause: { code } })
    expect(errorForFailure('GET', url, failure('ENOTFOUND'), false, false).code).toBe('E_NETWORK')
    expect(errorForFailure('GET', url, failure('ECONNRESET'), false, false).code).toBe('E_NETWORK')
    expect(errorForFailure('GET', url, failure('UND_ERR_HEADERS_TIMEOUT'), false, false).code).toBe('E_TIMEOUT')
    expect(errorForFailure('GET', url, new Error('x'), true, false).code).toBe('E_TIMEOUT')
    expect(errorForFailure('GET', url, new Error('x'), false, true).code).toBe('E_INTERRUPTED')
  })
})

describe('keychain error classes', () => {
  it('tells locked from unavailable', () => {
    expect(
      classify(new Error("Couldn't access platform storage: Secret Service: unlock prompt was dismissed")).problem,
    ).toBe('locked')
    expect(
      classify(new Error('Platform failure: DBus error: Using X11 for dbus-daemon autolaunch was disabled')).problem,
    ).toBe('unavailable')
    expect(
      classify(
        new Error(
          'Platform failure: DBus error: The name org.freedesktop.secrets was not provided by any .service files',
        ),
      ).problem,
    ).toBe('unavailable')
  })
})

describe('redact, remembering its verdicts per key', () => {
  it('judges keys the same after thousands of distinct ones, and after a tool adds its own', () => {
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, i) => [`item_${i}`, 'x']))
    expect(Object.values(redact(many)).every((v) => v === 'x')).toBe(true)
    expect(redact({ api_key: 'k', note: 'n', shipping_code: 'c' })).toEqual({
      api_key: REDACTED,
      note: 'n',
      shipping_code: 'c',
    })
    addSensitiveKeys(['shipping_code'])
    expect(redact({ shipping_code: 'c' })).toEqual({ shipping_code: REDACTED })
  })
})
