import { AgentError, isAgentError } from 'agentcli'
import { describe, expect, it } from 'vitest'
import { decodeCursor, encodeCursor } from '../../../src/list/cursor.js'
import { truncationMeta } from '../../../src/list/paginate.js'
import {
  decodeUpstreamCursor,
  encodeUpstreamCursor,
  MAX_UPSTREAM_CURSOR_CHARS,
  MAX_UPSTREAM_TOKEN_BYTES,
} from '../../../src/list/upstream-cursor.js'
import { fetchUpstreamPage, type UpstreamPageRequest } from '../../../src/list/upstream-page.js'

const ISSUER = 'mytool\0issues'
const QUERY = { _command: 'issues', limit: 2, state: 'open' }

/** What a call threw, for asserting on its code and details. */
function thrown(fn: () => unknown): AgentError {
  try {
    fn()
  } catch (error) {
    if (isAgentError(error)) return error
    throw error
  }
  throw new Error('did not throw')
}

async function rejected(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise
  } catch (error) {
    if (isAgentError(error)) return error
    throw error
  }
  throw new Error('did not reject')
}

/**
 * An upstream of `total` items paginating with an opaque token (the index of the page's first item, disguised)
 * and its own page size; it records every request.
 */
function upstream(total: number, pageSize: (limit: number) => number) {
  const items = Array.from({ length: total }, (_, i) => ({ id: i + 1 }))
  const requests: UpstreamPageRequest[] = []
  const fetchPage = async (request: UpstreamPageRequest) => {
    requests.push(request)
    const from = request.token === undefined ? 0 : Number(request.token.slice('pos:'.length))
    const size = pageSize(request.limit)
    const to = from + size
    return { items: items.slice(from, to), next: to < total ? `pos:${to}` : null }
  }
  return { fetchPage, requests }
}

