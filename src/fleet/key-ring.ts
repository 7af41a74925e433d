import { readFileSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import type { KeyRing, SecretSource } from '../confirm/secret.js'
import { AgentError } from '../errors/agent-error.js'
import { runEnv } from '../settings/run-env.js'

/** The least an injected key may be: 32 bytes (64 hex characters), as the machine-local secret is. */
export const MIN_KEY_BYTES = 32
const MAX_KEY_BYTES = 128
/** A random 32-byte key has about 28 distinct byte values; fewer than this is a pattern, not a key. */
const MIN_DISTINCT_BYTES = 16
const KID = /^[A-Za-z0-9_-]{1,32}$/
const HEX = /^(?:[0-9a-f]{2})+$/

function bad(origin: string, message: string, fix: string): AgentError {
  return new AgentError('E_CONFIG', `${origin}: ${message}`, { details: { setting: origin, fix } })
}

/**
 * Parse an injected key ring: `<hex>` (one key, no id), or `<kid>:<hex>` entries separated by commas or new
 * lines, the first one signing and every one verifying. Each key must be at least {@link MIN_KEY_BYTES} random
 * bytes: an injected secret never weakens the tokens it signs, so a short or patterned one is refused.
 */
export function parseKeyRing(text: string, origin: string): KeyRing {
  const entries = text
    .split(/[\n,]/)
    .map((e) => e.trim())
    .filter(Boolean)
  if (entries.length === 0) throw bad(origin, 'no key', 'generate one with `openssl rand -hex 32`')
  const keys = new Map<string | null, Buffer>()
  let current: KeyRing['current'] | undefined
  for (const entry of entries) {
    const colon = entry.indexOf(':')
    const id = colon === -1 ? null : entry.slice(0, colon)
    const hex = (colon === -1 ? entry : entry.slice(colon + 1)).toLowerCase()
    if (id !== null && !KID.test(id))
      throw bad(origin, `key id ${JSON.stringify(id)} is not 1-32 of A-Z a-z 0-9 _ -`, 'rename the key id')
    if (id === null && entries.length > 1)
      throw bad(origin, 'with more than one key, every key needs an id (<kid>:<hex>)', 'prefix each key with its id')
    if (!HEX.test(hex) || hex.length < MIN_KEY_BYTES * 2 || hex.length > MAX_KEY_BYTES * 2)
      throw bad(
        origin,
        `a key must be ${MIN_KEY_BYTES} to ${MAX_KEY_BYTES} bytes as hex (got ${hex.length} characters)`,
        'generate one with `openssl rand -hex 32`',
      )
    const key = Buffer.from(hex, 'hex')
    if (new Set(key).size < MIN_DISTINCT_BYTES)
      throw bad(origin, 'a key is too regular to be random', 'generate one with `openssl rand -hex 32`')
    if (keys.has(id)) throw bad(origin, `key id ${id ?? '(none)'} appears twice`, 'give each key its own id')
    keys.set(id, key)
    current ??= { id, key }
  }
  return { current: current!, keys }
}

/**
 * Whoever can write the file (or replace it in its directory) can mint tokens, and whoever can read it can too:
 * a file other users can write or read is refused, as the machine-local secret is.
 */
function readSecretFile(path: string, origin: string): string {
  let info: ReturnType<typeof statSync>
  try {
    info = statSync(path)
  } catch (error) {
    throw bad(
      origin,
      `cannot read ${path} (${(error as NodeJS.ErrnoException).code})`,
      `point ${origin} at the secret file`,
    )
  }
  const mode = Number(info.mode) & 0o777
  if (!info.isFile()) throw bad(origin, `${path} is not a file`, `point ${origin} at the secret file`)
  if ((mode & 0o026) !== 0)
    throw bad(
      origin,
      `${path} is readable or writable by other users (mode ${mode.toString(8)})`,
      `chmod 400 ${path} (Kubernetes: defaultMode 0400)`,
    )
  const dirMode = Number(statSync(dirname(path)).mode)
  if ((dirMode & 0o002) !== 0 && (dirMode & 0o1000) === 0)
    throw bad(origin, `${dirname(path)} can be written by other users`, `chmod o-w ${dirname(path)}`)
  return readFileSync(path, 'utf8')
}

/**
 * The fleet's injected secret: `<BIN>_CONFIRM_SECRET` (the key ring itself) or `<BIN>_CONFIRM_SECRET_FILE` (a path,
 * for secret managers that mount files), else undefined (the machine-local file). Both set is `E_CONFIG`.
 */
export function injectedSecretSource(prefix: string): SecretSource | undefined {
  const valueName = `${prefix}CONFIRM_SECRET`
  const fileName = `${prefix}CONFIRM_SECRET_FILE`
  // Read as toolEnv reads every setting (empty is unset); CONFIRM_SECRET_FILE's rule is checked here.
  const env = runEnv()
  const value = env[valueName] || undefined
  const file = env[fileName] || undefined
  if (!value && !file) return undefined
  if (value && file) throw bad(`$${valueName}`, `set either ${valueName} or ${fileName}, not both`, `unset one of them`)
  const origin = value ? `$${valueName}` : `$${fileName}`
  let ring: KeyRing | undefined
  const load = () => {
    ring ??= parseKeyRing(value ?? readSecretFile(file!, origin), origin)
    return ring
  }
  return {
    description: value ? `$${valueName}` : file!,
    async get() {
      return load().current.key
    },
    async ring() {
      return load()
    },
  }
}
