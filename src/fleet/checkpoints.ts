import { type Checkpoint, type HumanRequest, humanError, newCheckpoint } from '../checkpoints/checkpoint.js'
import { AgentError } from '../errors/agent-error.js'
import type { FleetCheckpoints } from './types.js'

function unknown(id: string): AgentError {
  return new AgentError('E_NOT_FOUND', `no checkpoint ${id}`, {
    details: { checkpoint_id: id },
    hint: 'start the step again; checkpoints are single-use',
  })
}

/** `requireHuman` on the fleet's store: the resume may run on any machine of the fleet. */
export async function requireHumanShared<S>(
  store: FleetCheckpoints,
  command: string,
  request: HumanRequest<S>,
  owner?: string,
): Promise<AgentError> {
  const checkpoint = newCheckpoint(command, request, Date.now(), owner)
  await store.put(checkpoint)
  return humanError(checkpoint, request.message, request.resume(checkpoint.id), request.details)
}

/** Load a checkpoint from the fleet's store; unknown is `E_NOT_FOUND`, expired is `E_CONFLICT` and is removed. */
export async function loadShared<S>(store: FleetCheckpoints, command: string, id: string): Promise<Checkpoint<S>> {
  if (!/^cp_[a-z0-9]{20}$/.test(id)) throw unknown(id)
  const checkpoint = (await store.get(id)) as Checkpoint<S> | undefined
  if (!checkpoint || checkpoint.command !== command) throw unknown(id)
  if (Date.parse(checkpoint.expires_at) <= Date.now()) {
    await store.take(id)
    throw new AgentError('E_CONFLICT', `checkpoint ${id} expired at ${checkpoint.expires_at}`, {
      details: { reason: 'checkpoint_expired', checkpoint_id: id, fix: 'start the step again' },
    })
  }
  return checkpoint
}

/** Complete a checkpoint on the fleet's store: of two machines completing one, the second is `E_CONFLICT`. */
export async function completeShared(store: FleetCheckpoints, id: string): Promise<void> {
  if (!(await store.take(id)))
    throw new AgentError('E_CONFLICT', `checkpoint ${id} was already completed`, {
      details: { reason: 'checkpoint_used', checkpoint_id: id, fix: 'start the step again' },
    })
}
