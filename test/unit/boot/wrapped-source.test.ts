import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { wrap } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readWrapped } from '../../../src/boot/wrapped-source.js'

let dir: string | undefined
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true })
  dir = undefined
})

function file(content: string | Buffer): string {
  dir ??= mkdtempSync(join(tmpdir(), 'agentcli-wrapped-'))
  const path = join(dir, `bundle-${Math.random().toString(36).slice(2)}.cjs`)
  writeFileSync(path, content)
  return path
}

describe('a bundle read inside the module wrapper', () => {
  it('is exactly what Module.wrap makes of the file, ASCII or UTF-8, empty or large', () => {
    const ascii = 'module.exports = { run() { return "\\u2192" } }\n'
    const utf8 = '// a comment with → and é\nmodule.exports = "ü"\n'
    const large = `module.exports = ${JSON.stringify('x'.repeat(1_100_000))}\n`
    for (const text of [ascii, utf8, large, '']) expect(readWrapped(file(text))).toBe(wrap(text))
  })

  it('reads a file that is not ASCII as UTF-8, as the boot did before it wrapped while reading', () => {
    const bytes = Buffer.from('module.exports = "é"', 'utf8')
    expect(readWrapped(file(bytes))).toBe(wrap(bytes.toString('utf8')))
    expect(readWrapped(file(bytes))).not.toBe(wrap(bytes.toString('latin1')))
  })

  it('fails as reading the file would, for a file that is not there', () => {
    expect(() => readWrapped(join(tmpdir(), 'agentcli-no-such-bundle.cjs'))).toThrow(/ENOENT/)
  })
})
