import type { Credentials, StorageMode } from '../credentials/credentials.js'
import type { CredentialRecord } from '../credentials/types.js'
import { AgentError } from '../errors/agent-error.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import { readToolSettings } from '../settings/package-section.js'
import { FRAMEWORK_SETTINGS, toolEnv } from '../settings/tool-env.js'

/** What the credential helpers need of the tool: its oclif config (bin, dirs, package.json). */
type Tool = Pick<ToolConfig, 'bin' | 'configDir' | 'pjson'>

/**
 * The tool's credential store for `mode` (the caller's), else `<BIN>_CREDENTIAL_STORE`, else
 * `agentcli.credentials.storage` in package.json, else `auto`; anything else is `E_CONFIG`. Each keychain call may take
 * `<BIN>_KEYCHAIN_TIMEOUT_MS` (default 4 s).
 */
export async function openCredentialStore(
  tool: Tool,
  mode: StorageMode | undefined,
  warn: (message: string) => void,
): Promise<Credentials> {
  const { Credentials } = await import('../credentials/credentials.js')
  const settings = readToolSettings(tool as ToolConfig).credentials as
    | { storage?: StorageMode; refreshable?: boolean }
    | undefined
  const env = toolEnv(tool.bin)
  const fromEnv = env.get('CREDENTIAL_STORE') as StorageMode | undefined
  const chosen = mode ?? fromEnv ?? settings?.storage ?? 'auto'
  if (!['auto', 'keychain', 'file'].includes(chosen)) {
    throw new AgentError('E_CONFIG', `credential storage must be auto, keychain or file (got: '${chosen}')`, {
      details: { allowed: ['auto', 'keychain', 'file'], got: chosen },
    })
  }
  return new Credentials({
    bin: tool.bin,
    configDir: tool.configDir,
    mode: chosen,
    refreshable: Boolean(settings?.refreshable),
    timeoutMs: env.get('KEYCHAIN_TIMEOUT_MS') ?? FRAMEWORK_SETTINGS.KEYCHAIN_TIMEOUT_MS.default,
    warn,
  })
}

/**
 * A usable credential from `store`: refreshed through `refresh` when it expires within `skewSeconds`. Missing, or
 * expired and not refreshable, is `E_AUTH` naming the login command.
 */
export async function usableCredential(
  store: Credentials,
  bin: string,
  options: { skewSeconds?: number; force?: boolean },
  refresh: (record: CredentialRecord) => Promise<CredentialRecord>,
): Promise<CredentialRecord> {
  const found = await store.read()
  const reauth = `${bin} login`
  if (!found) throw new AgentError('E_AUTH', 'not logged in', { details: { reauth } })
  const { isValid } = await import('../credentials/credentials.js')
  const soon = Date.now() + (options.skewSeconds ?? 60) * 1000
  if (!options.force && isValid(found.record, soon)) return found.record
  if (found.source === 'env' || !found.record.refresh_token) {
    if (!options.force && isValid(found.record)) return found.record
    throw new AgentError('E_AUTH', 'the credentials expired and cannot be refreshed', {
      details: { reauth, account: found.record.account },
    })
  }
  let fresh: CredentialRecord
  try {
    fresh = await refresh(found.record)
    // Known to the redactor before anything can echo it (the save below may fail and report).
    ;(await import('../credentials/register.js')).registerRecord(fresh)
  } catch (error) {
    throw new AgentError('E_AUTH', 'refreshing the credentials failed', {
      details: { reauth, account: found.record.account },
      cause: error,
    })
  }
  await store.save(fresh)
  return fresh
}
