import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readPjson } from '../../../src/runtime/own-commands.js'

// An in-process caller (an MCP server's reads) runs many times in one process: package.json is read and parsed
// once while it is unchanged on disk, and an edit is seen by the next run, as a new process would see it.
describe('readPjson for many runs of one process', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const tool = (pjson: Record<string, unknown>) => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-pjson-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'package.json'), JSON.stringify(pjson))
    return dir
  }

  it('shares what an unchanged file parsed to, and sees an edit at the next run', () => {
    const dir = tool({ name: 'a', version: '1.0.0', oclif: { bin: 'a' } })
    const first = readPjson(dir, undefined, true)
    expect(readPjson(dir, undefined, true).pjson).toBe(first.pjson)
    // A longer text: its stat differs whatever the file system's clock resolution.
    writeFileSync(
      join(dir, 'package.json'),
      JSON.stringify({ name: 'a', version: '2.0.0-edited', oclif: { bin: 'a' } }),
    )
    const edited = readPjson(dir, undefined, true)
    expect(edited.pjson.version).toBe('2.0.0-edited')
    expect(edited.pjson).not.toBe(first.pjson)
  })

  it('parses its own copy for each run without reuse, and keeps a bundle target apart', () => {
    const dir = tool({ name: 'b', version: '1.0.0', oclif: { bin: 'b', commands: './dist/index.js' } })
    expect(readPjson(dir, undefined).pjson).not.toBe(readPjson(dir, undefined).pjson)
    const plain = readPjson(dir, undefined, true).pjson
    const bundled = readPjson(dir, join(dir, 'dist', 'bundle.cjs'), true).pjson
    expect(bundled.oclif?.commands).toEqual({
      strategy: 'explicit',
      target: './dist/bundle.cjs',
      identifier: 'default',
    })
    expect(plain.oclif?.commands).toBe('./dist/index.js')
  })
})
