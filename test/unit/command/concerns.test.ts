// Each concern of a command call has one home (docs/architecture.md, "Layout"). Where the home is a module, the
// import graph says who may use it (.dependency-cruiser.mjs, run by `npm run check` and shown failing in
// test/unit/graph/import-graph.test.ts: the redactor, stdout, confirm tokens, --fields, the audit). What is left here
// are concerns that are a pattern of code rather than an import: these fail when a second place starts doing it.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../..')
const sources = (): Array<[string, string]> =>
  ['src']
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.ts'))
        .map((e) => join(e.parentPath, e.name)),
    )
    .map((path) => [relative(root, path), readFileSync(path, 'utf8')])

/** The files whose code (comments aside) matches `pattern`. */
function using(pattern: RegExp): string[] {
  return sources()
    .filter(([, text]) => pattern.test(text.replace(/^\s*(\/\/|\*|\/\*).*$/gm, '')))
    .map(([path]) => path)
    .sort()
}

describe('one home per concern', () => {
  it('the env prefix is computed in src/settings/tool-env.ts only', () => {
    expect(using(/\btoUpperCase\(\)\.replace\(/)).toEqual(['src/settings/tool-env.ts'])
    expect(using(/\benvPrefix\(/)).toEqual(['src/settings/tool-env.ts'])
  })

  it('output validation is switched on and done in src/run/check-output.ts', () => {
    expect(using(/(process\.env|runEnv\(\))\.AGENTCLI_VALIDATE_OUTPUT\b/)).toEqual(['src/run/check-output.ts'])
    expect(using(/\.safeParse\(utcTimes\(/)).toEqual(['src/run/check-output.ts'])
  })

  it('a command reads the run state once, through its context', () => {
    expect(using(/\bgetRunState\(\)/)).toEqual([
      'src/command.ts',
      // Not a command: `tool mcp` keeps its own run state across a read it runs in its process, and puts it back.
      'src/mcp/in-process.ts',
      'src/runtime/invocation.ts',
      'src/runtime/run-state.ts',
      // Not a command: an in-process run gives its caller the caller's run state back when it ends.
      'src/runtime/session.ts',
    ])
    expect(readFileSync(join(root, 'src/command.ts'), 'utf8').match(/\bgetRunState\(\)/g)).toHaveLength(1)
  })

  it("a class between oclif's Command and a command hides none of Command's statics from the manifests", () => {
    for (const file of ['oclif.manifest.json', 'examples/tasks/oclif.manifest.json']) {
      const manifest = JSON.parse(readFileSync(join(root, file), 'utf8')) as { commands: Record<string, object> }
      for (const [id, entry] of Object.entries(manifest.commands))
        expect(entry, `${file}: ${id}`).toMatchObject({ strict: expect.any(Boolean), enableJsonFlag: false })
    }
  })
})
