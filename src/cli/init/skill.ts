import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { buildTool } from '../../build/build-tool.js'

/**
 * Render the new tool's SKILL.md the way its own build will: from the `reference` of the tool as it runs. The
 * tool has no dependencies installed yet, so it is staged in a temp dir: its TypeScript sources with the types
 * stripped (Node's own stripper; the templates use only erasable syntax), and a `node_modules/agentcli` link to
 * the framework that runs `init`. Returns the path of SKILL.md inside the tool.
 */
export async function renderSkillFile(
  files: ReadonlyMap<string, string>,
  pjson: Record<string, unknown>,
  frameworkRoot: string,
  into: string,
): Promise<string> {
  const stage = mkdtempSync(join(tmpdir(), 'agentcli-init-'))
  try {
    const staged = { ...pjson, agentcli: { ...(pjson.agentcli as object), bundle: false } }
    writeFileSync(join(stage, 'package.json'), JSON.stringify(staged))
    const strip = await stripper()
    for (const [path, text] of files) {
      let target: string | undefined
      if (path.startsWith('src/') && path.endsWith('.ts')) target = `dist/${path.slice(4, -3)}.js`
      else if (path.startsWith('bin/') || path === 'CHANGELOG.md') target = path
      if (!target) continue
      mkdirSync(dirname(join(stage, target)), { recursive: true })
      writeFileSync(join(stage, target), target.startsWith('dist/') ? strip(text) : text)
    }
    mkdirSync(join(stage, 'node_modules'))
    // A junction on Windows: it needs no privilege there.
    symlinkSync(
      frameworkRoot,
      join(stage, 'node_modules', 'agentcli'),
      process.platform === 'win32' ? 'junction' : 'dir',
    )
    await buildTool(stage, 'write')
    const bin = Object.keys(pjson.bin as Record<string, string>)[0]!
    const skill = `skills/${bin}/SKILL.md`
    mkdirSync(dirname(join(into, skill)), { recursive: true })
    cpSync(join(stage, skill), join(into, skill))
    return skill
  } finally {
    rmSync(stage, { recursive: true, force: true })
  }
}

/** `module.stripTypeScriptTypes`, without its one-time "experimental" warning on the user's stderr. */
async function stripper(): Promise<(code: string) => string> {
  const { stripTypeScriptTypes } = await import('node:module')
  if (typeof stripTypeScriptTypes !== 'function')
    throw new Error(`rendering SKILL.md needs Node 22.13 or later (this is ${process.version})`)
  return (code) => {
    const emit = process.emitWarning
    process.emitWarning = () => {}
    try {
      return stripTypeScriptTypes(code)
    } finally {
      process.emitWarning = emit
    }
  }
}
