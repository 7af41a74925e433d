import { randomBytes } from 'node:crypto'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError, readJsonFile, writeJsonAtomic } from 'agentcli'

/** A device-code grant as an authorization server hands it out. */
export type DeviceGrant = { device_code: string; user_code: string; verification_url: string; expires_in: number }

/** What polling a grant returns. */
export type GrantState =
  | { state: 'pending' }
  | { state: 'denied' }
  | {
      state: 'approved'
      account: string
      access_token: string
      refresh_token: string | null
      expires_in: number | null
    }

/** The authorization server of the device flow. */
export type DeviceAuthority = { start(): Promise<DeviceGrant>; poll(deviceCode: string): Promise<GrantState> }

type Stored = { device_code: string; user_code: string; approved: boolean; account: string | null }

const isStored = (v: unknown): v is Stored => typeof v === 'object' && v !== null && 'device_code' in v

/**
 * A local stand-in for an authorization server, used when no remote API is configured: grants live in the data
 * dir and a person approves one with `tasks login approve <code>` (what the browser page would do).
 */
export function localAuthority(
  dataDir: string,
): DeviceAuthority & { approve(userCode: string, account: string): Promise<void> } {
  const dir = join(dataDir, 'device-grants')
  const path = (code: string) => join(dir, `${code}.json`)
  return {
    async start() {
      const grant: Stored = {
        device_code: randomBytes(16).toString('hex'),
        user_code: randomBytes(4).toString('hex').toUpperCase(),
        approved: false,
        account: null,
      }
      await writeJsonAtomic(path(grant.device_code), grant)
      return {
        device_code: grant.device_code,
        user_code: grant.user_code,
        verification_url: `file://${dir}`,
        expires_in: 900,
      }
    },
    async poll(deviceCode) {
      const grant = await readJsonFile<Stored | undefined>(
        path(deviceCode),
        () => undefined,
        (v): v is Stored | undefined => isStored(v),
      )
      if (!grant) return { state: 'denied' }
      if (!grant.approved || !grant.account) return { state: 'pending' }
      return {
        state: 'approved',
        account: grant.account,
        access_token: `tk_${randomBytes(24).toString('hex')}`,
        // The local stand-in issues tokens that do not expire; refresh is exercised against the remote API.
        refresh_token: null,
        expires_in: null,
      }
    },
    async approve(userCode, account) {
      for (const name of await readdir(dir).catch(() => [] as string[])) {
        const grant = await readJsonFile<Stored | undefined>(
          join(dir, name),
          () => undefined,
          (v): v is Stored | undefined => isStored(v),
        )
        if (grant?.user_code === userCode.toUpperCase()) {
          await writeJsonAtomic(join(dir, name), { ...grant, approved: true, account })
          return
        }
      }
      throw new AgentError('E_NOT_FOUND', `no pending login with code ${userCode}`, {
        details: { user_code: userCode },
      })
    },
  }
}
