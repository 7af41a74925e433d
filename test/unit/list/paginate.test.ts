import { describe, expect, it } from 'vitest'
import { paginate } from '../../../src/list/paginate.js'

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
