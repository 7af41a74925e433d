import { randomBytes } from 'node:crypto'
import { readdir, rm } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from '../fs/json-file.js'
import { clearLockDebris, type HeldLock, tryPidLock } from '../fs/pid-lock.js'

/** What a person must do (spec 002 §15.3). Closed: agents branch on it. */
export const HUMAN_ACTIONS = ['open_url', 'enter_code', 'scan_qr', 'approve', 'complete_2fa'] as const
/** One of {@link HUMAN_ACTIONS}. */
export type HumanAction = (typeof HUMAN_ACTIONS)[number]

/**
 * How a person approves a step, published in the checkpoint so an agent can relay it word for word: what to
 * open, what to enter there, or what to run. Nothing here is a secret (a user code is meant to be shown); it is
 * stored with the checkpoint and repeated in every `E_HUMAN_REQUIRED` for it (`details.approval`, with the
 * checkpoint's `expires_at`).
 */
export type HumanApproval = {
  /** What the person does, in one or two sentences, for the agent to relay. */
  instructions: string
  /** Where the person goes (a device flow's `verification_uri`). */
  verification_uri?: string
  /** The same page with the code already filled in, when the service offers one. */
  verification_uri_complete?: string
  /** What the person enters there. */
  user_code?: string
  /** A command the person runs instead of opening a page (a local stand-in, an admin's CLI). */
  command?: string
}

/** A persisted checkpoint: where a command stopped for a person, and the state it needs to continue. */
export type Checkpoint<S = unknown> = {
  /** The checkpoint id (`cp_…`), what the resume command takes. */
  id: string
  /** The id of the command that stopped. */
  command: string
  /** What the person has to do. */
  action: HumanAction
  /** How the person approves it (see {@link HumanApproval}). */
  approval?: HumanApproval
  /** The state the resume step needs, as the request gave it; kept locally, never printed. */
  state: S
  /** When it was made (ISO 8601 UTC). */
  created_at: string
  /** When it lapses (ISO 8601 UTC): a resume after that is `E_CONFLICT`. */
  expires_at: string
  /** Set when a resume completed the step: the checkpoint is spent (its state is dropped). */
  used_at?: string
  /** The remote subject (`tool mcp --http`) that started it: only that subject resumes it. Absent on the CLI. */
  owner?: string
}

/** What a command passes when it needs a person. */
export type HumanRequest<S> = {
  /** What the person has to do (see {@link HumanAction}). */
  action: HumanAction
  /** What to tell the person, in one sentence. */
  message: string
  /** The command that continues, given the checkpoint id. */
  resume: (id: string) => string
  /** State the resume step needs; stored locally, never printed. */
  state: S
  /** How the person approves it: kept with the checkpoint and given in every `E_HUMAN_REQUIRED` for it. */
  approval?: HumanApproval
  /** Shown to the agent: a URL, a code to enter, a QR image path… */
  details?: Record<string, unknown>
  /** How long the checkpoint can be resumed, in seconds (default 900: fifteen minutes). */
  ttlSeconds?: number
}

const ID = /^cp_[a-z0-9]{20}$/

function pathOf(dataDir: string, id: string): string {
  return join(dataDir, 'checkpoints', `${id}.json`)
}

function unknown(id: string): AgentError {
  return new AgentError('E_NOT_FOUND', `no checkpoint ${id}`, {
    details: { checkpoint_id: id },
    hint: 'start the step again; checkpoints are single-use and local to this machine',
  })
}

/** A new checkpoint for `request` (whichever store keeps it); an action outside the spec's list is a bug. */
export function newCheckpoint<S>(
  command: string,
  request: HumanRequest<S>,
  now: number,
  owner?: string,
): Checkpoint<S> {
  if (!(HUMAN_ACTIONS as readonly string[]).includes(request.action))
    throw new AgentError('E_INTERNAL', `unknown human action ${request.action}`)
  return {
    id: `cp_${randomBytes(16).toString('hex').slice(0, 20)}`,
    command,
    action: request.action,
    ...(request.approval ? { approval: request.approval } : {}),
    state: request.state,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + (request.ttlSeconds ?? 900) * 1000).toISOString(),
    ...(owner !== undefined ? { owner } : {}),
  }
}

/** Persist a checkpoint and build the `E_HUMAN_REQUIRED` error that hands the step to a person. */
export async function requireHuman<S>(
  dataDir: string,
  command: string,
  request: HumanRequest<S>,
  owner?: string,
): Promise<AgentError> {
  const now = Date.now()
  const checkpoint = newCheckpoint(command, request, now, owner)
  await sweepCheckpoints(dataDir, now)
  await writeJsonAtomic(pathOf(dataDir, checkpoint.id), checkpoint)
  return humanError(checkpoint, request.message, request.resume(checkpoint.id), request.details)
}

/**
 * The `E_HUMAN_REQUIRED` error for a checkpoint (also when a resume finds the person has not acted yet): its
 * action, the resume command, its id and expiry, and how the person approves it (`approval`, when published).
 */
