/**
 * A list over an upstream that paginates with its own page token (`this.upstreamPage()`), whole calls of
 * test/fixtures/paged-upstream in-process (`run(root, { io })`; no signal, race or terminal: moved from the spawn
 * tier with every assertion kept) against a mock upstream on loopback: one upstream request per call, the agent
 * walks every page by next_cursor, and a bad, foreign or stale cursor is refused with the code that says what to do.
 */
import { join } from 'node:path'
import { HttpResponse, http } from 'msw'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

const TOOL = join(ROOT, 'test/fixtures/paged-upstream')
const box = useSandbox()
let api: Upstream

const ISSUES = Array.from({ length: 7 }, (_, i) => ({ id: i + 1, title: `issue ${i + 1}`, state: 'open' }))
/** The upstream's own page size limit: asked for more, it answers this many. */
const UPSTREAM_MAX = 4

/** The upstream's opaque page token: the offset, disguised so nothing can read it as a number. */
const tokenFor = (offset: number) => Buffer.from(`after:${offset}`).toString('base64url')
const offsetOf = (token: string | null) =>
  token === null ? 0 : Number(Buffer.from(token, 'base64url').toString('utf8').slice('after:'.length))

beforeAll(async () => {
  api = await startUpstream([
    http.get('*/v1/issues', ({ request }) => {
      const query = new URL(request.url).searchParams
      const token = query.get('page_token')
      if (token === 'expired') return HttpResponse.json({ error: 'page token expired' }, { status: 410 })
      const from = offsetOf(token)
      const to = from + Math.min(Number(query.get('per_page')), UPSTREAM_MAX)
      return HttpResponse.json({
        issues: ISSUES.slice(from, to),
        next_page_token: to < ISSUES.length ? tokenFor(to) : null,
      })
    }),
  ])
})
afterAll(() => api.close())
afterEach(() => api.reset())

function issues(args: string[]) {
  return runInProcess(TOOL, ['issues', ...args], {
    env: { ...box().env, PAGEDTOOL_API_URL: api.url, PAGEDTOOL_HTTP_RETRIES: '0' },
  })
}

/** The page tokens the upstream was asked for, in order (null: its first page). */
const asked = () => api.requests.map((r) => new URL(r.url).searchParams.get('page_token'))

/** Every page, as an agent walks them: each call repeats the flags and passes the previous next_cursor. */
async function walk(flags: string[]) {
  const pages: Array<{ ids: number[]; truncated: unknown; requests: number }> = []
  let cursor: string | undefined
  do {
    const before = api.requests.length
    const run = await issues([...flags, ...(cursor ? ['--cursor', cursor] : [])])
    expect(run.code, run.stdout).toBe(0)
    const e = env(run)
    pages.push({
      ids: e.data.items.map((i: { id: number }) => i.id),
      truncated: e.meta.truncated,
      requests: api.requests.length - before,
    })
    cursor = e.data.next_cursor ?? undefined
    expect(e.data.has_more).toBe(cursor !== undefined)
    if (cursor) expect(e.meta.truncation_hint).toContain(`--cursor ${cursor}`)
    if (pages.length > 10) throw new Error('the walk does not end')
  } while (cursor)
  return pages
}

