import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type SkillMemo, skillFrontMatter, skillMinVersions } from './skill.js'

/**
 * What `agentcli-build` found in the tool's packaged SKILL.md files (`skills/<name>/SKILL.md`): each one's exact
 * frontmatter text and the `min_version`s {@link skillMinVersions} read from it. `doctor` checks the packaged file
 * and its installed copies on every run; a frontmatter the memo holds is answered without loading `yaml` (≈ 10 ms of
 * a run), any other text is parsed as before.
 */
export const SKILL_MEMO_FILE = join('dist', 'agentcli.skill-memo.json')

/** The file's marker, and the version of what it holds: raised when {@link skillMinVersions} reads differently. */
export const SKILL_MEMO_MARK = 'agentcli_skill_memo'

/** The memo beside the tool's code; empty when there is none or it is not one this code wrote. */
export function readSkillMemo(root: string): SkillMemo {
  try {
    const memo = JSON.parse(readFileSync(join(root, SKILL_MEMO_FILE), 'utf8')) as Record<string, unknown>
    if (memo[SKILL_MEMO_MARK] !== 1 || !Array.isArray(memo.skills)) return []
    return memo.skills.filter(
      (entry): entry is SkillMemo[number] =>
        typeof entry?.front_matter === 'string' &&
        Array.isArray(entry.min_versions) &&
        entry.min_versions.every((v: unknown) => typeof v === 'string'),
    )
  } catch {
    return []
  }
}

/** Write the memo of the tool's packaged SKILL.md files (none: no file, and an earlier build's is removed). */
export async function writeSkillMemo(root: string): Promise<number> {
  const path = join(root, SKILL_MEMO_FILE)
  rmSync(path, { force: true })
  let names: string[]
  try {
    names = readdirSync(join(root, 'skills'))
  } catch {
    return 0
  }
  const skills: Array<{ front_matter: string; min_versions: string[] }> = []
  for (const name of names.sort()) {
    let markdown: string
    try {
      markdown = readFileSync(join(root, 'skills', name, 'SKILL.md'), 'utf8')
    } catch {
      continue
    }
    const front = skillFrontMatter(markdown)
    if (front !== undefined) skills.push({ front_matter: front, min_versions: await skillMinVersions(markdown) })
  }
  if (skills.length === 0) return 0
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, `${JSON.stringify({ [SKILL_MEMO_MARK]: 1, skills })}\n`)
  return skills.length
}