export function humanError(
  checkpoint: Checkpoint,
  message: string,
  resume: string,
  details: Record<string, unknown> = {},
): AgentError {
  return new AgentError('E_HUMAN_REQUIRED', message, {
    details: {
      action: checkpoint.action,
      resume,
      checkpoint_id: checkpoint.id,
      expires_at: checkpoint.expires_at,
      ...(checkpoint.approval ? { approval: { ...checkpoint.approval, expires_at: checkpoint.expires_at } } : {}),
      ...details,
    },
  })
}

function claimPath(dataDir: string, id: string): string {
  return join(dataDir, 'checkpoints', `${id}.claim`)
}

function conflict(id: string, reason: 'checkpoint_used' | 'checkpoint_in_use', message: string): AgentError {
  return new AgentError('E_CONFLICT', message, {
    details: {
      reason,
      checkpoint_id: id,
      fix: reason === 'checkpoint_used' ? 'start the step again for a new checkpoint' : 'wait for the other resume',
    },
  })
}

async function read<S>(dataDir: string, command: string, id: string): Promise<Checkpoint<S>> {
  if (!ID.test(id)) throw unknown(id)
  const checkpoint = await readJsonFile<Checkpoint<S> | undefined>(
    pathOf(dataDir, id),
    () => undefined,
    (v): v is Checkpoint<S> | undefined =>
      typeof v === 'object' && v !== null && 'action' in v && typeof (v as Checkpoint).expires_at === 'string',
  )
  if (!checkpoint || checkpoint.command !== command) throw unknown(id)
  if (checkpoint.used_at)
    throw conflict(id, 'checkpoint_used', `checkpoint ${id} was already used at ${checkpoint.used_at}`)
  if (Date.parse(checkpoint.expires_at) <= Date.now()) {
    await rm(pathOf(dataDir, id), { force: true })
    throw new AgentError('E_CONFLICT', `checkpoint ${id} expired at ${checkpoint.expires_at}`, {
      details: { reason: 'checkpoint_expired', checkpoint_id: id, fix: 'start the step again' },
    })
  }
  return checkpoint
}

/** A checkpoint this process has claimed for its resume; `release` hands it back if the step did not finish. */
export type ClaimedCheckpoint<S> = { checkpoint: Checkpoint<S>; release(): Promise<void> }

/**
 * Claim a checkpoint for one resume: at most one process holds it at a time (a claim file naming the PID and
 * start time, taken over at once if its holder died), and a completed checkpoint is spent. So of any number of
 * parallel resumes exactly one proceeds; the others get `E_CONFLICT` (`checkpoint_in_use`, or
 * `checkpoint_used` once it completed).
 */
export async function claimCheckpoint<S>(dataDir: string, command: string, id: string): Promise<ClaimedCheckpoint<S>> {
  await read<S>(dataDir, command, id)
  const path = claimPath(dataDir, id)
  let lock: HeldLock | { held_by: unknown }
  try {
    await clearLockDebris(path)
    lock = await tryPidLock(path)
  } catch (error) {
    throw new AgentError('E_IO', `cannot claim checkpoint ${id}: ${(error as NodeJS.ErrnoException).code}`, {
      details: { path },
      cause: error,
    })
  }
  if (!('release' in lock))
    throw conflict(id, 'checkpoint_in_use', `checkpoint ${id} is being resumed by another process`)
  try {
    // Read again under the claim: the previous holder may have completed it since the first read.
    return { checkpoint: await read<S>(dataDir, command, id), release: () => lock.release() }
  } catch (error) {
    await lock.release()
    throw error
  }
}

/**
 * Spend a checkpoint once its step is complete: it is kept, without its state, as used until it expires, so a
 * later resume is `E_CONFLICT` (`checkpoint_used`) rather than a second run of the step.
 */
export async function completeCheckpoint(dataDir: string, id: string): Promise<void> {
  if (!ID.test(id)) return
  const path = pathOf(dataDir, id)
  const checkpoint = await readJsonFile<Checkpoint | undefined>(
    path,
    () => undefined,
    (v): v is Checkpoint | undefined => typeof v === 'object' && v !== null,
  ).catch(() => undefined)
  if (checkpoint && !checkpoint.used_at)
    await writeJsonAtomic(path, { ...checkpoint, state: null, used_at: new Date().toISOString() })
  await rm(claimPath(dataDir, id), { force: true })
}

/** Remove checkpoints (used or not) whose time is up, so spent ones do not pile up. */
export async function sweepCheckpoints(dataDir: string, now = Date.now()): Promise<void> {
  const dir = join(dataDir, 'checkpoints')
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (!name.endsWith('.json')) continue
    const id = name.slice(0, -'.json'.length)
    if (!ID.test(id)) continue
    const checkpoint = await readJsonFile<Checkpoint | undefined>(
      join(dir, name),
      () => undefined,
      (v): v is Checkpoint | undefined => typeof v === 'object' && v !== null,
    ).catch(() => undefined)
    if (checkpoint && Date.parse(checkpoint.expires_at) <= now) await rm(join(dir, name), { force: true })
  }
}
