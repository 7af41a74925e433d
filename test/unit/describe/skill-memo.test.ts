import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { skillMinVersions } from '../../../src/describe/skill.js'
import { readSkillMemo, SKILL_MEMO_FILE, SKILL_MEMO_MARK, writeSkillMemo } from '../../../src/describe/skill-memo.js'
import { ROOT } from '../../support/helpers.js'

// doctor's min_version check reads the build's memo of the packaged SKILL.md instead of loading `yaml` for it.
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const SKILL = '---\nname: t\nmetadata:\n  requires.min_version: "1.2.3"\n---\n\n# t\n'

function toolWith(skills: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'agentcli-skill-memo-'))
  dirs.push(root)
  for (const [name, text] of Object.entries(skills)) {
    mkdirSync(join(root, 'skills', name), { recursive: true })
    writeFileSync(join(root, 'skills', name, 'SKILL.md'), text)
  }
  return root
}

describe('the skill memo', () => {
  it('holds what skillMinVersions reads, and answers exactly that frontmatter from it', async () => {
    const root = toolWith({ t: SKILL, none: '# no frontmatter\n' })
    expect(await writeSkillMemo(root)).toBe(1)
    const memo = readSkillMemo(root)
    expect(memo).toEqual([
      { front_matter: 'name: t\nmetadata:\n  requires.min_version: "1.2.3"', min_versions: ['1.2.3'] },
    ])
    expect(await skillMinVersions(SKILL, memo)).toEqual(await skillMinVersions(SKILL))
    // The memo is what answers its text (a made-up value proves it), and never another text.
    const forged = [{ front_matter: memo[0]!.front_matter, min_versions: ['9.9.9'] }]
    expect(await skillMinVersions(SKILL, forged)).toEqual(['9.9.9'])
    const edited = SKILL.replace('1.2.3', '2.0.0')
    expect(await skillMinVersions(edited, forged)).toEqual(['2.0.0'])
  })

  it('is empty when missing, of another layout, or malformed; a build without skills removes the old one', async () => {
    const root = toolWith({ t: SKILL })
    expect(readSkillMemo(root)).toEqual([])
    mkdirSync(join(root, 'dist'))
    writeFileSync(join(root, SKILL_MEMO_FILE), JSON.stringify({ [SKILL_MEMO_MARK]: 2, skills: [] }))
    expect(readSkillMemo(root)).toEqual([])
    writeFileSync(join(root, SKILL_MEMO_FILE), '{not json')
    expect(readSkillMemo(root)).toEqual([])
    writeFileSync(
      join(root, SKILL_MEMO_FILE),
      JSON.stringify({ [SKILL_MEMO_MARK]: 1, skills: [{ front_matter: 'x', min_versions: [1] }, null] }),
    )
    expect(readSkillMemo(root)).toEqual([])
    rmSync(join(root, 'skills'), { recursive: true })
    expect(await writeSkillMemo(root)).toBe(0)
    expect(() => readFileSync(join(root, SKILL_MEMO_FILE))).toThrow()
  })

  it('the example tool ships the memo of its SKILL.md (npm run build)', async () => {
    const root = join(ROOT, 'examples/tasks')
    const text = readFileSync(join(root, 'skills/tasks/SKILL.md'), 'utf8')
    const memo = readSkillMemo(root)
    expect(memo.length).toBe(1)
    expect(await skillMinVersions(text, memo)).toEqual(await skillMinVersions(text))
    expect(await skillMinVersions(text, [])).toEqual(['0.1.0'])
  })
})
