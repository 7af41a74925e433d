import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { Plugin } from '@oclif/core'
import { META_FILE, parseChangelog } from '../describe/changelog.js'
import { BIN_TEMPLATE, describeCommand } from '../describe/command.js'
import type { CompactReference } from '../describe/compact.js'
import { expandReference } from '../describe/expand.js'
import type { Reference } from '../describe/reference.js'
import { renderSkill, skillName } from '../describe/skill.js'
import { writeSkillMemo } from '../describe/skill-memo.js'
import { loadZod } from '../schema/output.js'
import { runEnv } from '../settings/run-env.js'
import { bundleTool } from './bundle.js'
import { writeCompactMemo } from './compact-memo.js'
import { splitDescriptions } from './descriptions.js'
import { writeHelpMemo } from './help-memo.js'

/** What to do with the tool's SKILL.md. */
export type SkillMode = 'write' | 'check' | 'skip'

/** What one package build did. */
export type BuildReport = {
  dir: string
  commands: number
  changelog_entries: number | null
  /** Size of `dist/bundle.cjs`, when the tool is bundled. */
  bundle_bytes: number | null
  skill: 'written' | 'fresh' | 'stale' | 'skipped'
}

/** The package.json fields the build reads. */
export type PackageJson = {
  name?: string
  version: string
  bin?: string | Record<string, string>
  oclif?: { bin?: string; commands?: unknown }
}

/**
 * Write the manifest, and beside it (in `dist/agentcli.descriptions.json`, out of the start path) each command's
 * `reference` description baked in (so `reference` loads neither zod nor the command modules) and its help
 * texts; the embedded changelog, and the skill file.
 */
export async function buildTool(
  dir: string,
  skill: SkillMode,
  options: { changelog?: boolean } = {},
): Promise<BuildReport> {
  const root = resolve(dir)
  const pjson = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as PackageJson
  // Checked first: a changelog whose newest release is not the package's fails the build before anything is built.
  const changelogPath = join(root, 'CHANGELOG.md')
  const changelog =
    options.changelog !== false && existsSync(changelogPath)
      ? await parseChangelog(readFileSync(changelogPath, 'utf8'), pjson.version)
      : undefined
  const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true, isRoot: true })
  await plugin.load()
  const manifest = JSON.parse(JSON.stringify(plugin.manifest)) as { commands: Record<string, Record<string, unknown>> }
  // The explicit strategy loads commands from its target, never by file: oclif records a file only for the commands
  // whose module it happened to see loaded, so the manifest would differ from one build to the next.
  if ((pjson.oclif?.commands as { strategy?: string } | undefined)?.strategy === 'explicit')
    for (const entry of Object.values(manifest.commands)) {
      delete entry.isESM
      delete entry.relativePath
    }
  const z = await loadZod()
  for (const id of Object.keys(manifest.commands)) {
    const cmd = await plugin.findCommand(id, { must: true })
    manifest.commands[id]!.agent = describeCommand(cmd, BIN_TEMPLATE, z)
    addInheritedFlags(manifest.commands[id]!, cmd as unknown as LiveFlags)
  }
  splitDescriptions(root, manifest)
  writeFileSync(join(root, 'oclif.manifest.json'), manifestText(manifest))
  // Before the skill: the skill is read from the tool as it will run, which is from its bundle.
  const bundle = await bundleTool(root)
  const bin = binPath(root, pjson)
  // After the bundle, which it names and runs: the compact `reference` computed once (see writeCompactMemo).
  if (bundle && bin) writeCompactMemo(root, bin, bundle.id)
  // And each command's help as oclif prints it off a terminal (see writeHelpMemo).
  if (bundle) writeHelpMemo(root, bundle.file, bundle.id)

  let entries: number | null = null
  const metaPath = join(root, META_FILE)
  if (changelog) {
    writeFileSync(metaPath, `${JSON.stringify({ changelog }, null, 2)}\n`)
    entries = changelog.length
  } else if (options.changelog !== false && existsSync(metaPath)) {
    // CHANGELOG.md was removed: an earlier build's entries must not outlive it (the tool has no changelog now).
    writeFileSync(metaPath, `${JSON.stringify({ changelog: [] }, null, 2)}\n`)
  }
  const skillState = buildSkill(root, pjson, skill)
  // After the skill is written: what doctor's min_version check reads from it, parsed once here.
  await writeSkillMemo(root)
  return {
    dir,
    commands: Object.keys(manifest.commands).length,
    changelog_entries: entries,
    bundle_bytes: bundle?.bytes ?? null,
    skill: skillState,
  }
}

