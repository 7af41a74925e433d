import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { asciiOnly } from '../../../src/build/bundle-ascii.js'
import { useToolCopy } from '../../support/copy.js'
import { ROOT, useSandbox } from '../../support/helpers.js'

const box = useSandbox()
const copy = useToolCopy()
const NON_ASCII = /[^\0-\x7f]/

// Non-ASCII text where esbuild's charset: 'ascii' leaves it (a class field's comment, a regular expression) and
// where it escapes it itself (a string).
const PROBE = `import { AgentCommand, output } from 'agentcli'
export default class Probe extends AgentCommand {
  /** Déjà vu → a comment on a class field, which esbuild keeps. */
  static summary = 'Answer with non-ASCII text'
  static examples = ['<%= config.bin %> probe']
  static output = output((z) => z.object({ text: z.string(), matched: z.boolean() }))
  async execute() {
    return { text: 'é → 😀', matched: /^[é→]+ 😀$/u.test('é→ 😀') && /[\u009b]/.test('\\u009b') }
  }
}
`

describe('the bundle is pure ASCII', () => {
  it('for the example tool as shipped', () => {
    expect(NON_ASCII.test(readFileSync(join(ROOT, 'examples/tasks/dist/bundle.cjs'), 'utf8'))).toBe(false)
  })

  it('with non-ASCII comments, regular expressions and strings in the source, which mean what they meant', () => {
    const dir = copy('examples/tasks', (d) => {
      writeFileSync(join(d, 'dist/commands/probe.js'), PROBE)
      const index = join(d, 'dist/index.js')
      writeFileSync(
        index,
        `${readFileSync(index, 'utf8')}\nimport Probe from './commands/probe.js';\nCOMMANDS.probe = Probe;\n`,
      )
    })
    const built = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), dir], { encoding: 'utf8' })
    expect(built.status, built.stderr).toBe(0)
    const bundle = readFileSync(join(dir, 'dist/bundle.cjs'), 'utf8')
    // The bundle is written without comments (minified whitespace); were one kept, it would be escaped too.
    expect(bundle).not.toContain('a comment on a class field')
    expect(NON_ASCII.test(bundle)).toBe(false)
    const run = spawnSync(process.execPath, [join(dir, 'bin/run.js'), 'probe'], {
      encoding: 'utf8',
      env: { ...box().env },
    })
    expect(run.status, run.stderr).toBe(0)
    expect(JSON.parse(run.stdout).data).toEqual({ text: 'é → 😀', matched: true })
  })

  it('or the build fails where escaping would change the meaning (a non-ASCII character after a backslash)', () => {
    expect(asciiOnly('/* é */ /[\\u00e9]/')).toBe('/* \\u00e9 */ /[\\u00e9]/')
    expect(() => asciiOnly('/\\é/')).toThrow(/escaped non-ASCII character \(U\+00e9\)/)
    expect(asciiOnly('/\\\\é/')).toBe('/\\\\\\u00e9/')
  })
})
