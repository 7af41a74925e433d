import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { claimCheckpoint, type HumanApproval, requireHuman } from '../../../src/checkpoints/checkpoint.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

const APPROVAL: HumanApproval = {
  instructions: 'Open https://id.example/device, enter WXYZ-1234 and approve; then tell the agent.',
  verification_uri: 'https://id.example/device',
  verification_uri_complete: 'https://id.example/device?code=WXYZ-1234',
  user_code: 'WXYZ-1234',
}

describe('a checkpoint publishes how a person approves it', () => {
  it('in the E_HUMAN_REQUIRED details, with the expiry, and stored with the checkpoint for every later answer', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-approval-'))
    dirs.push(dir)
    const error = await requireHuman(dir, 'login', {
      action: 'open_url',
      message: 'Approve the login',
      resume: (id) => `tasks login resume --id ${id}`,
      state: { device_code: 'secret-device-code' },
      approval: APPROVAL,
    })
    expect(error.code).toBe('E_HUMAN_REQUIRED')
    const id = error.details.checkpoint_id as string
    expect(error.details.approval).toEqual({ ...APPROVAL, expires_at: error.details.expires_at })
    // The approval is what the agent relays; the state (a device code) is never in the envelope.
    expect(JSON.stringify(error.details)).not.toContain('secret-device-code')
    const stored = JSON.parse(readFileSync(join(dir, 'checkpoints', `${id}.json`), 'utf8'))
    expect(stored.approval).toEqual(APPROVAL)
    const { checkpoint, release } = await claimCheckpoint(dir, 'login', id)
    expect(checkpoint.approval).toEqual(APPROVAL)
    await release?.()
  })

  it('a checkpoint without one answers as before', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agentcli-approval-'))
    dirs.push(dir)
    const error = await requireHuman(dir, 'x', { action: 'approve', message: 'm', resume: (id) => id, state: {} })
    expect(error.details).not.toHaveProperty('approval')
  })
})