describe('a list over an upstream with its own cursor', () => {
  it('fetches exactly one upstream page per call; the agent walks every item once by next_cursor', async () => {
    const pages = await walk(['--limit', '3'])
    expect(pages).toEqual([
      { ids: [1, 2, 3], truncated: true, requests: 1 },
      { ids: [4, 5, 6], truncated: true, requests: 1 },
      { ids: [7], truncated: undefined, requests: 1 },
    ])
    // Each call continued from the upstream's own token of the call before, asking for --limit items.
    expect(asked()).toEqual([null, tokenFor(3), tokenFor(6)])
    expect(api.requests.map((r) => new URL(r.url).searchParams.get('per_page'))).toEqual(['3', '3', '3'])
  })

  it('an upstream page smaller than --limit comes back short; only has_more ends the walk', async () => {
    const pages = await walk(['--limit', '10'])
    expect(pages.map((p) => [p.ids, p.requests])).toEqual([
      [[1, 2, 3, 4], 1],
      [[5, 6, 7], 1],
    ])
  })

  it('an upstream page larger than --limit is cut and its rest served from the same upstream page', async () => {
    // An upstream with a fixed page size of 5 that ignores per_page.
    api.use(
      http.get('*/v1/issues', ({ request }) => {
        const from = offsetOf(new URL(request.url).searchParams.get('page_token'))
        return HttpResponse.json({
          issues: ISSUES.slice(from, from + 5),
          next_page_token: from + 5 < ISSUES.length ? tokenFor(from + 5) : null,
        })
      }),
    )
    const pages = await walk(['--limit', '2'])
    expect(pages.flatMap((p) => p.ids)).toEqual([1, 2, 3, 4, 5, 6, 7])
    expect(pages.map((p) => p.requests)).toEqual([1, 1, 1, 1])
    expect(asked()).toEqual([null, null, null, tokenFor(5)])
  })

  it('a stale upstream token (the upstream answers 410) is E_CONFLICT cursor_expired, exit 6; without --cursor it starts over', async () => {
    // A cursor this command minted around a token the upstream has since expired.
    api.use(
      http.get('*/v1/issues', () => HttpResponse.json({ issues: ISSUES.slice(0, 2), next_page_token: 'expired' })),
    )
    const first = env(await issues(['--limit', '2']))
    api.reset()
    const run = await issues(['--limit', '2', '--cursor', first.data.next_cursor])
    expect(run.code).toBe(6)
    const e = env(run)
    expect(e.error).toMatchObject({
      code: 'E_CONFLICT',
      retryable: false,
      details: { param: '--cursor', reason: 'cursor_expired', upstream: { status: 410 } },
    })
    expect(e.error.message).toContain('without --cursor')
    expect(asked()).toEqual(['expired'])
    const again = await issues(['--limit', '2'])
    expect(again.code).toBe(0)
    expect(env(again).data.items.map((i: { id: number }) => i.id)).toEqual([1, 2])
  })
})

describe('a bad --cursor never reaches the upstream', () => {
  it('tampered: E_VALIDATION cursor_invalid, exit 2', async () => {
    const next = env(await issues(['--limit', '2'])).data.next_cursor as string
    api.reset()
    const [prefix, skip, , digest, tag] = next.split('.')
    const swapped = [prefix, skip, tokenFor(0), digest, tag].join('.')
    for (const bad of [swapped, `${next}A`, next.slice(0, -2), 'bogus']) {
      const run = await issues(['--limit', '2', '--cursor', bad])
      expect(run.code, bad).toBe(2)
      expect(env(run).error).toMatchObject({
        code: 'E_VALIDATION',
        details: { param: '--cursor', reason: 'cursor_invalid' },
      })
    }
    expect(api.requests).toEqual([])
  })

  it('under another query (another --state or --limit): E_VALIDATION cursor_query_mismatch, exit 2', async () => {
    const next = env(await issues(['--limit', '2'])).data.next_cursor as string
    api.reset()
    for (const flags of [
      ['--limit', '3'],
      ['--limit', '2', '--state', 'open'],
    ]) {
      const run = await issues([...flags, '--cursor', next])
      expect(run.code).toBe(2)
      expect(env(run).error.details).toMatchObject({ param: '--cursor', reason: 'cursor_query_mismatch' })
    }
    expect(api.requests).toEqual([])
  })

  it('too large: E_VALIDATION cursor_too_large, exit 2, the cursor not echoed', async () => {
    const run = await issues(['--cursor', `u1.0.${'A'.repeat(5000)}`])
    expect(run.code).toBe(2)
    expect(env(run).error.details).toMatchObject({ param: '--cursor', reason: 'cursor_too_large' })
    expect(run.stdout).not.toContain('A'.repeat(100))
    expect(api.requests).toEqual([])
  })
})
