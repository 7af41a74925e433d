import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

type Exports = Record<string, string | { types: string; default: string }>
const EXPORTS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { exports: Exports }).exports
/** Every entry point of the package, as `exports` in package.json lists them (their sources). */
const ENTRIES = Object.values(EXPORTS)
  .filter((target) => typeof target === 'object')
  .map((target) => target.types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.ts$/, '.ts'))

describe('the public API', () => {
  it('has JSDoc on every export of every entry point (re-exports of oclif aside)', () => {
    const program = ts.createProgram(
      ENTRIES.map((e) => join(ROOT, e)),
      {
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        skipLibCheck: true,
      },
    )
    const checker = program.getTypeChecker()
    const undocumented: string[] = []
    for (const entry of ENTRIES) {
      const module = checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, entry))!)!
      for (const exported of checker.getExportsOfModule(module)) {
        const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported
        const file = symbol.declarations?.[0]?.getSourceFile().fileName ?? ''
        if (file.includes('/node_modules/')) continue
        if (!ts.displayPartsToString(symbol.getDocumentationComment(checker)).trim())
          undocumented.push(`${entry}: ${exported.name}`)
      }
    }
    expect(undocumented).toEqual([])
  }, 60_000)

  it('is small: at most 6 entry points, none of them internal, at most 70 runtime exports in all', async () => {
    const entries = Object.keys(EXPORTS).filter((key) => key !== './package.json')
    expect(entries).toEqual(['.', './boot', './testing', './builtins'])
    let count = 0
    for (const entry of entries) count += Object.keys(await import(entry.replace(/^\./, 'agentcli'))).length
    expect(count).toBeLessThanOrEqual(70)
  })

  it('keeps the built-ins’ internals off the main entry point', async () => {
    const api = await import('agentcli')
    for (const name of [
      'envPrefix',
      'readToolSettings',
      'GLOBAL_FLAGS',
      'WRITE_FLAGS',
      'CORE_CATALOGUE',
      'dryRunSchema',
    ])
      expect(api, name).not.toHaveProperty(name)
  })

  it('has no static a command declares but nothing reads', async () => {
    const { AgentCommand } = await import('agentcli')
    expect(AgentCommand).not.toHaveProperty('interruptible')
  })
})
