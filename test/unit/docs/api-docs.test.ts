import { join } from 'node:path'
import ts from 'typescript'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'

/** Every entry point of the package, as `exports` in package.json lists them. */
const ENTRIES = [
  'src/index.ts',
  'src/entry.ts',
  'src/internal.ts',
  'src/testing/index.ts',
  'src/jobs/index.ts',
  'src/credentials/index.ts',
  'src/http/index.ts',
  'src/update/index.ts',
  'src/describe/index.ts',
  'src/fs/index.ts',
  'src/boot/index.ts',
]

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
    const internal = await import('agentcli/internal')
    expect(typeof internal.envPrefix).toBe('function')
    expect(typeof internal.readToolSettings).toBe('function')
  })

  it('has no static a command declares but nothing reads', async () => {
    const { AgentCommand } = await import('agentcli')
    expect(AgentCommand).not.toHaveProperty('interruptible')
  })
})
