import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { bundleTool } from '../../../src/build/bundle.js'

const EXAMPLE_PJSON = join(import.meta.dirname, '../../../examples/tasks/package.json')

/*
 * What `agentcli-build` refuses to bundle, judged from the tool's package.json before anything is built. The bin's
 * own failure path (stderr, exit 1) is shown in test/cli/describe/self-description.test.ts.
 */
const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A tool directory holding the example's package.json, edited by `edit`. */
function tool(edit: (pjson: { oclif: Record<string, unknown> }, dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-bundle-refusals-'))
  made.push(dir)
  const pjson = JSON.parse(readFileSync(EXAMPLE_PJSON, 'utf8'))
  edit(pjson, dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify(pjson))
  return dir
}

describe('agentcli-build with agentcli.bundle', () => {
  it('refuses a tool that does not use the explicit command strategy', async () => {
    const dir = tool((pjson) => {
      pjson.oclif.commands = './dist/commands'
    })
    await expect(bundleTool(dir)).rejects.toThrow('agentcli.bundle needs oclif.commands to use the explicit strategy')
  })

  it('refuses to bundle an agentcli plugin listed in oclif.plugins (it would load a second agentcli)', async () => {
    const dir = tool((pjson, d) => {
      pjson.oclif.plugins = ['@acme/plugin-notes']
      const plugin = join(d, 'node_modules/@acme/plugin-notes')
      mkdirSync(plugin, { recursive: true })
      writeFileSync(
        join(plugin, 'package.json'),
        JSON.stringify({ name: '@acme/plugin-notes', version: '1.0.0', peerDependencies: { agentcli: '*' } }),
      )
    })
    await expect(bundleTool(dir)).rejects.toThrow('cannot bundle oclif plugins built on agentcli (@acme/plugin-notes)')
  })
})
