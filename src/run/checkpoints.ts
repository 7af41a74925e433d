import type { Checkpoint, HumanRequest } from '../checkpoints/checkpoint.js'
import { AgentError } from '../errors/agent-error.js'
import type { FleetBackend } from '../fleet/types.js'
import type { ToolConfig } from '../runtime/tool-config.js'

/*
 * Human checkpoints of one call, in this machine's data dir or, with a state URL, in the fleet's store. Drivers
 * and the checkpoint modules load only when a command uses them.
 */

/** The fleet's state store when a state URL is set (`<BIN>_STATE_URL`), else undefined: no driver loads. */
export async function fleetBackendOf(config: ToolConfig): Promise<FleetBackend | undefined> {
  const { stateLocation } = await import('../fleet/location.js')
  if (stateLocation(config).kind === 'file') return undefined
  return (await import('../fleet/backend.js')).openBackend(config)
}

/** Persist a checkpoint and return the `E_HUMAN_REQUIRED` error to throw (with `details.resume`). */
export async function humanRequired<S>(
  fleet: FleetBackend | undefined,
  dataDir: string,
  id: string,
  request: HumanRequest<S>,
  owner?: string,
): Promise<AgentError> {
  if (fleet) return (await import('../fleet/checkpoints.js')).requireHumanShared(fleet.checkpoints, id, request, owner)
  const { requireHuman } = await import('../checkpoints/checkpoint.js')
  return requireHuman(dataDir, id, request, owner)
}

/**
 * Claim a checkpoint for this call; `release` is what hands a local claim back (a fleet's needs none). A
 * checkpoint another remote subject started (or one started remotely, for a call without a subject) is
 * `E_NOT_FOUND`, as an unknown one: its id tells another caller nothing.
 */
export async function claimResume<S>(
  fleet: FleetBackend | undefined,
  dataDir: string,
  id: string,
  command: string,
  owner?: string,
): Promise<{ checkpoint: Checkpoint<S>; release?: () => Promise<void> }> {
  const claimed: { checkpoint: Checkpoint<S>; release?: () => Promise<void> } = fleet
    ? { checkpoint: await (await import('../fleet/checkpoints.js')).loadShared<S>(fleet.checkpoints, command, id) }
    : await (await import('../checkpoints/checkpoint.js')).claimCheckpoint<S>(dataDir, command, id)
  if (claimed.checkpoint.owner !== owner) {
    await claimed.release?.()
    throw new AgentError('E_NOT_FOUND', `no checkpoint ${id}`, {
      details: { checkpoint_id: id },
      hint: 'start the step again; a checkpoint is resumed by whoever started it',
    })
  }
  return claimed
}

/** Complete a checkpoint: a resume works once (on a fleet, once across machines). */
export async function completeResume(fleet: FleetBackend | undefined, dataDir: string, id: string): Promise<void> {
  if (fleet) return (await import('../fleet/checkpoints.js')).completeShared(fleet.checkpoints, id)
  const { completeCheckpoint } = await import('../checkpoints/checkpoint.js')
  return completeCheckpoint(dataDir, id)
}
