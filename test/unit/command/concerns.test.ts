// Each concern of a command call has one home (docs/architecture.md, "Layout"): these fail when a second place
// starts doing what one module owns, as the redaction choke-point test does for the redactor.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../..')
const sources = (): Array<[string, string]> =>
  ['src', 'plugins/builtins/src']
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
  it('the env prefix is computed in src/settings.ts only', () => {
    expect(using(/\btoUpperCase\(\)\.replace\(/)).toEqual(['src/settings.ts'])
    expect(using(/\benvPrefix\(/)).toEqual(['src/settings.ts'])
  })

  it('--fields is selected and projected through src/output/fields.ts alone', () => {
    expect(using(/\b(selectFields|projectData|requestedFields)\(/)).toEqual([
      'src/output/fields.ts',
      'src/run/template.ts',
    ])
    // Each streamed item is projected by the NDJSON writer with the selection's paths.
    expect(using(/\bprojectObject\(/)).toEqual(['src/output/fields.ts', 'src/output/ndjson.ts'])
  })

  it('output validation is switched on and done in src/run/check-output.ts', () => {
    expect(using(/process\.env\.AGENTCLI_VALIDATE_OUTPUT\b/)).toEqual(['src/run/check-output.ts'])
    expect(using(/\.safeParse\(utcTimes\(/)).toEqual(['src/run/check-output.ts'])
  })

  it('a command reads the run state once, through its context', () => {
    expect(using(/\bgetRunState\(\)/)).toEqual(['src/_state.ts', 'src/command.ts', 'src/invocation.ts'])
    expect(readFileSync(join(root, 'src/command.ts'), 'utf8').match(/\bgetRunState\(\)/g)).toHaveLength(1)
  })

  it('the confirm token is verified in the write flow only', () => {
    expect(using(/\bverifyToken\(/)).toEqual(['src/confirm/token.ts', 'src/write/confirm-flow.ts'])
    expect(using(/\bmintToken\(/)).toEqual(['src/confirm/token.ts', 'src/write/dry-run.ts'])
  })

  it("a class between oclif's Command and a command hides none of Command's statics from the manifests", () => {
    for (const file of [
      'oclif.manifest.json',
      'plugins/builtins/oclif.manifest.json',
      'examples/tasks/oclif.manifest.json',
    ]) {
      const manifest = JSON.parse(readFileSync(join(root, file), 'utf8')) as { commands: Record<string, object> }
      for (const [id, entry] of Object.entries(manifest.commands))
        expect(entry, `${file}: ${id}`).toMatchObject({ strict: expect.any(Boolean), enableJsonFlag: false })
    }
  })
})
