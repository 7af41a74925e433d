import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'

type Server = Parameters<import('@modelcontextprotocol/server/ext/skills').SkillsExtension['attach']>[0]

function flatten(value: unknown, prefix: string, out: Record<string, string>): void {
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out)
  } else out[prefix] = typeof value === 'string' ? value : JSON.stringify(value)
}

/**
 * A SKILL.md as the skills extension accepts it. The extension (like the Agent Skills format) wants `metadata`
 * to map strings to strings; agentcli's SKILL.md does (`requires.min_version`), a hand-written one may nest; nested keys are
 * flattened to dotted ones (`requires.min_version`) and everything else, the body included, is left as it is.
 */
async function servable(text: string): Promise<string> {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text)
  if (!match) return text
  const YAML = await import('yaml')
  const front = YAML.parse(match[1]!) as Record<string, unknown>
  if (!front?.metadata || typeof front.metadata !== 'object') return text
  const metadata: Record<string, string> = {}
  flatten(front.metadata, '', metadata)
  return `---\n${YAML.stringify({ ...front, metadata }, { lineWidth: 0 })}---\n${text.slice(match[0].length)}`
}

function walk(root: string, dir: string, out: Record<string, string | Uint8Array>): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(root, path, out)
    else out[relative(root, path).split('\\').join('/')] = readFileSync(path)
  }
}

/** The tool's skills (`skills/<name>/SKILL.md` and its files) for the MCP skills extension (attach to each server). */
export async function loadSkillCatalog(root: string): Promise<{ attach(server: Server): void }> {
  const { SkillsExtension, memorySkillFiles } = await import('@modelcontextprotocol/server/ext/skills')
  const files: Record<string, string | Uint8Array> = {}
  walk(root, root, files)
  for (const [path, content] of Object.entries(files))
    if (path.endsWith('/SKILL.md')) files[path] = await servable(Buffer.from(content).toString('utf8'))
  return SkillsExtension.load(memorySkillFiles(files), {
    onWarning: (w) => process.stderr.write(`mcp: skill ${w.path}: ${w.message}\n`),
  })
}
