import { describe, expect, it } from 'vitest'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess as fixture, tasksInProcess as tasks } from '../../support/in-process.js'

/* In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept. */
const box = useSandbox()

const ids = (...list: number[]) => list.map((n) => ({ id: String(n), title: `t${n}`, status: 'open' as const }))

async function page(args: string[]) {
  const run = await tasks(box(), ['list', ...args])
  return { run, e: env(run) }
}

describe('keyset pages', () => {
  it('walks every item exactly once; meta.truncated only on pages that left items out', async () => {
    seed(box(), ids(1, 2, 3, 4, 5, 10, 11))
    const seen: string[] = []
    const truncated: unknown[] = []
    let cursor: string | undefined
    do {
      const { e } = await page(['--limit', '3', ...(cursor ? ['--cursor', cursor] : [])])
      seen.push(...e.data.items.map((t: { id: string }) => t.id))
      truncated.push(e.meta.truncated)
      cursor = e.data.next_cursor ?? undefined
      if (cursor) expect(e.meta.truncation_hint).toContain(`--cursor ${cursor}`)
    } while (cursor)
    expect(seen).toEqual(['1', '2', '3', '4', '5', '10', '11'])
    expect(truncated).toEqual([true, true, undefined])
  })

  it('a page that holds everything is not truncated', async () => {
    seed(box(), ids(1, 2, 3))
    const { e } = await page(['--limit', '3'])
    expect(e.data).toMatchObject({ count: 3, next_cursor: null, has_more: false })
    expect(e.meta).not.toHaveProperty('truncated')
    expect(e.meta).not.toHaveProperty('truncation_hint')
  })

  it('deleting an item before the cursor skips nothing', async () => {
    seed(box(), ids(1, 2, 3, 4, 5, 6))
    const first = (await page(['--limit', '2'])).e.data
    expect(first.items.map((t: { id: string }) => t.id)).toEqual(['1', '2'])
    seed(box(), ids(2, 3, 4, 5, 6))
    const second = (await page(['--limit', '2', '--cursor', first.next_cursor])).e.data
    expect(second.items.map((t: { id: string }) => t.id)).toEqual(['3', '4'])
  })

  it('inserting an item before the cursor repeats nothing', async () => {
    seed(box(), ids(2, 3, 4, 5, 6))
    const first = (await page(['--limit', '2'])).e.data
    expect(first.items.map((t: { id: string }) => t.id)).toEqual(['2', '3'])
    seed(box(), ids(0, 1, 2, 3, 4, 5, 6))
    const second = (await page(['--limit', '2', '--cursor', first.next_cursor])).e.data
    expect(second.items.map((t: { id: string }) => t.id)).toEqual(['4', '5'])
  })

  it('deleting the very item the cursor points at still continues after it', async () => {
    seed(box(), ids(1, 2, 3, 4))
    const first = (await page(['--limit', '2'])).e.data
    seed(box(), ids(1, 3, 4))
    const second = (await page(['--limit', '2', '--cursor', first.next_cursor])).e.data
    expect(second.items.map((t: { id: string }) => t.id)).toEqual(['3', '4'])
  })

  it('presentation flags are not part of the query: --fields and --compact may change between pages', async () => {
    seed(box(), ids(1, 2, 3))
    const first = (await page(['--limit', '2'])).e.data
    const { run, e } = await page(['--limit', '2', '--cursor', first.next_cursor, '--fields', 'id', '--compact'])
    expect(run.code).toBe(0)
    expect(e.data.items).toEqual([{ id: '3' }])
  })
})

