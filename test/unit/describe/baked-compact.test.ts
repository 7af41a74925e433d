import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BAKED_COMPACT_FILE, bakedCompact } from '../../../src/describe/baked-compact.js'
import type { Reference } from '../../../src/describe/reference.js'

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const REFERENCE = { tool: 'x', version: '1.0.0', commands: [{ path: 'a', params: [] }] } as unknown as Reference
const STORED = { compact: true, tool: 'x', stored: 'as the build computed it' }

/** A tool root with a bundle and, beside it, the build's file for `reference` (its header taken from the bundle). */
function tool(full = JSON.stringify(REFERENCE), header?: Record<string, unknown>): { root: string; bundle: string } {
  const root = mkdtempSync(join(tmpdir(), 'agentcli-baked-'))
  made.push(root)
  mkdirSync(join(root, 'dist'))
  const bundle = join(root, 'dist/bundle.cjs')
  writeFileSync(bundle, 'module.exports = {}\n')
  const { size, mtimeMs } = statSync(bundle)
  const first = header ?? { agentcli_compact_reference: 1, bundle: { size, mtime_ms: mtimeMs } }
  writeFileSync(join(root, BAKED_COMPACT_FILE), `${JSON.stringify(first)}\n${full}\n${JSON.stringify(STORED)}\n`)
  return { root, bundle }
}

describe('the compact reference the build computed', () => {
  it('is used for the bundle it names, when the reference is the same JSON', () => {
    const { root, bundle } = tool()
    expect(bakedCompact(root, bundle, structuredClone(REFERENCE))).toEqual(STORED)
  })

  it('is not used from the modules, for another bundle, another reference, or a file of another layout', () => {
    const { root, bundle } = tool()
    expect(bakedCompact(root, undefined, REFERENCE)).toBeUndefined()
    writeFileSync(bundle, 'module.exports = { other: true }\n')
    expect(bakedCompact(root, bundle, REFERENCE)).toBeUndefined()
    const fresh = tool()
    expect(bakedCompact(fresh.root, fresh.bundle, { ...REFERENCE, version: '1.0.1' })).toBeUndefined()
    const marked = tool(undefined, { agentcli_compact_reference: 2 })
    expect(bakedCompact(marked.root, marked.bundle, REFERENCE)).toBeUndefined()
    const missing = tool()
    rmSync(join(missing.root, BAKED_COMPACT_FILE))
    expect(bakedCompact(missing.root, missing.bundle, REFERENCE)).toBeUndefined()
  })

  it('is not used for a reference JSON would not give back as it is, even with the same text', () => {
    const { root, bundle } = tool()
    const like = (extra: Record<string, unknown>) => ({ ...structuredClone(REFERENCE), ...extra }) as Reference
    // Each has the stored text as its JSON, but is not the value that text parses to.
    expect(bakedCompact(root, bundle, like({ hidden: undefined }))).toBeUndefined()
    const negativeZero = tool(JSON.stringify({ ...REFERENCE, n: 0 }))
    expect(bakedCompact(negativeZero.root, negativeZero.bundle, like({ n: -0 }))).toBeUndefined()
    const hole = tool(JSON.stringify({ ...REFERENCE, list: [null] }))
    expect(bakedCompact(hole.root, hole.bundle, like({ list: new Array(1) }))).toBeUndefined()
    const dated = tool(JSON.stringify({ ...REFERENCE, at: new Date(0) }))
    expect(bakedCompact(dated.root, dated.bundle, like({ at: new Date(0) }))).toBeUndefined()
    const counted = tool(JSON.stringify({ ...REFERENCE, n: null }))
    expect(bakedCompact(counted.root, counted.bundle, like({ n: Number.NaN }))).toBeUndefined()
  })
})
