import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach } from 'vitest'
import { DESCRIPTIONS_FILE } from '../../src/describe/descriptions.js'

/** The texts a command memo is computed from, as a tool root holds them. */
export type MemoTexts = { pjson: string; manifest: string; descriptions: string }

/**
 * Make tool roots as the build leaves them for a command memo (package.json, the manifest, the descriptions file,
 * a `dist/` for the memo itself), each removed after its test.
 */
export function useMemoRoots(): (texts: MemoTexts) => string {
  const made: string[] = []
  afterEach(() => {
    for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  return ({ pjson, manifest, descriptions }) => {
    const root = mkdtempSync(join(tmpdir(), 'agentcli-memo-'))
    made.push(root)
    mkdirSync(join(root, 'dist'))
    writeFileSync(join(root, 'package.json'), pjson)
    writeFileSync(join(root, 'oclif.manifest.json'), manifest)
    writeFileSync(join(root, DESCRIPTIONS_FILE), descriptions)
    return root
  }
}
