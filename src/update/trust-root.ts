import { chmod, lstat, mkdir, readdir, readFile, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { loadOptional } from '../runtime/optional-peers.js'
import { integrityError } from './errors.js'

/** Where the trusted root in use came from. */
export type TrustRootSource = 'pinned' | 'tuf' | 'tuf_cache'

/** What {@link loadTrustedRoot} needs: the tool's declared trust settings and its cache dir. */
export type TrustRootOptions = {
  /** A trusted_root.json the tool pins (a private Sigstore instance): used as is, no TUF. */
  pinned: string | null
  /** The TUF repository that distributes `trusted_root.json`. */
  mirror: string
  /** The initial root.json for a mirror that @sigstore/tuf carries no seed for. */
  tufRoot: string | null
  /** The tool's cache dir: the verified TUF metadata and target live in `sigstore-tuf/` under it. */
  cacheDir: string
  /** Per-request timeout of the TUF fetches. */
  timeoutMs: number
}

/** A trusted root and where it came from. */
export type LoadedTrustRoot = { root: unknown; source: TrustRootSource }

/** Error codes and names along a cause chain that mean "could not reach the repository", not "it lied". */
const UNREACHABLE =
  /\b(FetchError|DownloadHTTPError|ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|network timeout|socket hang up)\b/

/** Whether a TUF failure was the repository being unreachable (anywhere along its cause chain). */
export function isUnreachable(error: unknown): boolean {
  for (
    let e = error as { cause?: unknown; code?: unknown; name?: unknown } | undefined, depth = 0;
    e && depth < 8;
    depth++
  ) {
    if (UNREACHABLE.test(`${String(e.name)} ${String(e.code)} ${String(e)}`)) return true
    e = e.cause as typeof e
  }
  return false
}

function configError(path: string, why: string, cause?: unknown): AgentError {
  return new AgentError('E_CONFIG', `${path} is not a usable Sigstore trust file: ${why}`, {
    details: {
      path,
      stage: 'verify_signature',
      fix: `restore ${path} from the tool's release (it is declared in the tool's package.json), or reinstall the tool`,
    },
    cause,
  })
}

/** Read a JSON trust file the tool ships; unreadable, not JSON or not the expected kind is `E_CONFIG`. */
export async function readTrustFile(path: string, kind: RegExp): Promise<unknown> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (error) {
    throw configError(path, `cannot read it (${(error as NodeJS.ErrnoException).code})`, error)
  }
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw configError(path, 'it is not JSON', error)
  }
  const media = (value as { mediaType?: unknown; signed?: { _type?: unknown } } | null) ?? {}
  if (!kind.test(`${String(media.mediaType)} ${String(media.signed?._type)}`))
    throw configError(path, 'it is not a Sigstore trusted root or a TUF root')
  return value
}

/**
 * Whether every entry of the TUF cache is this user's own and writable by nobody else. The cached root.json is
 * the trust anchor of the next refresh and of the offline fallback: a cache that another user could have
 * written (a shared or world-writable cache dir, a directory planted by someone else) is not trusted.
 */
export async function isOwnTree(path: string, uid: number | undefined): Promise<boolean> {
  let info: Awaited<ReturnType<typeof lstat>>
  try {
    info = await lstat(path)
  } catch {
    return true
  }
  if (info.isSymbolicLink() || (info.mode & 0o022) !== 0 || (uid !== undefined && info.uid !== uid)) return false
  if (!info.isDirectory()) return true
  for (const name of await readdir(path)) if (!(await isOwnTree(join(path, name), uid))) return false
  return true
}

/** Make the cache this user's alone (0700 dirs, 0600 files), whatever the umask it was written under. */
async function tighten(path: string): Promise<void> {
  const info = await lstat(path)
  await chmod(path, info.isDirectory() ? 0o700 : 0o600)
  if (info.isDirectory()) for (const name of await readdir(path)) await tighten(join(path, name))
}