/**
 * The manifest with one command per line: every start parses it, and indentation was a third of its bytes; a
 * line per command still diffs by command.
 */
function manifestText(manifest: { commands: Record<string, unknown> }): string {
  const { commands, ...rest } = manifest
  const lines = Object.entries(commands).map(([id, entry]) => `${JSON.stringify(id)}:${JSON.stringify(entry)}`)
  const tail = JSON.stringify(rest).slice(1)
  return `{"commands":{\n${lines.join(',\n')}\n}${tail === '}' ? '}' : `,${tail}`}\n`
}

type LiveFlags = {
  baseFlags?: Record<string, Record<string, unknown>>
  flags?: Record<string, Record<string, unknown>>
}

/**
 * oclif caches a command's flags from its class's prototype chain, where a flag the framework adds by kind (the
 * `--wait` of an async command) is not visible: copy what the parser will accept, so `--help` lists it too.
 */
function addInheritedFlags(cached: Record<string, unknown>, cmd: LiveFlags): void {
  const flags = (cached.flags ?? {}) as Record<string, unknown>
  for (const [name, def] of Object.entries({ ...(cmd.baseFlags ?? {}), ...(cmd.flags ?? {}) })) {
    if (name in flags) continue
    const entry: Record<string, unknown> = { name, hasDynamicHelp: false, multiple: false }
    for (const key of ['type', 'description', 'summary', 'helpGroup', 'default', 'char', 'options', 'allowNo'])
      if (def[key] !== undefined && typeof def[key] !== 'function') entry[key] = def[key]
    flags[name] = entry
  }
  cached.flags = flags
}

/** The tool's bin script, from its package.json. */
export function binPath(root: string, pjson: PackageJson): string | undefined {
  if (typeof pjson.bin === 'string') return join(root, pjson.bin)
  const first = pjson.bin ? Object.values(pjson.bin)[0] : undefined
  return first ? join(root, first) : undefined
}

/**
 * Ask the tool itself for its reference: the skill is rendered from exactly what agents will see. Asked for the
 * compact form (the smallest pipe) and expanded.
 */
export function readReference(bin: string): Reference {
  // The run's environment (runEnv): `init` builds a tool's skill this way, and an in-process `init` has its own.
  const { PATH, HOME } = runEnv()
  const result = spawnSync(process.execPath, [bin, 'reference', '--format', 'json', '--compact'], {
    encoding: 'utf8',
    env: { PATH, HOME, NO_COLOR: '1' },
  })
  const envelope = JSON.parse(result.stdout) as { ok: boolean; data: Reference | CompactReference }
  if (!envelope.ok) throw new Error(`${bin} reference failed: ${result.stdout}`)
  return expandReference(envelope.data)
}

function buildSkill(root: string, pjson: PackageJson, mode: SkillMode): BuildReport['skill'] {
  const bin = binPath(root, pjson)
  if (mode === 'skip' || !bin) return 'skipped'
  const reference = readReference(bin)
  const path = join(root, 'skills', skillName(reference.tool), 'SKILL.md')
  const rendered = renderSkill(reference)
  const current = existsSync(path) ? readFileSync(path, 'utf8') : undefined
  if (mode === 'check') return current === rendered ? 'fresh' : 'stale'
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, rendered)
  return 'written'
}
