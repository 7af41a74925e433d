import { createHash, randomBytes } from 'node:crypto'
import { cp, lstat, mkdir, readdir, readFile, rename, rm, stat, symlink } from 'node:fs/promises'
import { homedir } from 'node:os'
import { dirname, join, relative } from 'node:path'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { runEnv } from '../settings/run-env.js'

/** What a skill sync did. */
export type SkillSync = { status: 'synced' | 'not_applicable'; path: string | null; linked: string[] }

/** Agents whose global skills directory gets a link to the canonical copy (universal agents read it directly). */
function agentDirs(home: string, env: NodeJS.ProcessEnv): Array<{ agent: string; config: string; skills: string }> {
  const claude = env.CLAUDE_CONFIG_DIR ?? join(home, '.claude')
  return [
    { agent: 'claude-code', config: claude, skills: join(claude, 'skills') },
    { agent: 'cursor', config: join(home, '.cursor'), skills: join(home, '.cursor', 'skills') },
    {
      agent: 'windsurf',
      config: join(home, '.codeium', 'windsurf'),
      skills: join(home, '.codeium', 'windsurf', 'skills'),
    },
  ]
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}

async function folderHash(dir: string): Promise<string> {
  const hash = createHash('sha256')
  const walk = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const path = join(d, name)
      if ((await lstat(path)).isDirectory()) await walk(path)
      else
        hash
          .update(relative(dir, path))
          .update('\0')
          .update(await readFile(path))
    }
  }
  await walk(dir)
  return hash.digest('hex')
}

/**
 * Replace `target` with a copy of `source`, checked: the copy is hashed against the source before it replaces
 * anything, so a full disk under the home directory leaves the previous skill in place, never a truncated one.
 */
async function replaceDir(source: string, target: string): Promise<void> {
  const temp = `${target}.tmp-${randomBytes(4).toString('hex')}`
  await mkdir(dirname(target), { recursive: true })
  try {
    await cp(source, temp, { recursive: true })
    if ((await folderHash(temp)) !== (await folderHash(source)))
      throw new AgentError('E_IO', `the copy of the skill at ${temp} differs from ${source}`, {
        details: { path: target, fix: `check the filesystem that holds ${target} (free space), then sync again` },
      })
  } catch (error) {
    await rm(temp, { recursive: true, force: true })
    if (isAgentError(error)) throw error
    const code = (error as NodeJS.ErrnoException).code ?? 'error'
    throw new AgentError('E_IO', `cannot copy the skill to ${target}: ${code} (${(error as Error).message})`, {
      details: {
        path: target,
        errno: code,
        fix: `check the filesystem that holds ${target} (free space), then sync again`,
      },
      cause: error,
    })
  }
  const old = `${target}.old-${randomBytes(4).toString('hex')}`
  if (
    await lstat(target).then(
      () => true,
      () => false,
    )
  )
    await rename(target, old)
  await rename(temp, target)
  await rm(old, { recursive: true, force: true })
}

/**
 * Make the installed skill match the new version, with the end state of `npx skills add <repo> -y -g`: the
 * skill in `~/.agents/skills/<name>`, linked (copied where links fail) into each detected agent's global skills
 * directory, and its entry in the `skills` CLI's global lock file.
 */
export async function syncSkill(options: {
  versionDir: string
  name: string
  repository: string | null
  env?: NodeJS.ProcessEnv
}): Promise<SkillSync> {
  // The run's environment (an in-process run's HOME and XDG dirs), never the host process's.
  const env = options.env ?? runEnv()
  const source = join(options.versionDir, 'skills', options.name)
  if (!(await exists(join(source, 'SKILL.md')))) return { status: 'not_applicable', path: null, linked: [] }
  const home = env.HOME ?? homedir()
  const canonical = join(home, '.agents', 'skills', options.name)
  await replaceDir(source, canonical)
  const linked: string[] = []
  for (const agent of agentDirs(home, env)) {
    if (!(await exists(agent.config))) continue
    const link = join(agent.skills, options.name)
    await mkdir(agent.skills, { recursive: true })
    await rm(link, { recursive: true, force: true })
    try {
      await symlink(relative(agent.skills, canonical), link)
    } catch {
      await cp(canonical, link, { recursive: true })
    }
    linked.push(agent.agent)
  }
  const lockPath = env.XDG_STATE_HOME
    ? join(env.XDG_STATE_HOME, 'skills', '.skill-lock.json')
    : join(home, '.agents', '.skill-lock.json')
  type Lock = { version: number; skills: Record<string, Record<string, unknown>>; [k: string]: unknown }
  const lock = await readJsonFile<Lock>(
    lockPath,
    () => ({ version: 3, skills: {} }),
    (v): v is Lock => typeof v === 'object' && v !== null && 'skills' in v,
  )
  const now = new Date().toISOString()
  lock.skills[options.name] = {
    ...lock.skills[options.name],
    source: options.repository,
    sourceType: 'github',
    sourceUrl: options.repository ? `https://github.com/${options.repository}.git` : null,
    skillPath: `skills/${options.name}/SKILL.md`,
    skillFolderHash: await folderHash(canonical),
    installedAt: lock.skills[options.name]?.installedAt ?? now,
    updatedAt: now,
  }
  await writeJsonAtomic(lockPath, lock, { mode: 0o644, dirMode: 0o755 })
  return { status: 'synced', path: canonical, linked }
}
