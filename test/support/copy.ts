import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach } from 'vitest'
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
