import { randomBytes } from 'node:crypto'
import { readFileSync, statSync } from 'node:fs'
import { chmod, link, mkdir, rm, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'

/**
 * The keys that sign and verify confirm tokens: `current` signs (its id goes into the token), every key of
 * `keys` verifies the tokens that name it, so a rotated-out key keeps its tokens valid until they expire.
 */
export type KeyRing = { current: { id: string | null; key: Buffer }; keys: ReadonlyMap<string | null, Buffer> }

/** Where the confirm secret comes from: a file by default; injectable (e.g. dry-run here, confirm elsewhere). */
export type SecretSource = {
  readonly description: string
  /** The signing key. */
  get(): Promise<Buffer>
  /** The key ring, for a source that rotates keys; without it, `get()` is the one key and tokens carry no id. */
  ring?(): Promise<KeyRing>
}

const SECRET_BYTES = 32
const HEX = /^[0-9a-f]{64}$/

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
 * or corrupt file is refused with a fix, because rotating it would quietly invalidate or weaken tokens.
 */
export function fileSecretSource(configDir: string, warn: (message: string) => void = () => {}): SecretSource {
  const path = join(configDir, SECRET_FILE)
  let cached: Buffer | undefined
  return {
    description: path,
    async get() {
      if (cached) return cached
      cached = await readOrCreate(configDir, path, warn)
      return cached
    },
  }
}

async function readOrCreate(dir: string, path: string, warn: (message: string) => void): Promise<Buffer> {
  try {
    return readChecked(path, warn)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(dir, { recursive: true, mode: 0o700 })
  await chmod(dir, 0o700)
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`
  await writeFile(temp, `${randomBytes(SECRET_BYTES).toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
  try {
    // link() fails if the name exists: whoever links first wins, everyone else reads the winner's secret.
    await link(temp, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw wrapIo(error, path)
  } finally {
    await rm(temp, { force: true })
  }
  return readChecked(path, warn)
}

/**
 * Whoever can write the directory can replace the secret (rename over it) and mint tokens: a directory others
 * can write is refused. A group-writable one is only warned about, since with per-user groups (umask 002) it is
 * an ordinary setup.
 */
function checkDir(dir: string, warn: (message: string) => void): void {
  const mode = statSync(dir).mode & 0o777
  if ((mode & 0o002) !== 0) {
    throw new AgentError(
      'E_CONFIG',
      `${dir} holds the confirm secret but other users can write it (mode ${mode.toString(8)})`,
      {
        details: { path: dir, mode: mode.toString(8), fix: `chmod 700 ${dir}` },
      },
    )
  }
  if ((mode & 0o020) !== 0) warn(`${dir} holds the confirm secret and its group can write it; run chmod 700 ${dir}`)
}

/** Synchronous system calls: three tiny ones on every write, each a thread-pool round trip if async. */
function readChecked(path: string, warn: (message: string) => void): Buffer {
  const info = statSync(path)
  checkDir(dirname(path), warn)
  if ((info.mode & 0o077) !== 0) {
    throw new AgentError('E_CONFIG', `${path} is readable by other users (mode ${(info.mode & 0o777).toString(8)})`, {
      details: { path, mode: (info.mode & 0o777).toString(8), fix: `chmod 600 ${path}` },
    })
  }
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    throw wrapIo(error, path)
  }
  return parseSecret(text, path)
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