/** Every page of a list, as an agent walks it: each call with the previous next_cursor. */
async function walk(source: ReturnType<typeof upstream>, limit: number, query = { ...QUERY, limit }) {
  const pages: Array<{ ids: number[]; has_more: boolean }> = []
  let cursor: string | undefined
  do {
    const before = source.requests.length
    const page = await fetchUpstreamPage({ limit, cursor, fetchPage: source.fetchPage, issuer: ISSUER, query })
    expect(source.requests.length - before, 'one upstream page per call').toBe(1)
    expect(page.count).toBe(page.items.length)
    expect(page.items.length).toBeLessThanOrEqual(limit)
    expect(page.has_more).toBe(page.next_cursor !== null)
    pages.push({ ids: page.items.map((i) => i.id), has_more: page.has_more })
    cursor = page.next_cursor ?? undefined
    if (pages.length > 50) throw new Error('the walk does not end')
  } while (cursor)
  return pages
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

describe('an upstream cursor inside the framework cursor', () => {
  it('round-trips the upstream token and the skip, for the first upstream page too', () => {
    for (const position of [
      { token: 'pos:40', skip: 0 },
      { token: 'eyJvZmZzZXQiOjQwfQ==/+.~ ünïcödé 🎉', skip: 3 },
      { token: undefined, skip: 20 },
    ]) {
      const cursor = encodeUpstreamCursor(position, ISSUER, QUERY)
      expect(cursor).toMatch(/^u1\.[A-Za-z0-9_.-]+$/)
      expect(decodeUpstreamCursor(cursor, ISSUER, QUERY)).toEqual(position)
    }
  })

  it('refuses every edited, cut or extended cursor (cursor_invalid), whatever part was changed', () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:4', skip: 2 }, ISSUER, QUERY)
    const edits = new Set<string>([
      cursor.slice(0, -1),
      `${cursor}A`,
      `${cursor}.x`,
      cursor.replace(/^u1\./, 'u2.'),
      cursor.replace(/^u1\.2\./, 'u1.3.'),
      cursor.replace(/^u1\.2\./, 'u1.02.'),
      cursor.replace(/^u1\.2\./, 'u1.-1.'),
      cursor.replace(/^u1\.2\./, 'u1..'),
      'u1....',
      'bogus',
      '',
    ])
    // Every single character of the cursor changed in turn.
    for (let i = 0; i < cursor.length; i++) {
      const swap = cursor[i] === 'A' ? 'B' : 'A'
      edits.add(cursor.slice(0, i) + swap + cursor.slice(i + 1))
    }
    // The token swapped for another one, with the rest (and the MAC) kept.
    const [prefix, skip, , digest, tag] = cursor.split('.')
    edits.add([prefix, skip, Buffer.from('pos:0').toString('base64url'), digest, tag].join('.'))
    for (const bad of edits) {
      const error = thrown(() => decodeUpstreamCursor(bad, ISSUER, QUERY))
      expect(error.code, bad).toBe('E_VALIDATION')
      expect(error.details, bad).toMatchObject({ param: '--cursor', reason: 'cursor_invalid' })
    }
  })

  it("is bound to its tool and command: another's cursor does not verify (cursor_invalid)", () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, ISSUER, QUERY)
    for (const issuer of ['mytool\0boards', 'othertool\0issues', 'mytool\0issues ']) {
      const error = thrown(() => decodeUpstreamCursor(cursor, issuer, QUERY))
      expect(error.details, issuer).toMatchObject({ param: '--cursor', reason: 'cursor_invalid' })
    }
  })

  it('is bound to its query: other filters or another --limit is cursor_query_mismatch', () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, ISSUER, QUERY)
    for (const query of [
      { ...QUERY, state: 'closed' },
      { ...QUERY, limit: 3 },
      { _command: 'issues', limit: 2 },
    ]) {
      const error = thrown(() => decodeUpstreamCursor(cursor, ISSUER, query))
      expect(error.code).toBe('E_VALIDATION')
      expect(error.details).toMatchObject({ param: '--cursor', reason: 'cursor_query_mismatch' })
    }
  })

  it('never verifies as a keyset cursor of page(), nor the reverse', () => {
    const upstreamCursor = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, ISSUER, QUERY)
    expect(thrown(() => decodeCursor(upstreamCursor, ISSUER, QUERY)).details.reason).toBe('cursor_invalid')
    const keyset = encodeCursor(['pos:4', 0], ISSUER, QUERY)
    expect(thrown(() => decodeUpstreamCursor(keyset, ISSUER, QUERY)).details.reason).toBe('cursor_invalid')
    // The keyset cursor's body moved under the upstream prefix: another MAC key, so still refused.
    const moved = keyset.replace(/^c2\./, 'u1.0.')
    expect(thrown(() => decodeUpstreamCursor(moved, ISSUER, QUERY)).details.reason).toBe('cursor_invalid')
  })

  it('is size-bounded: a --cursor over the bound is cursor_too_large before any decoding, without echoing it', () => {
    const largest = encodeUpstreamCursor(
      { token: '\u{1F389}'.repeat(MAX_UPSTREAM_TOKEN_BYTES / 4), skip: 999_999 },
      ISSUER,
      QUERY,
    )
    expect(largest.length).toBeLessThanOrEqual(MAX_UPSTREAM_CURSOR_CHARS)
    expect(decodeUpstreamCursor(largest, ISSUER, QUERY).skip).toBe(999_999)
    const huge = `u1.${'A'.repeat(MAX_UPSTREAM_CURSOR_CHARS)}`
    const error = thrown(() => decodeUpstreamCursor(huge, ISSUER, QUERY))
    expect(error.code).toBe('E_VALIDATION')
    expect(error.details).toMatchObject({ param: '--cursor', reason: 'cursor_too_large' })
    expect(error.details.got).toBe(`${huge.length} characters`)
    expect(JSON.stringify(error.details)).not.toContain('AAAAAAAA')
  })

  it('refuses to carry an upstream token over the bound (E_INTERNAL: the tool must carry less)', () => {
    const error = thrown(() =>
      encodeUpstreamCursor({ token: 'x'.repeat(MAX_UPSTREAM_TOKEN_BYTES + 1), skip: 0 }, ISSUER, QUERY),
    )
    expect(error.code).toBe('E_INTERNAL')
    expect(error.details).toMatchObject({ token_bytes: MAX_UPSTREAM_TOKEN_BYTES + 1 })
  })
})

