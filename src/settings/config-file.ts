import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { checkSetting, type SettingRule, toolEnv } from './tool-env.js'

/** The tool's `config.json` in its config dir, as an object; absent is `{}`. */
export function readToolConfig(configDir: string): Record<string, unknown> {
  const path = join(configDir, 'config.json')
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {}
    throw new AgentError('E_IO', `cannot read ${path}`, { details: { path }, cause: error })
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    parsed = undefined
  }
  // A corrupt file is E_IO (the catalogue's "a local file … is corrupt"); a bad value in a good file is E_CONFIG.
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new AgentError('E_IO', `${path} is not a JSON object`, { details: { path, fix: `fix or remove ${path}` } })
  return parsed as Record<string, unknown>
}

/**
 * One documented setting of a tool, checked: `<BIN>_<NAME>` if set, else `name` in `config.json`, else
 * `fallback`. A bad value is `E_CONFIG` with `allowed`/`got` naming the variable or the file and key.
 * `name` is snake_case (`api_url` ↔ `TASKS_API_URL`).
 */
export function readSetting<S extends SettingRule>(
  config: Pick<ToolConfig, 'bin' | 'configDir'>,
  name: string,
  rule: S,
): (S extends { type: 'integer' } ? number : string) | undefined {
  const env = toolEnv(config.bin)
  const variable = name.toUpperCase()
  const fromEnv = env.raw(variable)
  if (fromEnv !== undefined) return checkSetting(rule, fromEnv, env.name(variable))
  const file = readToolConfig(config.configDir)
  if (file[name] === undefined || file[name] === null) return undefined
  return checkSetting(rule, file[name], `${join(config.configDir, 'config.json')}: ${name}`)
}
