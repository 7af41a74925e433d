import { closeSync, readFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { openStateFile, type StateRule } from '../fs/state-file.js'
import { type EffectivePolicy, effectivePolicy, type PolicyDocument, parsePolicy } from './policy.js'

/** The operator's policy file, in the tool's config dir. */
export const POLICY_FILE = 'policy.json'

/**
 * Where tests put the system policy's root instead of `/` (in-process, or by a test-only `node --import`); no
 * environment variable or flag reaches it, and code that can set it already runs inside the tool.
 */
export const SYSTEM_ROOT_FOR_TESTS = Symbol.for('agentcli.test.system_root')

/**
 * The one place the system policy's path is computed: `/etc/<bin>/policy.json` (`/private/etc` on macOS, where
 * `/etc` is a link, and links are refused), and the directory its ownership check walks up to (`/`). Undefined on
 * Windows, which has no root-owned `/etc` to trust: there the user's policy stays the only one.
 */
export function systemPolicyPath(
  bin: string,
  platform: NodeJS.Platform = process.platform,
): { path: string; top: string } | undefined {
  if (platform === 'win32') return undefined
  const hook = (globalThis as Record<symbol, unknown>)[SYSTEM_ROOT_FOR_TESTS]
  const top = typeof hook === 'string' ? resolve(hook) : '/'
  const etc = platform === 'darwin' ? join('private', 'etc') : 'etc'
  return { path: join(top, etc, bin, POLICY_FILE), top }
}

/** A policy file opened by the rule (never through a link), parsed strictly; undefined when it does not exist. */
function readPolicyFile(
  path: string,
  rule: StateRule,
  refusal: (e: AgentError) => AgentError,
  system = false,
): PolicyDocument | undefined {
  let fd: number
  try {
    fd = openStateFile(path, 'read', rule)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error instanceof AgentError ? refusal(error) : error
  }
  let text: string
  try {
    text = readFileSync(fd, 'utf8')
  } finally {
    closeSync(fd)
  }
  let doc: unknown
  try {
    doc = JSON.parse(text)
  } catch {
    throw new AgentError('E_CONFIG', `${path} is not valid JSON`, {
      details: { path, reason: 'invalid_policy', fix: `correct ${path}` },
    })
  }
  return parsePolicy(doc, path, system)
}

/**
 * The operator's policy: read without following a link, refused (`E_CONFIG`) when it or its directory is a link,
 * another user's, or readable or writable by anyone else (a policy others can edit gates nothing); undefined when
 * there is none. The file is read once per check, so a policy changed between dry-run and confirm is seen.
 */
export function readOperatorPolicy(configDir: string): PolicyDocument | undefined {
  return readPolicyFile(join(configDir, POLICY_FILE), { secret: true }, (e) => e)
}

/**
 * The system policy (`/etc/<bin>/policy.json`): the one the user the tool (and an agent) runs as cannot change.
 * Accepted only when it and every directory up to `/` belong to root and nobody else may write them, and none is
 * a link; one that exists but fails this, or that this user cannot read, is `E_CONFIG` naming it and the fix,
 * never ignored (fail closed). Undefined when there is none.
 */
export function readSystemPolicy(bin: string, platform?: NodeJS.Platform): PolicyDocument | undefined {
  const where = systemPolicyPath(bin, platform)
  if (!where) return undefined
  const { path, top } = where
  const unsafe = (e: AgentError) => {
    // Every refusal of the state-file check names the path it refused and its fix.
    const d = e.details as { path: string; fix: string }
    return new AgentError('E_CONFIG', `the system policy ${path} is refused: ${e.message}`, {
      details: {
        path,
        refused: d.path,
        reason: 'system_policy_unsafe',
        fix: `${d.fix}; the system policy and every directory above it must belong to root and be writable by root alone`,
      },
    })
  }
  try {
    return readPolicyFile(path, { owner: 'root', upTo: top }, unsafe, true)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error
    throw new AgentError('E_CONFIG', `the system policy ${path} cannot be read by this user`, {
      details: {
        path,
        reason: 'system_policy_unreadable',
        fix: `as root: chmod a+r ${path} (and a+x its directories)`,
      },
    })
  }
}

/**
 * The policy a write is judged by: the tool's defaults (`"agentcli": {"policy": …}` in its package.json), the
 * system policy when there is one, and the operator's file. No flag and no environment variable takes part:
 * nothing a caller passes can widen it.
 */
export function loadPolicy(
  configDir: string,
  pjson: { agentcli?: { policy?: unknown } },
  bin: string,
): EffectivePolicy | undefined {
  const declared = pjson.agentcli?.policy
  const tool = declared === undefined ? undefined : parsePolicy(declared, 'package.json "agentcli.policy"')
  return effectivePolicy(tool, readOperatorPolicy(configDir), readSystemPolicy(bin))
}