/**
 * The Sigstore trusted root to verify a release against, refreshed through TUF so that a key rotation upstream
 * does not break updates until the next release of the tool:
 * 1. a root the tool pins in its package.json (`trusted_root`) is used as is;
 * 2. otherwise TUF refreshes `trusted_root.json` from the mirror, every metadata file verified from the
 *    shipped TUF root (seeded by @sigstore/tuf, or the tool's `tuf_root`);
 * 3. when the mirror cannot be reached, the copy TUF verified earlier is used if its signed metadata has not
 *    expired (checked again, offline);
 * the cache is trusted only when it is the user's own and writable by no one else ({@link isOwnTree});
 * anything TUF refuses (a bad signature, expired metadata, a target whose hash does not match) fails closed:
 * `E_INTEGRITY` `root_untrusted`. There is no unverified fallback and no setting that turns this off.
 */
export async function loadTrustedRoot(options: TrustRootOptions): Promise<LoadedTrustRoot> {
  if (options.pinned) return { root: await readTrustFile(options.pinned, /trustedroot/), source: 'pinned' }
  if (options.tufRoot) await readTrustFile(options.tufRoot, /\broot\b/)
  const [{ getTrustedRoot }, { TrustedRoot }] = await loadOptional('update', () =>
    Promise.all([import('@sigstore/tuf'), import('@sigstore/protobuf-specs')]),
  )
  const cachePath = join(options.cacheDir, 'sigstore-tuf')
  if (!(await isOwnTree(cachePath, process.getuid?.()))) await rm(cachePath, { recursive: true, force: true })
  await mkdir(cachePath, { recursive: true, mode: 0o700 })
  const attempt = async (forceCache: boolean) => {
    const root = await getTrustedRoot({
      mirrorURL: options.mirror,
      cachePath,
      ...(options.tufRoot ? { rootPath: options.tufRoot } : {}),
      forceCache,
      retry: { retries: 0 },
      timeout: options.timeoutMs,
    })
    await tighten(cachePath)
    return TrustedRoot.toJSON(root)
  }
  let online: unknown
  try {
    return { root: await attempt(false), source: 'tuf' }
  } catch (error) {
    online = error
  }
  const code = (online as { code?: unknown }).code
  if (code === 'TUF_INIT_CACHE_ERROR')
    throw new AgentError('E_CONFIG', `no TUF root is known for ${options.mirror}`, {
      details: {
        stage: 'verify_signature',
        fix: 'declare "tuf_root" (the mirror\'s initial root.json, shipped with the tool) in "agentcli.update" of package.json',
      },
      cause: online,
    })
  if (!isUnreachable(online)) {
    // The local cache itself may be what broke (a truncated file): it is advisory, so start it over once.
    if (!String(code).startsWith('TUF_')) {
      await rm(cachePath, { recursive: true, force: true })
      try {
        return { root: await attempt(false), source: 'tuf' }
      } catch (error) {
        if (isUnreachable(error)) return unreachable(options, error)
        throw refused(options, error)
      }
    }
    throw refused(options, online)
  }
  try {
    return { root: await attempt(true), source: 'tuf_cache' }
  } catch (error) {
    return unreachable(options, error)
  }
}

function refused(options: TrustRootOptions, error: unknown): AgentError {
  const failure = integrityError(
    'root_untrusted',
    `the Sigstore trusted root from ${options.mirror} did not verify through TUF, so no release can be trusted: ${describe(error)}`,
    { stage: 'verify_signature', mirror: options.mirror },
  )
  failure.cause = error
  return failure
}

function unreachable(options: TrustRootOptions, error: unknown): never {
  const host = new URL(options.mirror).host
  throw new AgentError(
    'E_NETWORK',
    `cannot refresh the Sigstore trusted root from ${options.mirror}, and no verified copy that is still valid is cached`,
    {
      details: {
        stage: 'verify_signature',
        reason: 'trust_root_unavailable',
        host,
        hint: `${host} must be reachable once (then its signed copy is cached until its metadata expires); on a machine that stays offline, the tool can pin "trusted_root" in its package.json`,
      },
      cause: error,
    },
  )
}

/** The innermost message of a cause chain: what TUF actually refused. */
function describe(error: unknown): string {
  const messages: string[] = []
  for (let e = error as { cause?: unknown } | undefined, depth = 0; e && depth < 8; depth++) {
    messages.push(String((e as Error).message))
    e = e.cause as typeof e
  }
  return messages.join(': ')
}
