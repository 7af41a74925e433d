// The import-graph gates of `npm run check` (.dependency-cruiser.mjs), each shown to fail: the checker runs with the
// project's own rules on a tiny fixture tree that breaks every rule once, beside imports each rule allows. Then what
// no forbidden rule can say, asked of the real graph: each surface routes through the router, and each module
// handling the universal flags by name derives them from the one table.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { cruise, type IConfiguration } from 'dependency-cruiser'
import { afterAll, describe, expect, it } from 'vitest'

/** The rules `npm run check` runs (a plain module, loaded by its URL: it has no type declarations). */
const configUrl = pathToFileURL(join(import.meta.dirname, '..', '..', '..', '.dependency-cruiser.mjs')).href
const config = ((await import(configUrl)) as { default: Required<IConfiguration> }).default

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A tree of `files` (path → source) in a new directory. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'agentcli-graph-'))
  dirs.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

/** The `rule: from → to` of every violation the project's rules find in `root`. */
async function violations(root: string): Promise<string[]> {
  const cwd = process.cwd()
  process.chdir(root)
  try {
    // The fixture has no tsconfig: resolution is by extension alone.
    const { tsConfig: _, ...options } = config.options
    const result = await cruise(['src'], {
      ...options,
      validate: true,
      ruleSet: { forbidden: config.forbidden } as never,
    })
    const output = result.output as {
      summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> }
    }
    return output.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort()
  } finally {
    process.chdir(cwd)
  }
}

/** An import in the real graph: the module imported, and whether only its types are. */
type Edge = { to: string; typeOnly: boolean }

/** The framework's own import graph (src/, type-only and dynamic imports included): module → its local imports. */
async function sourceGraph(): Promise<Map<string, Edge[]>> {
  const { tsConfig: _, ...options } = config.options
  const result = await cruise(['src'], { ...options, baseDir: join(import.meta.dirname, '..', '..', '..') })
  const output = result.output as {
    modules: Array<{ source: string; dependencies: Array<{ resolved: string; dependencyTypes: string[] }> }>
  }
  return new Map(
    output.modules.map((m) => [
      m.source,
      m.dependencies
        .filter((d) => d.resolved.startsWith('src/'))
        .map((d) => ({ to: d.resolved, typeOnly: d.dependencyTypes.includes('type-only') })),
    ]),
  )
}

/** The modules of `graph` importing `module` for more than its types. */
function importers(graph: Map<string, Edge[]>, module: string): string[] {
  return [...graph].filter(([, edges]) => edges.some((e) => e.to === module && !e.typeOnly)).map(([from]) => from)
}

/**
 * Whether `from` reaches `to` through the imports of `graph`, not through the public index: its re-exports reach
 * nearly everything, so a path through them would show nothing.
 */
function reaches(graph: Map<string, Edge[]>, from: string, to: string): boolean {
  const seen = new Set([from])
  for (const module of seen) {
    if (module === to) return true
    for (const edge of graph.get(module) ?? []) if (edge.to !== 'src/index.ts') seen.add(edge.to)
  }
  return false
}

let cruised: Promise<Map<string, Edge[]>> | undefined
/** {@link sourceGraph}, cruised once, when a test first asks (not while another test has moved the cwd). */
const realGraph = () => {
  cruised ??= sourceGraph()
  return cruised
}

