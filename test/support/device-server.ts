import { HttpResponse, http } from 'msw'
import { startUpstream, type Upstream } from './upstream.js'

/**
 * The device flow's authorization server: each login gets a device code of its own, approved when a test says so
 * (the person at the page); the token endpoint answers `authorization_pending` until then.
 */
export function deviceServer(): Promise<Upstream & { approve(): void; polls(): number }> {
  let n = 0
  let approved = false
  return startUpstream([
    http.post('*/oauth/device/code', () => {
      n++
      return HttpResponse.json({
        device_code: `dc_${n}`,
        user_code: `CODE${String(n).padStart(4, '0')}`,
        verification_uri: 'https://tasks.example/device',
        expires_in: 600,
      })
    }),
    http.post('*/oauth/token', () =>
      approved
        ? HttpResponse.json({ access_token: 'tk_1', refresh_token: 'rt_1', expires_in: 3600, account: 'ann' })
        : HttpResponse.json({ error: 'authorization_pending' }, { status: 400 }),
    ),
  ]).then((api) =>
    Object.assign(api, {
      approve: () => {
        approved = true
      },
      polls: () => api.requests.filter((r) => r.url.endsWith('/oauth/token')).length,
    }),
  )
}

/** The example's settings that point its login at `api` (no retries; credentials in a file). */
export const apiEnv = (api: Upstream) => ({
  TASKS_API_URL: api.url,
  TASKS_HTTP_RETRIES: '0',
  TASKS_CREDENTIAL_STORE: 'file',
})
