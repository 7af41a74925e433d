import { randomBytes } from 'node:crypto'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from './errors/agent-error.js'
import { readJsonFile, writeJsonAtomic } from './fs/json-file.js'

/** What a person must do (spec 002 §15.3). Closed: agents branch on it. */
export const HUMAN_ACTIONS = ['open_url', 'enter_code', 'scan_qr', 'approve', 'complete_2fa'] as const
/** One of {@link HUMAN_ACTIONS}. */
export type HumanAction = (typeof HUMAN_ACTIONS)[number]

/** A persisted checkpoint: where a command stopped for a person, and the state it needs to continue. */
export type Checkpoint<S = unknown> = {
  id: string
  command: string
  action: HumanAction
  state: S
  created_at: string
  expires_at: string
}

/** What a command passes when it needs a person. */
export type HumanRequest<S> = {
  action: HumanAction
  /** What to tell the person, in one sentence. */
  message: string
  /** The command that continues, given the checkpoint id. */
  resume: (id: string) => string
  /** State the resume step needs; stored locally, never printed. */
  state: S
  /** Shown to the agent: a URL, a code to enter, a QR image path… */
  details?: Record<string, unknown>
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

/** Persist a checkpoint and build the `E_HUMAN_REQUIRED` error that hands the step to a person. */
export async function requireHuman<S>(dataDir: string, command: string, request: HumanRequest<S>): Promise<AgentError> {
  if (!(HUMAN_ACTIONS as readonly string[]).includes(request.action))
    throw new AgentError('E_INTERNAL', `unknown human action ${request.action}`)
  const now = Date.now()
  const checkpoint: Checkpoint<S> = {
    id: `cp_${randomBytes(16).toString('hex').slice(0, 20)}`,
    command,
    action: request.action,
    state: request.state,
    created_at: new Date(now).toISOString(),
    expires_at: new Date(now + (request.ttlSeconds ?? 900) * 1000).toISOString(),
  }
  await writeJsonAtomic(pathOf(dataDir, checkpoint.id), checkpoint)
  return humanError(checkpoint, request.message, request.resume(checkpoint.id), request.details)
}

/** The `E_HUMAN_REQUIRED` error for a checkpoint (also when a resume finds the person has not acted yet). */
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
      ...details,
    },
  })
}

/** Load a checkpoint for `command`; unknown is `E_NOT_FOUND`, expired is `E_CONFLICT` and is removed. */
export async function loadCheckpoint<S>(dataDir: string, command: string, id: string): Promise<Checkpoint<S>> {
  if (!ID.test(id)) throw unknown(id)
  const checkpoint = await readJsonFile<Checkpoint<S> | undefined>(
    pathOf(dataDir, id),
    () => undefined,
    (v): v is Checkpoint<S> | undefined => typeof v === 'object' && v !== null && 'action' in v,
  )
  if (!checkpoint || checkpoint.command !== command) throw unknown(id)
  if (Date.parse(checkpoint.expires_at) <= Date.now()) {
    await rm(pathOf(dataDir, id), { force: true })
    throw new AgentError('E_CONFLICT', `checkpoint ${id} expired at ${checkpoint.expires_at}`, {
      details: { reason: 'checkpoint_expired', checkpoint_id: id, fix: 'start the step again' },
    })
  }
  return checkpoint
}

/** Remove a checkpoint once its step is complete: a resume works once. */
export async function completeCheckpoint(dataDir: string, id: string): Promise<void> {
  await rm(pathOf(dataDir, id), { force: true })
}