const allowed = {
  'src/output/redact-proof.ts': 'export const vouchClean = (v: unknown) => v\n',
  'src/output/redact.ts':
    "import { vouchClean } from './redact-proof.js'\nexport const redactForOutput = (v: unknown) => vouchClean(v)\n",
  'src/describe/baked-compact.ts':
    "import { vouchClean } from '../output/redact-proof.js'\nexport const b = vouchClean\n",
  'src/output/stdout.ts': "import { redactForOutput } from './redact.js'\nexport const writeStdout = redactForOutput\n",
  'src/output/render.ts': "import { writeStdout } from './stdout.js'\nexport const render = writeStdout\n",
  'src/output/fields.ts': 'export const projectData = (v: unknown) => v\nexport type FieldSelection = string[]\n',
  'src/command.ts': "import type { FieldSelection } from './output/fields.js'\nexport type F = FieldSelection\n",
  'src/confirm/token.ts': 'export const verifyToken = () => true\nexport type Binding = { tool: string }\n',
  'src/write/confirm-flow.ts':
    "export async function confirm() {\n  const { verifyToken } = await import('../confirm/token.js')\n  return verifyToken()\n}\n",
  'src/write/call.ts': "import type { Binding } from '../confirm/token.js'\nexport type B = Binding\n",
  'src/audit/pending.ts': 'export const noteAudit = () => {}\n',
  'src/write-command.ts': "import { noteAudit } from './audit/pending.js'\nexport const n = noteAudit\n",
  'src/boot/_builtin.ts': 'export const b = 1\n',
  'src/settings/env-prefix.ts': 'export const envPrefix = (bin: string) => bin\n',
  'src/settings/tool-env.ts': "import { envPrefix } from './env-prefix.js'\nexport { envPrefix }\n",
  'src/run/check-output.ts': 'export const checkOutput = () => {}\n',
  'src/run/template.ts':
    "import { projectData } from '../output/fields.js'\nimport { checkOutput } from './check-output.js'\nexport const t = [projectData, checkOutput]\n",
  'src/runtime/run-state.ts': 'export type RunState = { bin: string }\nexport const getRunState = () => undefined\n',
  'src/runtime/run-io.ts': "import { getRunState } from './run-state.js'\nexport const runScript = getRunState\n",
  'src/jobs/state-user.ts': "import type { RunState } from '../runtime/run-state.js'\nexport type S = RunState\n",
  'src/boot/index.ts': "import { b } from './_builtin.js'\nexport const c = b\n",
  'src/flags.ts': 'export const Flags = {}\n',
  'src/universal-flags/table.ts': "export const UNIVERSAL_FLAGS = { json: { takes: 'switch' } } as const\n",
  'src/universal-flags/globals.ts':
    "import { Flags } from '../flags.js'\nimport { UNIVERSAL_FLAGS } from './table.js'\nexport const g = [Flags, UNIVERSAL_FLAGS]\n",
  'src/route/match.ts': "export const longestMatch = (words: string[]) => words.join(':')\n",
  'src/runtime/entry.ts': "import { longestMatch } from '../route/match.js'\nexport const route = longestMatch\n",
}

describe('the import-graph gates', () => {
  it('pass the imports each rule allows', async () => {
    expect(await violations(tree(allowed))).toEqual([])
  })

  it('fail on each violation: a circle (type-only too), a private file, a second home for a concern (the env prefix, output validation, the run state, the router and the redaction proof included), and an import by the table', async () => {
    const root = tree({
      ...allowed,
      'src/a.ts': "import type { B } from './b.js'\nexport type A = { b?: B }\n",
      'src/b.ts': "import type { A } from './a.js'\nexport type B = { a?: A }\n",
      'src/runtime/chunk.ts': "import { b } from '../boot/_builtin.js'\nexport const d = b\n",
      'src/jobs/log.ts': "import { redactForOutput } from '../output/redact.js'\nexport const l = redactForOutput\n",
      'src/builtins/vouch.ts': "import { vouchClean } from '../output/redact-proof.js'\nexport const v = vouchClean\n",
      'src/jobs/print.ts': "export * from '../output/stdout.js'\n",
      'src/mcp/peek.ts': "export const v = async () => (await import('../confirm/token.js')).verifyToken()\n",
      'src/list.ts': "import * as fields from './output/fields.js'\nexport const p = fields.projectData\n",
      'src/write/flow.ts': "import { noteAudit } from '../audit/pending.js'\nexport const f = noteAudit\n",
      'src/credentials/prefix.ts':
        "import { envPrefix } from '../settings/env-prefix.js'\nexport const p = envPrefix\n",
      'src/mcp/check.ts': "export * from '../run/check-output.js'\n",
      'src/run/prompt.ts': "import { getRunState } from '../runtime/run-state.js'\nexport const s = getRunState\n",
      'src/mcp/route.ts': "import { longestMatch } from '../route/match.js'\nexport const r = longestMatch\n",
      'src/universal-flags/table.ts':
        "import { Flags } from '../flags.js'\nexport const UNIVERSAL_FLAGS = { json: Flags } as const\n",
    })
    expect(await violations(root)).toEqual([
      'env-prefix-one-home: src/credentials/prefix.ts → src/settings/env-prefix.ts',
      'fields-in-one-place: src/list.ts → src/output/fields.ts',
      'no-circular: src/a.ts → src/b.ts',
      'one-audit-module: src/write/flow.ts → src/audit/pending.ts',
      'output-check-in-run-template: src/mcp/check.ts → src/run/check-output.ts',
      'private-stays-home: src/runtime/chunk.ts → src/boot/_builtin.ts',
      'redaction-proof-of-the-stored-compact: src/builtins/vouch.ts → src/output/redact-proof.ts',
      'redactor-at-choke-points: src/jobs/log.ts → src/output/redact.ts',
      'routing-in-route: src/mcp/route.ts → src/route/match.ts',
      'run-state-read-once: src/run/prompt.ts → src/runtime/run-state.ts',
      'stdout-through-renderer: src/jobs/print.ts → src/output/stdout.ts',
      'table-and-router-stand-alone: src/universal-flags/table.ts → src/flags.ts',
      'tokens-in-write-flow: src/mcp/peek.ts → src/confirm/token.ts',
    ])
  })
})

