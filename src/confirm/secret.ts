import { closeSync, readFileSync } from 'node:fs'
import { link, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { checkStateDir, openStateFile } from '../fs/state-file.js'
import { osRandomBytes } from './os-random.js'

/**
 * The keys that sign and verify confirm tokens: `current` signs (its id goes into the token), every key of
 * `keys` verifies the tokens that name it, so a rotated-out key keeps its tokens valid until they expire.
 */
export type KeyRing = { current: { id: string | null; key: Buffer }; keys: ReadonlyMap<string | null, Buffer> }

/** Where the confirm secret comes from: a file by default; injectable (e.g. dry-run here, confirm elsewhere). */
export type SecretSource = {
  /** Where the key comes from, in words (a path, an env var): said in errors, never the key. */
  readonly description: string
  /** The signing key. */
  get(): Promise<Buffer>
  /** The key ring, for a source that rotates keys; without it, `get()` is the one key and tokens carry no id. */
  ring?(): Promise<KeyRing>
}

const SECRET_BYTES = 32
const HEX = /^[0-9a-f]{64}$/
/** The secret's file and directory: this user's, not a link, and nobody else may read the file. */
const SECRET_RULE = { secret: true } as const

/** The secret file's name inside the tool's config dir. */
export const SECRET_FILE = 'confirm.secret'

function parseSecret(text: string, path: string): Buffer {
  const hex = text.trim()
  if (!HEX.test(hex)) {
    throw new AgentError('E_IO', `${path} is corrupt (expected ${SECRET_BYTES} bytes as hex)`, {
      details: {
        path,
        fix: `remove ${path}; a new secret is created on the next dry-run (pending confirm tokens become invalid)`,
      },
    })
  }
  return Buffer.from(hex, 'hex')
}

/**
 * The machine-local secret in `<configDir>/confirm.secret` (spec 002 §7): 32 random bytes, mode 0600 in a 0700
 * dir, created atomically so that two first runs end with one secret, and never silently replaced — a readable
 * or corrupt file is refused with a fix, because rotating it would quietly invalidate or weaken tokens. Whoever
 * knows the secret mints tokens: a link (to a file whose value someone knows), another user's file, or a
 * directory others can write (they could rename one in) is refused too (`openStateFile`).
 */
export function fileSecretSource(configDir: string): SecretSource {
  const path = join(configDir, SECRET_FILE)
  let cached: Buffer | undefined
  return {
    description: path,
    async get() {
      if (cached) return cached
      cached = await readOrCreate(configDir, path)
      return cached
    },
  }
}

async function readOrCreate(dir: string, path: string): Promise<Buffer> {
  try {
    return readChecked(path)
  } catch (error) {
    if (error instanceof AgentError) throw error
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw wrapIo(error, path)
  }
  await mkdir(dir, { recursive: true, mode: 0o700 })
  // Checked before anything is written into it: a secret made in a linked or shared directory is not ours alone.
  checkStateDir(dir, SECRET_RULE)
  const temp = `${path}.${process.pid}.${osRandomBytes(6).toString('hex')}.tmp`
  await writeFile(temp, `${osRandomBytes(SECRET_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  try {
    // link() fails if the name exists: whoever links first wins, everyone else reads the winner's secret.
    await link(temp, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw wrapIo(error, path)
  } finally {
    await rm(temp, { force: true })
  }
  return readChecked(path)
}

/** Synchronous system calls: a few tiny ones on every write, each a thread-pool round trip if async. */
function readChecked(path: string): Buffer {
  const fd = openStateFile(path, 'read', SECRET_RULE)
  try {
    return parseSecret(readFileSync(fd, 'utf8'), path)
  } finally {
    closeSync(fd)
  }
}

function wrapIo(error: unknown, path: string): AgentError {
  return new AgentError('E_IO', `cannot use ${path}: ${(error as Error).message}`, {
    details: { path },
    cause: error,
  })
}

/** A secret injected as hex through an environment variable (for a fleet that shares one across machines). */
export function envSecretSource(name: string, value: string): SecretSource {
  return {
    description: `$${name}`,
    async get() {
      const hex = value.trim().toLowerCase()
      if (!HEX.test(hex)) {
        throw new AgentError('E_CONFIG', `${name} must be ${SECRET_BYTES} bytes as 64 hex characters`, {
          details: { env: name, fix: `unset ${name} or set it to 64 hex characters` },
        })
      }
      return Buffer.from(hex, 'hex')
    },
  }
}
