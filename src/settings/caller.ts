import { userInfo } from 'node:os'
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