describe('cursors are bound to their query', () => {
  const mismatch = async (made: string[], replayed: string[]) => {
    seed(box(), [...ids(1, 2, 3, 4), { id: '5', title: 'd', status: 'done' }])
    const first = (await page([...made, '--limit', '2'])).e.data
    expect(first.next_cursor).toEqual(expect.any(String))
    return page([...replayed, '--cursor', first.next_cursor])
  }

  it('another filter is E_VALIDATION that names the flags to repeat', async () => {
    const { run, e } = await mismatch(['--status', 'open'], ['--status', 'done', '--limit', '2'])
    expect(run.code).toBe(2)
    expect(e.error.code).toBe('E_VALIDATION')
    expect(e.error.details).toMatchObject({ param: '--cursor', reason: 'cursor_query_mismatch' })
    expect(e.error.message).toContain('--limit 2 --status done')
    expect(e.error.message).toMatch(/repeat exactly the flags of the call that returned the cursor/)
  })

  it('dropping the filter is E_VALIDATION too (filters are never carried by the cursor)', async () => {
    const { e } = await mismatch(['--status', 'open'], ['--limit', '2'])
    expect(e.error.details.reason).toBe('cursor_query_mismatch')
  })

  it('another page size is E_VALIDATION', async () => {
    const { e } = await mismatch([], ['--limit', '3'])
    expect(e.error.details.reason).toBe('cursor_query_mismatch')
  })

  it('a cursor stays short however many filters bind it', async () => {
    seed(box(), ids(1, 2, 3))
    const cursor: string = (await page(['--limit', '1', '--status', 'open'])).e.data.next_cursor
    expect(cursor.length).toBeLessThanOrEqual(48)
  })

  it('an edited cursor is E_VALIDATION, whatever was changed', async () => {
    seed(box(), ids(1, 2, 3))
    const cursor: string = (await page(['--limit', '1'])).e.data.next_cursor
    const [prefix, key, digest, tag] = cursor.split('.') as [string, string, string, string]
    expect(JSON.parse(Buffer.from(key, 'base64url').toString())).toBe('1')
    // Move the position on, keeping digest and MAC: the forged cursor would skip item 2.
    const forged = Buffer.from(JSON.stringify('2')).toString('base64url')
    // Swap in the digest of another query (a cursor of the same command under --status done).
    seed(box(), [...ids(1, 2, 3), { id: '4', title: 'd', status: 'done' }, { id: '5', title: 'e', status: 'done' }])
    const other: string = (await page(['--limit', '1', '--status', 'done'])).e.data.next_cursor
    const otherDigest = other.split('.')[2]!
    for (const bad of [
      `${prefix}.${forged}.${digest}.${tag}`,
      `${prefix}.${key}.${otherDigest}.${tag}`,
      `${prefix}.${key}.${digest}`,
      `${prefix}.${key}.${digest}.${tag}.x`,
      `${prefix}.${key}..${tag}`,
      cursor.slice(0, -3),
      'bogus',
    ]) {
      const { run, e } = await page(['--limit', '1', '--cursor', bad])
      expect(run.code, bad).toBe(2)
      expect(e.error.details, bad).toMatchObject({ param: '--cursor', reason: 'cursor_invalid' })
    }
  })

  it("another command's cursor does not verify here", async () => {
    seed(box(), ids(1, 2))
    const cursor: string = (await page(['--limit', '1'])).e.data.next_cursor
    const run = await tasks(box(), ['job', 'list', '--limit', '1', '--cursor', cursor])
    expect(env(run).error).toMatchObject({ code: 'E_VALIDATION', details: { reason: 'cursor_invalid' } })
  })

  it('reference and SKILL.md say that filters must be repeated with --cursor', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    const list = ref.commands.find((c: { path: string }) => c.path === 'list')
    expect(list.pagination).toMatchObject({ repeat_filters: true })
    const cursor = list.params.find((p: { name: string }) => p.name === 'cursor')
    expect(cursor.description).toMatch(/Repeat the same filters/)
  })
})

describe('job list pages the same way', () => {
  it('newest first by keyset; every job once; a cursor under another --status is refused', async () => {
    const submitted: string[] = []
    for (let i = 0; i < 3; i++) submitted.push(env(await fixture(box(), ['sleepy', '--ms', '1'])).data.job_id)
    const seen: string[] = []
    let cursor: string | undefined
    let first: string | undefined
    do {
      const run = await fixture(box(), ['job', 'list', '--limit', '2', ...(cursor ? ['--cursor', cursor] : [])])
      expect(run.code).toBe(0)
      seen.push(...env(run).data.items.map((j: { job_id: string }) => j.job_id))
      cursor = env(run).data.next_cursor ?? undefined
      first ??= cursor
    } while (cursor)
    expect([...seen].sort()).toEqual([...submitted].sort())
    expect(seen).toHaveLength(3)
    const other = await fixture(box(), ['job', 'list', '--limit', '2', '--status', 'failed', '--cursor', first!])
    expect(env(other).error.details.reason).toBe('cursor_query_mismatch')
    // Each submit started a worker process: the sandbox's cleanup ends any still running before it goes.
  })
})
