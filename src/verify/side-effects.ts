import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { basename, join, sep } from 'node:path'
import { settleWorkers } from '../jobs/end-workers.js'
import { type Call, call, type Target } from './call.js'

/** Every entry under a root: `dir <mode>`, `link <target>`, or `<mode> <mtime> <size> <sha256>` of a file. */
export type Snapshot = Map<string, string>

/** An error of an entry that another process removed between the listing and the look (ENOENT, ENOTDIR). */
const vanished = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')

/**
 * How one entry is recorded, or undefined when it is gone by the time it is looked at: a call's detached job worker
 * may create and remove its lock files while the walk runs, and a walk must not fail on it.
 */
export function describeEntry(path: string): { kind: 'dir' | 'other'; value: string } | undefined {
  try {
    const stat = lstatSync(path)
    if (stat.isDirectory()) return { kind: 'dir', value: `dir ${stat.mode & 0o7777}` }
    if (stat.isSymbolicLink()) return { kind: 'other', value: `link ${readlinkSync(path)}` }
    const digest = createHash('sha256').update(readFileSync(path)).digest('hex')
    return { kind: 'other', value: `${stat.mode & 0o7777} ${stat.mtimeMs} ${stat.size} ${digest}` }
  } catch (error) {
    if (vanished(error)) return undefined
    throw error
  }
}

/**
 * Every entry under `root` but `skip` (the cache dir): a digest, the size and the mtime of each file, the target of
 * each link. The mtime catches a call that rewrites a file with the same bytes: it still wrote (and raced any
 * writer); the size and digest let an append be told from a rewrite.
 */
export function snapshot(root: string, skip: string): Snapshot {
  const out: Snapshot = new Map()
  const walk = (dir: string) => {
    let names: string[]
    try {
      names = readdirSync(dir)
    } catch {
      return
    }
    for (const name of names) {
      const path = join(dir, name)
      if (path === skip) continue
      const entry = describeEntry(path)
      if (entry?.kind === 'dir') {
        out.set(`${path}/`, entry.value)
        walk(path)
      } else if (entry) out.set(path, entry.value)
    }
  }
  walk(root)
  return out
}

/**
 * The sandbox before a call whose side effects are checked, once the background work earlier calls started has
 * settled (job workers finished, or ended): else their writes would be blamed on this call.
 */
export async function stateBefore(t: Target): Promise<Snapshot> {
  await settleWorkers(t.env.XDG_DATA_HOME!)
  return snapshot(t.home, t.env.XDG_CACHE_HOME!)
}

/** One call, seen alone: what it answered, and what it changed of the sandbox outside the cache dir. */
export type Bracketed = { out: Call; changed: string[] }

/** Run one call between two snapshots of the sandbox (the background work of earlier calls settled first). */
export async function bracketedCall(t: Target, label: string, argv: string[]): Promise<Bracketed> {
  const before = await stateBefore(t)
  const out = await call(t, label, argv)
  return { out, changed: changes(before, snapshot(t.home, t.env.XDG_CACHE_HOME!)) }
}

/** What changed between two snapshots: created `+`, changed `~` and removed `-` paths, sorted. */
export function changes(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = []
  for (const [path, value] of after)
    if (before.get(path) !== value) out.push(before.has(path) ? `~${path}` : `+${path}`)
  for (const path of before.keys()) if (!after.has(path)) out.push(`-${path}`)
  return out.sort()
}

/** Whether the file at `path` only grew since `was` (its snapshot value): the old bytes are its prefix. */
function onlyGrew(path: string, was: string | undefined): boolean {
  const [, , size, digest] = was?.split(' ') ?? []
  if (size === undefined || digest === undefined || was?.startsWith('dir ') || was?.startsWith('link ')) return false
  let now: Buffer
  try {
    now = readFileSync(path)
  } catch {
    return false
  }
  const old = Number(size)
  return now.length >= old && createHash('sha256').update(now.subarray(0, old)).digest('hex') === digest
}

/** The audit log a non-read call appends one line to (docs/contract.md, the audit rule). */
const AUDIT_LOG = 'audit.jsonl'
/** The machine-local token secret, made on first use (seed 002 §7): a dry-run may be that first use. */
const CONFIRM_SECRET = 'confirm.secret'
/** What a `local` command may change even where a write made it: a job's record, a human checkpoint. */
const LOCAL_STATE_DIRS = ['jobs', 'checkpoints']

const appendedAudit = (change: string, before: Snapshot) =>
  basename(change.slice(1)) === AUDIT_LOG &&
  (change[0] === '+' || (change[0] === '~' && onlyGrew(change.slice(1), before.get(change.slice(1)))))

/**
 * The changes `allowed` does not explain. A directory created only to hold an allowed file (the data dir an audit
 * line is the first thing in) is explained with it.
 */
function unexplained(changed: string[], allowed: (change: string) => boolean): string[] {
  const ok = changed.filter(allowed)
  return changed.filter(
    (c) =>
      !ok.includes(c) &&
      !(c.startsWith('+') && c.endsWith('/') && ok.some((o) => o.startsWith('+') && o.startsWith(c))),
  )
}

/**
 * What a `--dry-run` changed beyond what the contract lets it (docs/contract.md: "no side effect except a `dry_run`
 * audit record"): an appended `audit.jsonl` line, and `confirm.secret` created on first use. Anything else under
 * the sandbox home — the config and data dirs, dotfiles, the working directory — is a side effect.
 */
export function dryRunSideEffects(changed: string[], before: Snapshot): string[] {
  return unexplained(
    changed,
    (c) => appendedAudit(c, before) || (c.startsWith('+') && basename(c.slice(1)) === CONFIRM_SECRET),
  )
}

/**
 * What a `local` command changed of the state the tool's writes own (`owned`: every path a confirmed write created
 * or changed). A local command changes a session, credentials or a job (docs/contract.md, kinds of command) and
 * appends its audit line; changing, replacing or removing what only a write may change is going around the
 * dry-run → confirm gate. Paths no write touched (a session file, stored credentials) are the local command's own.
 */
export function localOverreach(changed: string[], before: Snapshot, owned: ReadonlySet<string>): string[] {
  return changed.filter((c) => {
    const path = c.slice(1)
    if (!owned.has(path)) return false
    if (appendedAudit(c, before)) return false
    return !path.split(sep).some((part) => LOCAL_STATE_DIRS.includes(part))
  })
}

/**
 * What a `--confirm` the policy held (no approval filed) changed beyond its audit line: a held change is refused
 * before anything is consumed or applied (docs/contract.md), so any other created, changed or removed path is the
 * change going through, or part of it.
 */
export function heldConfirmSideEffects(changed: string[], before: Snapshot): string[] {
  return unexplained(changed, (c) => appendedAudit(c, before))
}
