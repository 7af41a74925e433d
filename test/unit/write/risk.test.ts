// A write's declared risk: validated when described, the strictest reading when undeclared, and the dry-run's
// impact names every target (up to a bound) with whether the change can be undone.
import { describe, expect, it } from 'vitest'
import { describeCommand } from '../../../src/describe/command.js'
import { loadZod } from '../../../src/schema/output.js'
import { impactOf, NAMED_TARGETS } from '../../../src/write/impact.js'
import { riskOf, riskText, UNDECLARED_RISK } from '../../../src/write/risk.js'

const del = { action: 'delete', blast_radius: 'set', reversible: false, undo: null, cost: null } as const

describe('risk', () => {
  it('is undefined for a read, the strictest reading for an undeclared write, and the declaration otherwise', async () => {
    const z = await loadZod()
    expect(riskOf({ id: 'list' }, 'read', z)).toBeUndefined()
    expect(riskOf({ id: 'x' }, 'write', z)).toEqual(UNDECLARED_RISK)
    expect(riskOf({ id: 'x', risk: del }, 'write', z)).toEqual(del)
  })

  it('refuses a declaration that does not parse, naming the command', async () => {
    const z = await loadZod()
    expect(() => riskOf({ id: 'wipe', risk: { ...del, action: 'obliterate' } }, 'write', z)).toThrow(/wipe declares/)
    expect(() => riskOf({ id: 'wipe', risk: { ...del, extra: 1 } }, 'write', z)).toThrow(/invalid risk/)
    expect(() => riskOf({ risk: { ...del, undo: 5 } }, 'write', z)).toThrow(/a command declares/)
  })

  it('is described in reference, and a create-only risk is not destructive', async () => {
    const z = await loadZod()
    const d = describeCommand({ id: 'rm', kind: 'write', risk: del } as never, 't', z)
    expect(d.risk).toEqual(del)
    expect(d.hints?.destructive).toBe(true)
    const c = describeCommand({ id: 'add', kind: 'write', risk: { ...del, action: 'create' } } as never, 't', z)
    expect(c.hints?.destructive).toBe(false)
    expect(describeCommand({ id: 'ls' } as never, 't', z).risk).toBeUndefined()
  })

  it('reads in words', () => {
    expect(riskText(del)).toBe('delete; a set of records; cannot be undone')
    expect(riskText({ ...del, blast_radius: 'one', reversible: true, undo: 'x restore', cost: '$1' })).toBe(
      'delete; one record; undo: x restore; cost: $1',
    )
    expect(riskText({ ...del, blast_radius: 'all', reversible: true })).toBe('delete; every record; can be undone')
  })

  it('gives a preview its impact: the count, the ids named up to a bound, what cannot be undone', () => {
    const targets = Array.from({ length: NAMED_TARGETS + 3 }, (_, i) => ({ id: `t${i}`, version: 1 }))
    const impact = impactOf(del, { changes: [], targets })
    expect(impact).toMatchObject({ action: 'delete', target_count: NAMED_TARGETS + 3, targets_more: 3 })
    expect(impact.targets).toHaveLength(NAMED_TARGETS)
    expect(impact.reversible).toBe(false)
    expect(impactOf(del, { changes: [] })).toEqual({ ...del, target_count: 0, targets: [] })
  })
})
