import { closeSync, constants, fstatSync, lstatSync, openSync, type Stats } from 'node:fs'
import { dirname } from 'node:path'
import { AgentError } from '../errors/agent-error.js'

/**
 * How strict a state file's check is: a secret must also be unreadable by anyone but its owner. A file this user
 * must not be able to change (the system policy) is `owner: 'root'`: it and its directories belong to root (uid 0)
 * and nobody else may write them; `upTo` then checks every directory from the file's up to that one (`/`), since
 * whoever can write any of them can swap what lies below.
 */
export type StateRule = { secret?: boolean; owner?: 'self' | 'root'; upTo?: string }

/** The open flags {@link openStateFile} knows: read, or append (created 0600 when missing). */
export type StateOpen = 'read' | 'append'

const POSIX = process.platform !== 'win32'
// Where the platform lacks it (0), the lstat just before the open stands alone.
const NOFOLLOW = constants.O_NOFOLLOW ?? 0
const OPEN_FLAGS: Record<StateOpen, number> = {
  read: constants.O_RDONLY | NOFOLLOW,
  append: constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NOFOLLOW,
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

function refused(path: string, why: string, fix: string, extra: Record<string, string> = {}): AgentError {
  return new AgentError('E_CONFIG', `${path} ${why}: refused`, { details: { path, ...extra, fix } })
}

/**
 * Whoever controls a state file or its directory controls what the tool signs, appends or trusts: a link (to a
 * file an attacker knows or wants written), another user's file, or one others can write is refused. The tool
 * itself never links state, so every link is someone else's.
 */
function check(path: string, info: Stats, kind: 'file' | 'directory', rule: StateRule): void {
  if (info.isSymbolicLink())
    throw refused(
      path,
      'is a symbolic link (state is never followed through a link)',
      `replace the link with the ${kind} itself (rm ${path}, then move the real ${kind} there)`,
    )
  // Not a directory: the operation itself fails (ENOTDIR) and its caller names the fix.
  if (kind === 'directory' && !info.isDirectory()) return
  if (kind === 'file' && !info.isFile())
    throw new AgentError('E_IO', `${path} is not a regular file`, {
      details: { path, fix: `move ${path} aside; the tool recreates it` },
    })
  if (!POSIX) return
  if (rule.owner === 'root') {
    if (info.uid !== 0)
      throw refused(path, `belongs to uid ${info.uid}, not to root`, `as root: chown root ${path}`, {
        owner: String(info.uid),
      })
  } else {
    const uid = process.getuid?.()
    if (uid !== undefined && info.uid !== uid)
      throw refused(
        path,
        `belongs to uid ${info.uid}, not to this user (uid ${uid})`,
        `run as its owner, or move ${path} aside (or chown ${uid} ${path} if you made it)`,
        { owner: String(info.uid) },
      )
  }
  const mode = info.mode & 0o777
  const others = rule.secret && kind === 'file' ? 0o077 : 0o022
  if ((mode & others) !== 0) {
    const fix = rule.secret
      ? `chmod ${kind === 'file' ? '600' : '700'} ${path}`
      : `${rule.owner === 'root' ? 'as root: ' : ''}chmod go-w ${path}`
    const who = rule.secret && kind === 'file' ? 'readable or writable by other users' : 'writable by other users'
    throw refused(path, `is ${who} (mode ${mode.toString(8)})`, fix, { mode: mode.toString(8) })
  }
}

/** The status of `path` without following a link; undefined when it does not exist. */
function lstatOrNone(path: string): Stats | undefined {
  try {
    return lstatSync(path)
  } catch (error) {
    if (code(error) === 'ENOENT') return undefined
    throw error
  }
}

/**
 * Check the directory that holds state: a real directory (not a link), this user's (or root's, by the rule), not
 * writable by others, and with `upTo` each directory above it up to that one. False when it does not exist yet
 * (the caller creates it); `E_CONFIG` naming the path and the fix otherwise.
 */
export function checkStateDir(dir: string, rule: StateRule = {}): boolean {
  const info = lstatOrNone(dir)
  if (info) check(dir, info, 'directory', rule)
  if (info && rule.upTo !== undefined && dir !== rule.upTo && dirname(dir) !== dir) checkStateDir(dirname(dir), rule)
  return info !== undefined
}

/**
 * Check a state file before it is replaced or created, and its directory: the file's status (never a link's),
 * or undefined when either does not exist yet.
 */
export function inspectStateFile(path: string, rule: StateRule = {}): Stats | undefined {
  if (!checkStateDir(dirname(path), rule)) return undefined
  const info = lstatOrNone(path)
  if (info) check(path, info, 'file', rule)
  return info
}

/**
 * Open a state file without following a link (O_NOFOLLOW), then check what was opened (fstat: no race with a
 * swap) and its directory. Returns the descriptor; a missing file (read) or directory throws ENOENT as is.
 */
export function openStateFile(path: string, how: StateOpen, rule: StateRule = {}): number {
  checkStateDir(dirname(path), rule)
  if (NOFOLLOW === 0) {
    const info = lstatOrNone(path)
    if (info?.isSymbolicLink()) check(path, info, 'file', rule)
  }
  let fd: number
  try {
    fd = openSync(path, OPEN_FLAGS[how], 0o600)
  } catch (error) {
    // ELOOP is O_NOFOLLOW meeting a link (EMLINK on FreeBSD); EACCES may be another user's file: say which.
    if (code(error) !== 'ENOENT') {
      const info = lstatOrNone(path)
      if (info) check(path, info, 'file', rule)
    }
    throw error
  }
  try {
    check(path, fstatSync(fd), 'file', rule)
  } catch (error) {
    closeSync(fd)
    throw error
  }
  return fd
}
