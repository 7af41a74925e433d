import { readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { binPath, buildTool, type PackageJson, readReference, type SkillMode } from './build-tool.js'
import { compatBreaks, parseReference } from './compat.js'

const USAGE =
  'usage: agentcli-build [--skill write|check] [--no-changelog] [--check-compat <previous reference.json>] <package-dir>...'

/** `agentcli-build`: the build step of a tool (manifest, embedded changelog, SKILL.md). Exits 1 on any failure. */
export async function main(argv: string[]): Promise<number> {
  let skill: SkillMode = 'skip'
  let changelog = true
  let previous: string | undefined
  const dirs: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--skill') {
      const mode = argv[++i]
      if (mode !== 'write' && mode !== 'check') {
        process.stderr.write(`${USAGE}\n`)
        return 2
      }
      skill = mode
    } else if (a === '--check-compat') {
      previous = argv[++i]
      if (!previous) {
        process.stderr.write(`${USAGE}\n`)
        return 2
      }
    } else if (a === '--no-changelog') {
      changelog = false
    } else if (a.startsWith('-')) {
      process.stderr.write(`unknown option ${a}\n${USAGE}\n`)
      return 2
    } else dirs.push(a)
  }
  if (dirs.length === 0) {
    process.stderr.write(`${USAGE}\n`)
    return 2
  }
  let failed = false
  for (const dir of dirs) {
    try {
      const r = await buildTool(dir, skill, { changelog })
      const log = `agentcli-build: ${dir}: ${r.commands} commands, changelog ${r.changelog_entries ?? 'none'}, bundle ${r.bundle_bytes === null ? 'none' : `${Math.round(r.bundle_bytes / 1024)} KiB`}, skill ${r.skill}\n`
      process.stderr.write(log)
      if (r.skill === 'stale') {
        process.stderr.write(`agentcli-build: ${dir}: SKILL.md is stale; run agentcli-build --skill write ${dir}\n`)
        failed = true
      }
      if (previous && !(await checkCompat(dir, previous))) failed = true
    } catch (error) {
      process.stderr.write(`agentcli-build: ${dir}: ${error instanceof Error ? error.message : String(error)}\n`)
      failed = true
    }
  }
  return failed ? 1 : 0
}

/** Compare the freshly built tool's `reference` with a released one; report each break; true when there is none. */
async function checkCompat(dir: string, previousPath: string): Promise<boolean> {
  const root = resolve(dir)
  const bin = binPath(root, JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson)
  if (!bin) throw new Error('--check-compat needs the tool\'s "bin" in package.json')
  const breaks = compatBreaks(parseReference(readFileSync(previousPath, 'utf8')), readReference(bin))
  for (const b of breaks)
    process.stderr.write(`agentcli-build: ${dir}: breaking: ${b.kind} ${b.subject}: ${b.change}\n`)
  if (breaks.length > 0)
    process.stderr.write(
      `agentcli-build: ${dir}: ${breaks.length} breaking change(s) against ${previousPath}; keep what was released (add, deprecate, then remove at the announced version) or bump schema_version's major\n`,
    )
  else process.stderr.write(`agentcli-build: ${dir}: compatible with ${previousPath}\n`)
  return breaks.length === 0
}
