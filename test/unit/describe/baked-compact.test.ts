import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { BAKED_COMPACT_FILE, bakedCompact, bundleId, storedCompact } from '../../../src/describe/baked-compact.js'
import { DESCRIPTIONS_FILE } from '../../../src/describe/descriptions.js'
import type { Reference } from '../../../src/describe/reference.js'
import { provenUnder } from '../../../src/output/redact-proof.js'

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

const REFERENCE = { tool: 'x', version: '1.0.0', commands: [{ path: 'a', params: [] }] } as unknown as Reference
const STORED = { compact: true, tool: 'x', stored: 'as the build computed it' }

const ID = '0123456789abcdef0123456789abcdef'

/** A tool root with, in `dist/`, the build's file for `reference`, naming the bundle {@link ID}. */
function tool(
  full = JSON.stringify(REFERENCE),
  header: Record<string, unknown> = { agentcli_compact_reference: 1, bundle_id: ID },
): string {
  const root = mkdtempSync(join(tmpdir(), 'agentcli-baked-'))
  made.push(root)
  mkdirSync(join(root, 'dist'))
  writeFileSync(join(root, BAKED_COMPACT_FILE), `${JSON.stringify(header)}\n${full}\n${JSON.stringify(STORED)}\n`)
  return root
}

describe('the compact reference the build computed', () => {
  it('is used by the bundle it names, when the reference is the same JSON', () => {
    expect(bakedCompact(tool(), structuredClone(REFERENCE), ID)).toEqual(STORED)
  })

  it('is not used from the modules, by another bundle, for another reference, or from a file of another layout', () => {
    const root = tool()
    expect(bundleId()).toBeUndefined()
    expect(bakedCompact(root, REFERENCE)).toBeUndefined()
    expect(bakedCompact(root, REFERENCE, 'ffffffffffffffffffffffffffffffff')).toBeUndefined()
    expect(bakedCompact(root, { ...REFERENCE, version: '1.0.1' }, ID)).toBeUndefined()
    expect(
      bakedCompact(tool(undefined, { agentcli_compact_reference: 2, bundle_id: ID }), REFERENCE, ID),
    ).toBeUndefined()
    rmSync(join(root, BAKED_COMPACT_FILE))
    expect(bakedCompact(root, REFERENCE, ID)).toBeUndefined()
  })

  it('is not used for a reference JSON would not give back as it is, even with the same text', () => {
    const like = (extra: Record<string, unknown>) => ({ ...structuredClone(REFERENCE), ...extra }) as Reference
    const stored = (extra: Record<string, unknown>) => tool(JSON.stringify({ ...REFERENCE, ...extra }))
    // Each has the stored text as its JSON, but is not the value that text parses to.
    expect(bakedCompact(tool(), like({ hidden: undefined }), ID)).toBeUndefined()
    expect(bakedCompact(stored({ n: 0 }), like({ n: -0 }), ID)).toBeUndefined()
    expect(bakedCompact(stored({ list: [null] }), like({ list: new Array(1) }), ID)).toBeUndefined()
    expect(bakedCompact(stored({ at: new Date(0) }), like({ at: new Date(0) }), ID)).toBeUndefined()
    expect(bakedCompact(stored({ n: null }), like({ n: Number.NaN }), ID)).toBeUndefined()
    // The same values as plain JSON are used.
    expect(bakedCompact(stored({ n: 0, list: [null] }), like({ n: 0, list: [null] }), ID)).toEqual(STORED)
  })
})

