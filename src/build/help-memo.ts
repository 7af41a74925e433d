import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { BAKED_HELP_FILE, encodeBakedHelp } from '../describe/baked-help.js'
import { DESCRIPTIONS_FILE, descriptionLine } from '../describe/descriptions.js'
import { probeEnv } from './probe-env.js'

const RENDERER = fileURLToPath(new URL('./help-render.js', import.meta.url))

/** The most commands a tool may have for its help to be stored (see writeHelpMemo). */
export const MAX_COMMANDS = 2000

type ManifestEntry = { hasDynamicHelp?: boolean; aliases?: string[]; hiddenAliases?: string[] }

/**
 * Render each command's `--help` once, as oclif prints it off a terminal: ask the freshly bundled tool for it (one
 * process running the bundle, in a throw-away home, stdout a pipe, nothing in the environment that sets a width or
 * colour) and store the text beside the bundle with what it was rendered from (`bakedHelp` says when a run may
 * print it). A command whose flags compute their help at run time (`hasDynamicHelp`), or whose help did not print
 * cleanly (an exit code, any stderr), is left to oclif. Nothing is written for a tool with its own help class,
 * plugins, a topic separator other than a space, more than {@link MAX_COMMANDS} commands, or whose commands are not
 * found by the explicit strategy (their help is not one command's alone); an earlier file is removed first.
 */
export function writeHelpMemo(root: string, bundle: string, bundleId: string): number {
  const path = join(root, BAKED_HELP_FILE)
  rmSync(path, { force: true })
  const pjson = readFileSync(join(root, 'package.json'), 'utf8')
  const oclif = (JSON.parse(pjson) as { oclif?: Record<string, unknown> }).oclif ?? {}
  if (oclif.helpClass || (oclif.plugins as unknown[] | undefined)?.length) return 0
  if ((oclif.commands as { strategy?: string } | undefined)?.strategy !== 'explicit') return 0
  // Rendered for `job list --help`: with oclif's other separator (`job:list`) those words would ask for a topic.
  if (oclif.topicSeparator !== ' ') return 0
  const manifest = readFileSync(join(root, 'oclif.manifest.json'), 'utf8')
  const commands = (JSON.parse(manifest) as { commands: Record<string, ManifestEntry> }).commands
  // Each command's help costs time in proportion to the tool (oclif's Config and help list every command): 7 ms a
  // command at 1000 commands, so the whole render grows with the square; larger tools keep oclif's rendering.
  if (Object.keys(commands).length > MAX_COMMANDS) return 0
  let descriptions = Buffer.alloc(0)
  try {
    descriptions = readFileSync(join(root, DESCRIPTIONS_FILE))
  } catch {}
  const home = mkdtempSync(join(tmpdir(), 'agentcli-build-'))
  const out = join(home, 'help.json')
  const ids = Object.entries(commands).flatMap(([id, entry]) => (entry.hasDynamicHelp ? [] : [id]))
  const help = new Map<string, [string | null, string]>()
  try {
    // One process renders every command's help, in-process runs of the bundle (help-render.ts).
    const result = spawnSync(process.execPath, [RENDERER, bundle, root, out, ...ids], {
      encoding: 'utf8',
      env: probeEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    if (result.status !== 0) return 0
    for (const [id, code, stdout, stderr] of JSON.parse(readFileSync(out, 'utf8')) as [
      string,
      number,
      string,
      string,
    ][]) {
      if (code !== 0 || stderr !== '' || !stdout) continue
      help.set(id, [descriptionLine(descriptions, id).line?.toString('utf8') ?? null, stdout])
    }
  } catch {
    return 0
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
  if (help.size === 0) return 0
  const inputs = { pjson, manifest, descriptionsHeader: descriptionLine(descriptions, '').header.toString('utf8') }
  writeFileSync(path, encodeBakedHelp(bundleId, inputs, help))
  return help.size
}
