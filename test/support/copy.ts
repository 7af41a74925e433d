import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { DESCRIPTIONS_FILE } from '../../src/describe/descriptions.js'
import { ROOT } from './helpers.js'

/**
 * Copy a tool into a temporary folder inside the repository (so `agentcli` and the plugin still resolve from
 * the root node_modules) and let the test edit it. Removed after each test.
 */
export function useToolCopy(): (source: string, edit?: (dir: string) => void) => string {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return (source, edit) => {
    const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-'))
    made.push(dir)
    cpSync(join(ROOT, source), dir, { recursive: true, filter: (p) => !p.includes('node_modules') })
    edit?.(dir)
    return dir
  }
}

/** Edit a JSON file in place. */
export function editJson(path: string, edit: (value: Record<string, unknown>) => void): void {
  const value = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>
  edit(value)
  writeFileSync(path, JSON.stringify(value, null, 2))
}

/**
 * Edits of the three texts the build's stored help and reference were computed from (package.json, the manifest,
 * the descriptions file), each in a copy of the example at `dir`: after any one, a run must not use what was stored.
 */
export const STORED_INPUT_EDITS: readonly [what: string, edit: (dir: string) => void][] = [
  [
    'package.json',
    (dir) =>
      editJson(join(dir, 'package.json'), (p) => {
        p.description = 'Another.'
      }),
  ],
  ['manifest', (dir) => appendLine(join(dir, 'oclif.manifest.json'))],
  [
    'descriptions',
    (dir) => {
      const path = join(dir, DESCRIPTIONS_FILE)
      writeFileSync(path, readFileSync(path, 'utf8').replaceAll('Tasks ordered by id', 'Tasks in id order'))
    },
  ],
]

function appendLine(path: string): void {
  writeFileSync(path, `${readFileSync(path, 'utf8')}\n`)
}
