import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { coverage, enforceFcc, fccGuard, invokes } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { ROOT, TASKS_BIN } from '../../support/helpers.js'

describe('the FCC guard', () => {
  it('passes for the example tool: every leaf command has a command-level test', async () => {
    const report = await fccGuard({ bin: TASKS_BIN, testDir: join(ROOT, 'test') })
    expect(report.fcc_status).toBe('verified')
    expect(report.missing).toEqual([])
    expect(report.leaves.length).toBeGreaterThanOrEqual(6)
  })

  it("counts only the tool's own commands: the built-ins are the framework's to test", async () => {
    const report = await fccGuard({ bin: TASKS_BIN, testDir: join(ROOT, 'test') })
    expect(report.builtins).toEqual(expect.arrayContaining(['changelog', 'doctor', 'job status', 'reference']))
    expect(report.leaves).toContain('whoami')
    for (const builtin of report.builtins) expect(report.leaves).not.toContain(builtin)
  })

  it('fails when the tests of one command are deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fcc-'))
    try {
      cpSync(join(ROOT, 'test'), dir, { recursive: true, filter: (p) => !p.includes('fixtures') })
      for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) =>
        n.endsWith('.test.ts'),
      )) {
        const path = join(dir, name)
        writeFileSync(path, readFileSync(path, 'utf8').replace(/\['whoami'/g, "['removed'"))
      }
      await expect(fccGuard({ bin: TASKS_BIN, testDir: dir })).rejects.toThrow(/no command-level test invokes: whoami$/)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it('counts argv literals, not mentions', () => {
    expect(invokes("tasks(box(), ['job', 'status', '--id', '1'])", 'job status')).toBe(true)
    expect(invokes("it('job status works')", 'job status')).toBe(false)
    expect(invokes("run(['list'])", 'list')).toBe(true)
    expect(invokes("run(['listing'])", 'list')).toBe(false)
  })

  it('fails on zero leaves, and does not enforce an honest missing', () => {
    expect(() => enforceFcc({ fcc_status: 'verified', leaves: [], covered: [], missing: [] })).toThrow(/no commands/)
    const honest = { fcc_status: 'missing', leaves: ['a'], ...coverage(['a'], []) }
    expect(enforceFcc(honest).missing).toEqual(['a'])
  })
})
