import { userInfo } from 'node:os'
import { AgentError } from '../errors/agent-error.js'
import type { ToolEnv } from './tool-env.js'

/** Who runs the tool: the profile and the operating-system user, as a write's principal and the audit name them. */
export type Caller = { profile: string; os_user: string | null }

/**
 * `<BIN>_PROFILE` (else `default`) and the operating-system user (null when the system cannot say, e.g. a
 * container's arbitrary uid with no passwd entry). `user` is injectable for tests.
 */
export function callerOf(env: ToolEnv, user: () => string = () => userInfo().username): Caller {
  let osUser: string | null = null
  try {
    osUser = user()
  } catch {
    // No passwd entry for this uid: unknown, not a failure.
  }
  return { profile: env.raw('PROFILE') || 'default', os_user: osUser }
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