describe('a list over an upstream that paginates with its own cursor', () => {
  it('upstream page size = --limit: one upstream page per call, every item once, the last page ends the list', async () => {
    const source = upstream(7, (limit) => limit)
    const pages = await walk(source, 3)
    expect(pages).toEqual([
      { ids: [1, 2, 3], has_more: true },
      { ids: [4, 5, 6], has_more: true },
      { ids: [7], has_more: false },
    ])
    expect(source.requests).toEqual([
      { token: undefined, limit: 3 },
      { token: 'pos:3', limit: 3 },
      { token: 'pos:6', limit: 3 },
    ])
  })

  it('an upstream page larger than --limit is cut; the rest comes from the same upstream page, skipped to', async () => {
    const source = upstream(7, () => 5)
    const pages = await walk(source, 2)
    expect(pages.flatMap((p) => p.ids)).toEqual(range(7))
    expect(pages.map((p) => p.ids.length)).toEqual([2, 2, 1, 2])
    expect(source.requests.map((r) => r.token)).toEqual([undefined, undefined, undefined, 'pos:5'])
  })

  it('an upstream page smaller than --limit is returned as it is: short pages, has_more until the end', async () => {
    const source = upstream(5, () => 2)
    const pages = await walk(source, 10, { ...QUERY, limit: 10 })
    expect(pages).toEqual([
      { ids: [1, 2], has_more: true },
      { ids: [3, 4], has_more: true },
      { ids: [5], has_more: false },
    ])
  })

  it('ends on an empty, null or missing next token, and on an empty first page', async () => {
    for (const next of ['', null, undefined]) {
      const page = await fetchUpstreamPage({
        limit: 2,
        fetchPage: async () => ({ items: [{ id: 1 }], next }),
        issuer: ISSUER,
        query: QUERY,
      })
      expect(page).toEqual({ items: [{ id: 1 }], count: 1, next_cursor: null, has_more: false })
    }
    const empty = await fetchUpstreamPage({
      limit: 2,
      fetchPage: async () => ({ items: [], next: null }),
      issuer: ISSUER,
      query: QUERY,
    })
    expect(empty).toEqual({ items: [], count: 0, next_cursor: null, has_more: false })
  })

  it('an upstream page that shrank under the skip moves on to its next page instead of repeating it', async () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:0', skip: 4 }, ISSUER, QUERY)
    const page = await fetchUpstreamPage({
      limit: 2,
      cursor,
      fetchPage: async () => ({ items: [{ id: 1 }, { id: 2 }], next: 'pos:2' }),
      issuer: ISSUER,
      query: QUERY,
    })
    expect(page.items).toEqual([])
    expect(decodeUpstreamCursor(page.next_cursor!, ISSUER, QUERY)).toEqual({ token: 'pos:2', skip: 0 })
  })

  it('a 400 or 410 answered to a carried token is E_CONFLICT cursor_expired: restart without --cursor', async () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, ISSUER, QUERY)
    for (const status of [400, 410]) {
      const failure = new AgentError(status === 400 ? 'E_VALIDATION' : 'E_INTERNAL', `GET /v1 failed: HTTP ${status}`, {
        details: {
          upstream: { method: 'GET', url: 'http://api/v1', status, body: 'cursor expired' },
          _untrusted: ['upstream.body'],
        },
      })
      const error = await rejected(
        fetchUpstreamPage({
          limit: 2,
          cursor,
          fetchPage: async () => {
            throw failure
          },
          issuer: ISSUER,
          query: QUERY,
        }),
      )
      expect(error.code).toBe('E_CONFLICT')
      expect(error.message).toContain('without --cursor')
      expect(error.details).toMatchObject({
        param: '--cursor',
        reason: 'cursor_expired',
        upstream: { status },
        _untrusted: ['upstream.body'],
      })
      expect(error.details.hint).toContain('drop --cursor')
    }
    // A failure that marks nothing untrusted (not the HTTP client's) gets no `_untrusted` either.
    const bare = new AgentError('E_VALIDATION', 'HTTP 400', { details: { upstream: { status: 400 } } })
    const error = await rejected(
      fetchUpstreamPage({
        limit: 2,
        cursor,
        fetchPage: async () => {
          throw bare
        },
        issuer: ISSUER,
        query: QUERY,
      }),
    )
    expect(error.details).toEqual({
      param: '--cursor',
      reason: 'cursor_expired',
      upstream: { status: 400 },
      hint: expect.stringContaining('drop --cursor'),
    })
  })

  it('leaves every other failure as it is: a 400 on the first page, a 5xx, a 404, a non-HTTP error', async () => {
    const cursor = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, ISSUER, QUERY)
    const http = (code: 'E_VALIDATION' | 'E_SERVER' | 'E_NOT_FOUND', status: number) =>
      new AgentError(code, `HTTP ${status}`, { details: { upstream: { status } } })
    const cases: Array<[string | undefined, unknown]> = [
      [undefined, http('E_VALIDATION', 400)],
      [cursor, http('E_SERVER', 503)],
      [cursor, http('E_NOT_FOUND', 404)],
      [cursor, new AgentError('E_NETWORK', 'refused')],
      [cursor, new TypeError('a bug')],
    ]
    for (const [given, failure] of cases) {
      const run = fetchUpstreamPage({
        limit: 2,
        cursor: given,
        fetchPage: async () => {
          throw failure
        },
        issuer: ISSUER,
        query: QUERY,
      })
      await expect(run).rejects.toBe(failure)
    }
  })

  it("checks the fetcher's answer: no items array or a non-string next is E_INTERNAL", async () => {
    for (const answer of [{ items: 'x', next: null }, { items: [], next: 2 }, null]) {
      const error = await rejected(
        fetchUpstreamPage({
          limit: 2,
          fetchPage: async () => answer as never,
          issuer: ISSUER,
          query: QUERY,
        }),
      )
      expect(error.code).toBe('E_INTERNAL')
      expect(error.message).toContain('fetchPage')
    }
  })

  it('a forged or foreign --cursor never reaches the upstream', async () => {
    const source = upstream(7, (limit) => limit)
    const foreign = encodeUpstreamCursor({ token: 'pos:4', skip: 0 }, 'mytool\0boards', QUERY)
    for (const cursor of [foreign, 'u1.0.cG9zOjQ.AAAAAAAAAAAA.AAAAAAAAAAAAAAAA']) {
      const error = await rejected(
        fetchUpstreamPage({ limit: 2, cursor, fetchPage: source.fetchPage, issuer: ISSUER, query: QUERY }),
      )
      expect(error.details.reason).toBe('cursor_invalid')
    }
    expect(source.requests).toEqual([])
  })
})

