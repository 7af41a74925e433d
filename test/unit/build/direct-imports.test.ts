import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { directImports, indexOrigins } from '../../../src/build/direct-imports.js'

const INDEX = `/**
 * agentcli: re-exports only.
 */
export * as Args from '@oclif/core/args';
export { AgentCommand } from './command.js';
export { AgentError, isAgentError, } from './errors/agent-error.js';
// a line comment
export { paginate as page, paginationFlags } from './list/paginate.js';
`
const where = (from: string) => (from.startsWith('.') ? `/fw/dist/${from.slice(2)}` : `/nm/${from}.js`)

describe('directImports: the tool imports each framework name from its own module', () => {
  const origins = indexOrigins(INDEX)

  it('reads the index: named, renamed and namespace re-exports', () => {
    expect(origins && Object.fromEntries(origins)).toEqual({
      Args: { from: '@oclif/core/args', name: '*' },
      AgentCommand: { from: './command.js', name: 'AgentCommand' },
      AgentError: { from: './errors/agent-error.js', name: 'AgentError' },
      isAgentError: { from: './errors/agent-error.js', name: 'isAgentError' },
      page: { from: './list/paginate.js', name: 'paginate' },
      paginationFlags: { from: './list/paginate.js', name: 'paginationFlags' },
    })
  })

  it('reads the real index whole', () => {
    const real = indexOrigins(readFileSync(join(import.meta.dirname, '../../../dist/index.js'), 'utf8'))
    expect(real?.get('AgentCommand')).toEqual({ from: './command.js', name: 'AgentCommand' })
    expect(real?.get('WriteCommand')).toEqual({ from: './write-command.js', name: 'WriteCommand' })
  })

  it('refuses an index holding anything but re-exports', () => {
    expect(indexOrigins(`${INDEX}export const x = 1;\n`)).toBeUndefined()
    expect(indexOrigins(`${INDEX}export * from './all.js';\n`)).toBeUndefined()
    expect(indexOrigins(`${INDEX}export { 'a-b' as c } from './x.js';\n`)).toBeUndefined()
  })

  it('rewrites an import over several lines into one line per statement, keeping line numbers', () => {
    const source = `import { AgentCommand,\n  isAgentError as isErr, Args, page } from 'agentcli';\nconst x = 1\n`
    const out = directImports(source, origins as never, where)
    expect(out).toBe(
      'import { AgentCommand } from "/fw/dist/command.js"; import { isAgentError as isErr } from "/fw/dist/errors/agent-error.js"; ' +
        'import { paginate as page } from "/fw/dist/list/paginate.js"; import * as Args from "/nm/@oclif/core/args.js";\n\n' +
        'const x = 1\n',
    )
    expect(out?.split('\n')).toHaveLength(source.split('\n').length)
  })

  it('leaves alone what it cannot read whole', () => {
    for (const source of [
      `import { AgentCommand, WriteCommand } from 'agentcli'\n`, // a name the index does not hold
      `import * as agentcli from 'agentcli'\n`,
      `import agentcli from 'agentcli'\n`,
      `import {} from 'agentcli'\n`,
      `import { AgentCommand } from 'agentcli/testing'\n`,
      `// import { AgentCommand } from 'agentcli'\n`,
      `const s = "x"; import { AgentCommand } from 'agentcli'\n`,
    ])
      expect(directImports(source, origins as never, where), source).toBeUndefined()
  })

  it('rewrites every such statement of a module, and only those', () => {
    const source = `import { readFileSync } from 'node:fs'\nimport { AgentError } from "agentcli";\n\timport { paginationFlags } from 'agentcli'\n`
    expect(directImports(source, origins as never, where)).toBe(
      `import { readFileSync } from 'node:fs'\nimport { AgentError } from "/fw/dist/errors/agent-error.js";\n\timport { paginationFlags } from "/fw/dist/list/paginate.js";\n`,
    )
  })
})
