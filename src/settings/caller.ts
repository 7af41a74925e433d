import { userInfo } from 'node:os'
import { AgentError } from '../errors/agent-error.js'
import type { ToolEnv } from './tool-env.js'

/** Who runs the tool: the profile and the operating-system user, as a write's principal and the audit name them. */
export type Caller = { profile: string; os_user: string | null }

/** The operating-system user running the tool, or null when the system cannot say (no passwd entry for this uid). */
export function osUser(user: () => string = () => userInfo().username): string | null {
  try {
    return user()
  } catch {
    // A container's arbitrary uid: unknown, not a failure.
    return null
  }
}

/**
 * Who runs the tool: the profile and the operating-system user ({@link osUser}; `user` is injectable for tests).
 * The one place the profile is computed. `<BIN>_PROFILE` (else `default`) is a label the caller chooses, so a rule
 * on it holds nobody; when the system policy (`/etc/<bin>/policy.json`, which the user cannot edit) pins a profile,
 * that one is every call's: `<BIN>_PROFILE` unset or the same runs as it, any other is `E_CONFIG`
 * (`reason: profile_pinned`) before anything is read or written. A system policy that cannot be trusted is
 * `E_CONFIG` here as everywhere (fail closed). Without a system policy this reads no more than the variable did.
 */
export async function callerOf(env: ToolEnv, user?: () => string): Promise<Caller> {
  const asked = env.raw('PROFILE')
  const { readSystemPolicy, systemPolicyPath } = await import('../policy/load.js')
  const pinned = readSystemPolicy(env.bin)?.profile
  if (pinned !== undefined && asked !== undefined && asked !== pinned) {
    const setting = env.name('PROFILE')
    throw new AgentError(
      'E_CONFIG',
      `${setting}=${asked} is refused: the system policy pins this machine to profile ${pinned}`,
      {
        details: {
          reason: 'profile_pinned',
          setting,
          pinned,
          got: asked,
          path: systemPolicyPath(env.bin)?.path,
          fix: `unset ${setting} (this machine runs as profile ${pinned}); only root can change the pin`,
        },
      },
    )
  }
  return { profile: pinned ?? asked ?? 'default', os_user: osUser(user) }
}

/** `<BIN>_MCP_SUBJECT`, checked: a malformed value is `E_CONFIG`, never a principal without its subject. */
export function remoteSubject(env: ToolEnv): { iss: string; sub: string } | undefined {
  const raw = env.raw('MCP_SUBJECT')
  if (raw === undefined) return undefined
  let value: unknown
  try {
    value = JSON.parse(raw)
  } catch {
    value = undefined
  }
  const v = value as { iss?: unknown; sub?: unknown } | undefined
  if (!v || typeof v.iss !== 'string' || typeof v.sub !== 'string' || !v.iss || !v.sub || Object.keys(v).length !== 2)
    throw new AgentError('E_CONFIG', `${env.name('MCP_SUBJECT')} must be JSON {"iss": "…", "sub": "…"}`, {
      details: { setting: env.name('MCP_SUBJECT') },
    })
  return { iss: v.iss, sub: v.sub }
}
