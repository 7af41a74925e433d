import { closeSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { openStateFile } from '../fs/state-file.js'
import { type EffectivePolicy, effectivePolicy, type PolicyDocument, parsePolicy } from './policy.js'

/** The operator's policy file, in the tool's config dir. */
export const POLICY_FILE = 'policy.json'

/**
 * The operator's policy: read without following a link, refused (`E_CONFIG`) when it or its directory is a link,
 * another user's, or readable or writable by anyone else (a policy others can edit gates nothing); undefined when
 * there is none. The file is read once per check, so a policy changed between dry-run and confirm is seen.
 */
export function readOperatorPolicy(configDir: string): PolicyDocument | undefined {
  const path = join(configDir, POLICY_FILE)
  let fd: number
  try {
    fd = openStateFile(path, 'read', { secret: true })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
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
  return parsePolicy(doc, path)
}

/**
 * The policy a write is judged by: the tool's defaults (`"agentcli": {"policy": …}` in its package.json) and the
 * operator's file. No flag and no environment variable takes part: nothing a caller passes can widen it.
 */
export function loadPolicy(configDir: string, pjson: { agentcli?: { policy?: unknown } }): EffectivePolicy | undefined {
  const declared = pjson.agentcli?.policy
  const tool = declared === undefined ? undefined : parsePolicy(declared, 'package.json "agentcli.policy"')
  return effectivePolicy(tool, readOperatorPolicy(configDir))
}