describe('the compact reference the build stored with its inputs', () => {
  const INPUTS: Record<string, string> = {
    'package.json': '{"name":"x","version":"1.0.0"}\n',
    'oclif.manifest.json': '{"commands":{\n"a":{}\n}}\n',
    [DESCRIPTIONS_FILE]: '{"agentcli_descriptions":1}\n"a"\t{}\n',
  }

  /** A tool root with the three input files and the stored file naming them (or, `inputs` false, not). */
  function withInputs(inputs = true): string {
    const root = tool()
    for (const [file, text] of Object.entries(INPUTS)) writeFileSync(join(root, file), text)
    if (inputs) {
      const bytes = Object.values(INPUTS).map((text) => Buffer.from(text))
      const header = JSON.stringify({ agentcli_compact_reference: 1, bundle_id: ID })
      const full = JSON.stringify(REFERENCE)
      const lines = `${header}\n${full}\n${JSON.stringify(STORED)}\n${JSON.stringify(bytes.map((b) => b.length))}\n`
      writeFileSync(join(root, BAKED_COMPACT_FILE), Buffer.concat([Buffer.from(lines), ...bytes]))
    }
    return root
  }

  it('is printed without building the reference while the bundle and its three inputs are the same', () => {
    const root = withInputs()
    expect(storedCompact(root, ID)).toEqual(STORED)
    // The reference check still reads the same file.
    expect(bakedCompact(root, structuredClone(REFERENCE), ID)).toEqual(STORED)
  })

  it('is not used from the modules, by another bundle, without inputs, or once any input changed or is gone', () => {
    expect(storedCompact(withInputs())).toBeUndefined()
    expect(storedCompact(withInputs(), 'f'.repeat(32))).toBeUndefined()
    expect(storedCompact(withInputs(false), ID)).toBeUndefined()
    for (const file of Object.keys(INPUTS)) {
      const edited = withInputs()
      writeFileSync(join(edited, file), `${INPUTS[file]} `)
      expect(storedCompact(edited, ID), file).toBeUndefined()
      const gone = withInputs()
      rmSync(join(gone, file))
      expect(storedCompact(gone, ID), file).toBeUndefined()
    }
    const root = withInputs()
    rmSync(join(root, BAKED_COMPACT_FILE))
    expect(storedCompact(root, ID)).toBeUndefined()
  })

  it('is not used when the recorded lengths do not split what follows them exactly, or the inputs are recorded as text', () => {
    const header = JSON.stringify({ agentcli_compact_reference: 1, bundle_id: ID })
    const head = `${header}\n${JSON.stringify(REFERENCE)}\n${JSON.stringify(STORED)}\n`
    const bytes = Buffer.from(Object.values(INPUTS).join(''))
    const sizes = Object.values(INPUTS).map((text) => Buffer.byteLength(text))
    for (const [lengths, rest] of [
      [[...sizes.slice(0, 2), sizes[2]! - 1], bytes],
      [sizes, Buffer.concat([bytes, Buffer.from(' ')])],
      [sizes.slice(0, 2), bytes],
      [[sizes[0], sizes[1], -1], bytes],
      [Object.values(INPUTS), Buffer.alloc(0)],
    ] as const) {
      const root = withInputs(false)
      writeFileSync(
        join(root, BAKED_COMPACT_FILE),
        Buffer.concat([Buffer.from(`${head}${JSON.stringify(lengths)}\n`), rest]),
      )
      expect(storedCompact(root, ID), JSON.stringify(lengths)).toBeUndefined()
    }
  })
})

describe("the build's proof that the redactor leaves the stored form unchanged", () => {
  /** A tool root whose stored file's header carries `proof`. */
  const proved = (proof: unknown) =>
    tool(undefined, { agentcli_compact_reference: 1, bundle_id: ID, redaction_clean: proof })
  const bytes = Buffer.byteLength(JSON.stringify(STORED))

  it('vouches for the form it was made for, under the declared keys it names', () => {
    const compact = bakedCompact(proved({ keys: '[]', bytes }), structuredClone(REFERENCE), ID)
    expect(compact).toEqual(STORED)
    expect(provenUnder(compact!)).toBe('[]')
    expect(Object.isFrozen(compact)).toBe(true)
  })

  it('vouches for nothing without a proof, or with one made for a form of another length or without its keys', () => {
    for (const root of [tool(), proved({ keys: '[]', bytes: bytes + 1 }), proved({ bytes }), proved('[]')]) {
      const compact = bakedCompact(root, structuredClone(REFERENCE), ID)
      expect(compact).toEqual(STORED)
      expect(provenUnder(compact!)).toBeUndefined()
    }
  })
})