describe('the real import graph', () => {
  it('routes every surface through the one router: each starts from its command and reaches a module importing src/route/match.ts, and no other module imports it', async () => {
    const g = await realGraph()
    /** Each surface naming commands by words: where it starts, and its modules that match the words. */
    const surfaces = {
      'the CLI (the route step, the look-up of the tool’s own COMMANDS)': {
        from: 'src/boot/index.ts',
        routers: ['src/runtime/entry.ts', 'src/runtime/own-commands.ts'],
      },
      '`tool mcp` (a call run in its process; a call job’s command)': {
        from: 'src/builtins/commands/mcp.ts',
        routers: ['src/runtime/entry.ts', 'src/mcp/tasks.ts'],
      },
      '`reference <path>`': { from: 'src/builtins/commands/reference.ts', routers: ['src/describe/select.ts'] },
      '`agentcli verify` (the invariants’ command of a call)': {
        from: 'src/cli/commands/verify.ts',
        routers: ['src/verify/invariants.ts'],
      },
    }
    const routers = importers(g, 'src/route/match.ts')
    for (const [surface, { from, routers: its }] of Object.entries(surfaces))
      for (const router of its) {
        expect(routers, `${surface}: ${router} imports the router`).toContain(router)
        expect(reaches(g, from, router), `${surface}: ${from} reaches ${router}`).toBe(true)
      }
    expect(routers.sort()).toEqual([...new Set(Object.values(surfaces).flatMap((s) => s.routers))].sort())
  })

  it('derives the universal flags from the one table wherever they are handled by name: the table or its derivations in globals.ts', async () => {
    const g = await realGraph()
    // The argv scan and oclif's definitions, the session's settings, `reference`'s params, the MCP arguments and
    // a call's, and the examples verify runs.
    expect(importers(g, 'src/universal-flags/table.ts').sort()).toEqual([
      'src/describe/command.ts',
      'src/mcp/call-tool.ts',
      'src/mcp/tools.ts',
      'src/runtime/session.ts',
      'src/universal-flags/globals.ts',
      'src/verify/examples.ts',
    ])
    // GLOBAL_FLAGS and the scan: the commands' flags, what a confirm token leaves unbound, `reference`'s list, the
    // entry's and the session's argv, the fuzzer's picks.
    expect(importers(g, 'src/universal-flags/globals.ts').sort()).toEqual([
      'src/command.ts',
      'src/describe/reference.ts',
      'src/runtime/entry.ts',
      'src/runtime/session.ts',
      'src/verify/fuzz.ts',
      'src/write-command.ts',
      'src/write/flags.ts',
    ])
  })
})
