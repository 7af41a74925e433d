import { buildTool, type SkillMode } from './build-tool.js'

const USAGE = 'usage: agentcli-build [--skill write|check] [--no-changelog] <package-dir>...'

/** `agentcli-build`: the build step of a tool (manifest, embedded changelog, SKILL.md). Exits 1 on any failure. */
export async function main(argv: string[]): Promise<number> {
  let skill: SkillMode = 'skip'
  let changelog = true
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
    } catch (error) {
      process.stderr.write(`agentcli-build: ${dir}: ${error instanceof Error ? error.message : String(error)}\n`)
      failed = true
    }
  }
  return failed ? 1 : 0
}
