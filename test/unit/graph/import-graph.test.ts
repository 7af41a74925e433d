// The import-graph gates of `npm run check` (.dependency-cruiser.mjs), each shown to fail: the checker runs with the
// project's own rules on a tiny fixture tree that breaks every rule once, beside imports each rule allows.
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

const allowed = {
  'src/output/redact.ts': 'export const redactForOutput = (v: unknown) => v\n',
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
}

describe('the import-graph gates', () => {
  it('pass the imports each rule allows', async () => {
    expect(await violations(tree(allowed))).toEqual([])
  })

  it('fail on each violation: a circle (type-only too), a private file, and a second home for a concern (the env prefix, output validation and the run state included)', async () => {
    const root = tree({
      ...allowed,
      'src/a.ts': "import type { B } from './b.js'\nexport type A = { b?: B }\n",
      'src/b.ts': "import type { A } from './a.js'\nexport type B = { a?: A }\n",
      'src/runtime/chunk.ts': "import { b } from '../boot/_builtin.js'\nexport const d = b\n",
      'src/jobs/log.ts': "import { redactForOutput } from '../output/redact.js'\nexport const l = redactForOutput\n",
      'src/jobs/print.ts': "export * from '../output/stdout.js'\n",
      'src/mcp/peek.ts': "export const v = async () => (await import('../confirm/token.js')).verifyToken()\n",
      'src/list.ts': "import * as fields from './output/fields.js'\nexport const p = fields.projectData\n",
      'src/write/flow.ts': "import { noteAudit } from '../audit/pending.js'\nexport const f = noteAudit\n",
      'src/credentials/prefix.ts':
        "import { envPrefix } from '../settings/env-prefix.js'\nexport const p = envPrefix\n",
      'src/mcp/check.ts': "export * from '../run/check-output.js'\n",
      'src/run/prompt.ts': "import { getRunState } from '../runtime/run-state.js'\nexport const s = getRunState\n",
    })
    expect(await violations(root)).toEqual([
      'env-prefix-one-home: src/credentials/prefix.ts → src/settings/env-prefix.ts',
      'fields-in-one-place: src/list.ts → src/output/fields.ts',
      'no-circular: src/a.ts → src/b.ts',
      'one-audit-module: src/write/flow.ts → src/audit/pending.ts',
      'output-check-in-run-template: src/mcp/check.ts → src/run/check-output.ts',
      'private-stays-home: src/runtime/chunk.ts → src/boot/_builtin.ts',
      'redactor-at-choke-points: src/jobs/log.ts → src/output/redact.ts',
      'run-state-read-once: src/run/prompt.ts → src/runtime/run-state.ts',
      'stdout-through-renderer: src/jobs/print.ts → src/output/stdout.ts',
      'tokens-in-write-flow: src/mcp/peek.ts → src/confirm/token.ts',
    ])
  })
})
