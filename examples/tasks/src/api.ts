import {
  AgentError,
  type CredentialRecord,
  type HttpClient,
  isAgentError,
  readSetting,
  type ToolConfig,
} from 'agentcli'
import type { DeviceAuthority, GrantState } from './auth/device.js'

/**
 * The remote tasks API, from `TASKS_API_URL` or `api_url` in config.json; none by default. Checked by the
 * framework: anything but an http(s) URL is E_CONFIG with allowed/got.
 */
export async function apiUrl(config: ToolConfig): Promise<string | undefined> {
  return readSetting(config, 'api_url', { type: 'url' })
}

/** The API, or `E_CONFIG` saying how to configure it. */
export async function requireApiUrl(config: ToolConfig): Promise<string> {
  const url = await apiUrl(config)
  if (!url)
    throw new AgentError('E_CONFIG', 'no remote tasks API is configured', {
      details: { fix: 'set TASKS_API_URL, or api_url in the config file' },
    })
  return url
}

type TokenResponse = {
  access_token: string
  refresh_token?: string | null
  expires_in?: number | null
  account: string
  scope?: string
}

/** A credential record from an OAuth token response. */
export function recordFrom(token: TokenResponse): CredentialRecord {
  return {
    account: token.account,
    access_token: token.access_token,
    refresh_token: token.refresh_token ?? null,
    expires_at: token.expires_in ? new Date(Date.now() + token.expires_in * 1000).toISOString() : null,
    scopes: token.scope ? token.scope.split(' ') : [],
  }
}

/** The OAuth error code in a 4xx body (`{"error": "authorization_pending"}`), if there is one. */
function oauthError(error: unknown): string | undefined {
  if (!isAgentError(error)) return undefined
  const body = (error.details.upstream as { body?: string } | undefined)?.body
  try {
    return (JSON.parse(body ?? '') as { error?: string }).error
  } catch {
    return undefined
  }
}

/** The device flow against the remote API (RFC 8628 shapes). */
export function remoteAuthority(client: HttpClient): DeviceAuthority {
  return {
    async start() {
      const { data } = await client.post<{
        device_code: string
        user_code: string
        verification_uri: string
        expires_in: number
      }>('oauth/device/code', { body: { client_id: 'tasks-cli' } })
      return {
        device_code: data.device_code,
        user_code: data.user_code,
        verification_url: data.verification_uri,
        expires_in: data.expires_in,
      }
    },
    async poll(deviceCode): Promise<GrantState> {
      try {
        const { data } = await client.post<TokenResponse>('oauth/token', {
          body: { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: deviceCode },
        })
        const record = recordFrom(data)
        return {
          state: 'approved',
          account: record.account,
          access_token: record.access_token,
          refresh_token: record.refresh_token,
          expires_in: data.expires_in ?? null,
        }
      } catch (error) {
        const code = oauthError(error)
        if (code === 'authorization_pending' || code === 'slow_down') return { state: 'pending' }
        if (code === 'access_denied' || code === 'expired_token') return { state: 'denied' }
        throw error
      }
    },
  }
}

/** Exchange a refresh token (the tasks tool's refresher). */
export async function refreshWithApi(client: HttpClient, record: CredentialRecord): Promise<CredentialRecord> {
  const { data } = await client.post<TokenResponse>('oauth/token', {
    body: { grant_type: 'refresh_token', refresh_token: record.refresh_token },
  })
  return recordFrom({ ...data, account: data.account ?? record.account })
}
