import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parse } from 'yaml'
import { skillMinVersions } from '../../../src/describe/skill.js'
import { ROOT } from '../../support/helpers.js'

const front = (markdown: string) => parse(/^---\n([\s\S]*?)\n---/.exec(markdown)![1]!) as Record<string, unknown>

describe('SKILL.md frontmatter', () => {
  it('maps metadata strings to strings, as the Agent Skills format asks (no nested object to read back)', () => {
    for (const file of ['examples/tasks/skills/tasks/SKILL.md', 'skills/agentcli/SKILL.md']) {
      const metadata = front(readFileSync(join(ROOT, file), 'utf8')).metadata as Record<string, unknown>
      for (const [key, value] of Object.entries(metadata)) expect(typeof value, `${file}: ${key}`).toBe('string')
      expect(metadata['requires.min_version'], file).toBe('0.1.0')
    }
  })

  it('reads the minimum version in the flat form and in the nested forms others write', async () => {
    const md = (meta: string) => `---\nname: t\ndescription: x\nmetadata:\n${meta}\n---\nbody\n`
    expect(await skillMinVersions(md('  requires.min_version: "1.2.0"'))).toEqual(['1.2.0'])
    expect(await skillMinVersions(md('  requires:\n    min_version: "1.3.0"'))).toEqual(['1.3.0'])
    expect(await skillMinVersions(md('  openclaw:\n    requires:\n      min_version: "2.0.0"'))).toEqual(['2.0.0'])
    expect(await skillMinVersions(md('  requires.min_version: 7'))).toEqual([])
    expect(await skillMinVersions('no frontmatter')).toEqual([])
  })
})
