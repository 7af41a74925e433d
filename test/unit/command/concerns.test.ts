// Each concern of a command call has one home (docs/architecture.md, "Layout"). Where the home is a module, the
// import graph says who may use it (.dependency-cruiser.mjs, run by `npm run check` and shown failing in
// test/unit/graph/import-graph.test.ts: the redactor, stdout, confirm tokens, --fields, the audit, the env prefix,
// output validation, the run state). What is left here is a property of the built manifests.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

const root = join(import.meta.dirname, '../../..')

describe('one home per concern', () => {
  it("a class between oclif's Command and a command hides none of Command's statics from the manifests", () => {
    for (const file of ['oclif.manifest.json', 'examples/tasks/oclif.manifest.json']) {
      const manifest = JSON.parse(readFileSync(join(root, file), 'utf8')) as { commands: Record<string, object> }
      for (const [id, entry] of Object.entries(manifest.commands))
        expect(entry, `${file}: ${id}`).toMatchObject({ strict: expect.any(Boolean), enableJsonFlag: false })
    }
  })
})
