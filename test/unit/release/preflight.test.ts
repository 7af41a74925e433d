import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { preflight } from '../../../src/release/preflight.js'

const work = mkdtempSync(join(tmpdir(), 'agentcli-preflight-'))
afterAll(() => rmSync(work, { recursive: true, force: true }))

/** A built tool whose package.json declares this release readiness (none when undefined). */
function tool(readiness?: Record<string, unknown>): string {
  const dir = mkdtempSync(join(work, 'tool-'))
  const agentcli = readiness ? { release_readiness: readiness } : {}
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'mytool', version: '1.0.0', oclif: { bin: 'mytool' }, agentcli }),
  )
  writeFileSync(join(dir, 'oclif.manifest.json'), '{"commands":{}}')
  return dir
}

describe('the release gate in preflight', () => {
  it('refuses a tool that declares no readiness, naming the reason and the fix', () => {
    expect(() => preflight({ toolDir: tool() })).toThrow(
      /mytool 1\.0\.0 is unpublishable \(no release evidence.*fcc_status/,
    )
  })

  it('refuses one whose FCC status is missing, or that declares itself unpublishable', () => {
    expect(() =>
      preflight({ toolDir: tool({ fcc_status: 'missing', mock_upstream_status: 'not_applicable' }) }),
    ).toThrow(/unpublishable \(not releasable: fcc_status is missing\)/)
    expect(() =>
      preflight({
        toolDir: tool({ fcc_status: 'verified', mock_upstream_status: 'missing', live_smoke_status: 'verified' }),
      }),
    ).toThrow(/mock_upstream_status is missing/)
    expect(() =>
      preflight({
        toolDir: tool({ level: 'unpublishable', fcc_status: 'verified', mock_upstream_status: 'not_applicable' }),
      }),
    ).toThrow(/is unpublishable/)
  })

  it('lets a beta or stable tool through', () => {
    const beta = preflight({ toolDir: tool({ fcc_status: 'verified', mock_upstream_status: 'not_applicable' }) })
    expect(beta.bin).toBe('mytool')
    const stable = tool({ fcc_status: 'verified', mock_upstream_status: 'verified', live_smoke_status: 'verified' })
    expect(preflight({ toolDir: stable }).pjson.version).toBe('1.0.0')
  })
})