describe('the MAC of every cursor is compared as printed', () => {
  it('a keyset cursor with a character appended is refused (base64 decoding would ignore it)', () => {
    const cursor = encodeCursor(5, ISSUER, QUERY)
    expect(decodeCursor(cursor, ISSUER, QUERY)).toBe(5)
    for (const extra of ['A', 'Q', '=']) {
      const error = thrown(() => decodeCursor(`${cursor}${extra}`, ISSUER, QUERY))
      expect(error.details.reason).toBe('cursor_invalid')
    }
  })
})

describe('meta.truncation_hint of an upstream page', () => {
  it('says more follow without a count (the upstream does not say how many)', () => {
    const page = { items: [1], count: 1, next_cursor: 'u1.x', has_more: true }
    expect(truncationMeta({ page }, { limit: 1, maxLimit: 50 })).toEqual({
      truncated: true,
      truncation_hint:
        'more items follow: run the same command with the same filters and --cursor u1.x; or start over with a higher --limit (max 50)',
    })
    expect(truncationMeta({ page, remaining: 4 }, { limit: 1 })?.truncation_hint).toMatch(/^4 more: /)
    expect(truncationMeta({ page: { ...page, has_more: false, next_cursor: null } }, { limit: 1 })).toBeUndefined()
  })
})
