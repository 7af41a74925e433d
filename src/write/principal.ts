import { sha256Hex } from '../confirm/sha256.js'
import type { Credentials } from '../credentials/credentials.js'
import { callerOf, remoteSubject } from '../settings/caller.js'
import type { ToolEnv } from '../settings/tool-env.js'

/** Who a write acts as: bound into its confirm token, its idempotency scope and its audit record. */
export type Principal = {
  /** The account the command acts as (the injected `<BIN>_ACCOUNT`, else the stored login's), or null. */
  account: string | null
  /** The permission context the login recorded, or null when the tool does not know it. */
  scopes: string[] | null
  /** The profile the system policy pins, else `<BIN>_PROFILE`, else `default` (see `callerOf`). */
  profile: string
  /** The operating-system user running the tool. */
  os_user: string | null
  /** A fingerprint of an injected `<BIN>_TOKEN` (two injected tokens are two identities), else null. */
  credential: string | null
  /** The authenticated remote subject a `tool mcp --http` call acts for (`<BIN>_MCP_SUBJECT`); absent otherwise. */
  subject?: { iss: string; sub: string }
  [key: string]: unknown
}

/** The default principal: the credentials' account and scopes, the profile, the OS user. Reads no secret store. */
export async function defaultPrincipal(credentials: Credentials, env: ToolEnv): Promise<Principal> {
  const { profile, os_user } = await callerOf(env)
  const { account, scopes } = await credentials.session()
  const token = env.raw('TOKEN')
  const subject = remoteSubject(env)
  return {
    account,
    scopes,
    profile,
    os_user,
    credential: token ? sha256Hex(`agentcli-principal\0${token}`).slice(0, 32) : null,
    // Only when set, so a CLI call's principal (and every token and key bound to it) is what it always was.
    ...(subject ? { subject } : {}),
  }
}
