import { builtins, COMMANDS } from 'agentcli/builtins'
import { describe, expect, it } from 'vitest'

describe('builtins(): a tool chooses its built-ins', () => {
  it('ships every built-in by default, the same classes as COMMANDS', () => {
    expect(builtins()).toEqual(COMMANDS)
  })

  it('leaves out update, the job commands, mcp, or any mix; the discovery built-ins always stay', () => {
    const always = ['approve', 'changelog', 'context', 'doctor', 'reference']
    const jobs = Object.keys(COMMANDS).filter((id) => id.startsWith('job:'))
    expect(jobs.length).toBeGreaterThanOrEqual(4)
    expect(Object.keys(builtins({ update: false })).sort()).toEqual([...always, ...jobs, 'mcp'].sort())
    expect(Object.keys(builtins({ jobs: false })).sort()).toEqual([...always, 'mcp', 'update'].sort())
    expect(Object.keys(builtins({ mcp: false })).sort()).toEqual([...always, ...jobs, 'update'].sort())
    expect(Object.keys(builtins({ update: false, jobs: false, mcp: false })).sort()).toEqual(always)
    expect(builtins({ update: false, jobs: false }).reference).toBe(COMMANDS.reference)
  })
})
