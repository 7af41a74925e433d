import type { Config } from '@oclif/core'
import { COMMAND_KINDS, type CommandKind } from '../command-kind.js'
import type { Catalogue } from '../errors/catalogue.js'
import { EXIT_CODES } from '../errors/catalogue.js'
import { byCodePoint } from '../output/compare.js'
import { loadZod } from '../schema/output.js'
import { readToolSettings } from '../settings/package-section.js'
import { GLOBAL_FLAGS } from '../universal-flags/globals.js'
import { BIN_TEMPLATE, type CommandDescription, describeCommand } from './command.js'
import { CONTRACT_VERSION } from './contract-version.js'
import { bakedDescription } from './descriptions.js'
import { describeParam, type Param } from './params.js'
import { type ReleaseReadiness, releaseReadiness } from './readiness.js'
import { selectCommands } from './select.js'

/** Version of the envelope and `reference` shapes this framework emits. */
export const CONTRACT_SCHEMA_VERSION = '1.0'

/** What `reference` returns. */
export type Reference = {
  /** The tool's bin name. */
  tool: string
  /** The tool's version. */
  version: string
  /** The version of this document's shape (`CONTRACT_SCHEMA_VERSION`). */
  schema_version: string
  /** The agentcli contract major this tool speaks (seed 001 §3): a client pins a compatibility floor on it. */
  contract_version: number
  /** What the tool does, from its package.json. */
  description: string
  /** The risk tier the tool declares (package.json `agentcli.risk_tier`), else `unknown`. */
  risk_tier: string
  /** How ready for release the tool says it is (package.json `agentcli.release_readiness`). */
  release_readiness: ReleaseReadiness
  /** The universal flags every command takes. */
  global_flags: Param[]
  /** What each command `type` means: `read`, `local`, `write`. */
  command_kinds: Record<CommandKind, string>
  /** Every command: its parameters, kind, risk, output schema, errors and examples. */
  commands: CommandDescription[]
  /** What each exit code means. */
  exit_codes: Record<string, string>
  /** Every error code the tool can answer (core and its own), with its exit code and whether a retry may help. */
  error_codes: Record<string, { exit: number; retryable: boolean; description: string }>
}

/**
 * Describe every visible command (or those of `ids`): from the descriptions baked at build time, else by loading
 * it.
 */
export async function describeCommands(config: Config, ids?: ReadonlySet<string>): Promise<CommandDescription[]> {
  const out: CommandDescription[] = []
  for (const cmd of config.commands) {
    if (cmd.hidden || (ids && !ids.has(cmd.id))) continue
    const description =
      bakedDescription(config, cmd) ?? describeCommand(await cmd.load(), BIN_TEMPLATE, await loadZod())
    // Examples are baked as templates: a plugin's command must show the bin of the tool that loaded it.
    out.push({ ...description, examples: description.examples.map((e) => e.replaceAll(BIN_TEMPLATE, config.bin)) })
  }
  return out.sort((a, b) => byCodePoint(a.path, b.path))
}

/**
 * Build the `reference` document of a tool; with `paths` (words of command paths, see {@link selectCommands}),
 * only those commands.
 */
export async function buildReference(
  config: Config,
  catalogue: Catalogue,
  options: { paths?: readonly string[] } = {},
): Promise<Reference> {
  const settings = readToolSettings(config)
  const errorCodes: Reference['error_codes'] = {}
  for (const code of Object.keys(catalogue.entries).sort()) {
    const e = catalogue.entries[code]!
    errorCodes[code] = { exit: e.exit, retryable: e.retryable, description: e.description }
  }
  return {
    tool: config.bin,
    version: config.version,
    schema_version: CONTRACT_SCHEMA_VERSION,
    contract_version: CONTRACT_VERSION,
    description: String(config.pjson.description ?? ''),
    risk_tier: typeof settings.risk_tier === 'string' ? settings.risk_tier : 'unknown',
    release_readiness: releaseReadiness(settings),
    global_flags: Object.entries(GLOBAL_FLAGS).map(([name, def]) => describeParam(name, 'flag', def as never)),
    command_kinds: { ...COMMAND_KINDS },
    commands: options.paths?.length ? await describeNamed(config, options.paths) : await describeCommands(config),
    exit_codes: Object.fromEntries(Object.entries(EXIT_CODES).map(([k, v]) => [String(k), v])),
    error_codes: errorCodes,
  }
}

/** The commands `reference <path…>` names, in the order named; only those are described. */
async function describeNamed(config: Config, words: readonly string[]): Promise<CommandDescription[]> {
  const visible = config.commands.filter((c) => !c.hidden).map((c) => ({ id: c.id, path: c.id.replaceAll(':', ' ') }))
  const named = selectCommands(visible, words)
  const described = await describeCommands(config, new Set(named.map((c) => c.id)))
  return named.map((n) => described.find((d) => d.path === n.path)!)
}
