import { describe, expect, it } from 'vitest'
import {
  checkExposure,
  checkResource,
  forwardedBy,
  forwardedRefusal,
  isLoopback,
} from '../../../src/mcp/http-exposure.js'

describe('loopback names', () => {
  it('are localhost, 127.0.0.0/8 and ::1, bracketed or not, in any case; nothing else is', () => {
    for (const host of ['localhost', 'LOCALHOST', '127.0.0.1', '127.1.2.3', '::1', '[::1]'])
      expect(isLoopback(host)).toBe(true)
    for (const host of [
      '0.0.0.0',
      '::',
      '[::]',
      '10.0.0.1',
      'mcp.example.com',
      'localhost.example.com',
      '127.0.0.1.nip.io',
      '1127.0.0.1',
    ])
      expect(isLoopback(host), host).toBe(false)
  })
})

describe('where an endpoint without authentication may be reached from', () => {
  const refused = (exposure: Parameters<typeof checkExposure>[0]) => {
    try {
      checkExposure(exposure)
    } catch (error) {
      return error as { code: string; message: string; details: Record<string, unknown> }
    }
    throw new Error(`not refused: ${JSON.stringify(exposure)}`)
  }

  it('loopback only: the listener, the public URL and every allowed host', () => {
    expect(checkExposure({ host: '127.0.0.1', authenticated: false })).toBeUndefined()
    expect(
      checkExposure({
        host: '::1',
        publicUrl: 'http://localhost:8765/mcp',
        allowedHosts: ['127.0.0.2', 'localhost'],
        authenticated: false,
      })?.href,
    ).toBe('http://localhost:8765/mcp')
  })

  it('a listener off loopback is E_CONFIG naming the flags to add', () => {
    const error = refused({ host: '0.0.0.0', authenticated: false })
    expect(error.code).toBe('E_CONFIG')
    expect(error.message).toContain('--auth-issuer or --auth-tokens')
    expect(error.details).toMatchObject({ host: '0.0.0.0' })
  })

  it('a public URL off loopback (a reverse proxy in front of a loopback listener) is E_CONFIG', () => {
    const error = refused({ host: '127.0.0.1', publicUrl: 'https://mcp.example.com/mcp', authenticated: false })
    expect(error.code).toBe('E_CONFIG')
    expect(error.message).toContain('--auth-issuer or --auth-tokens')
    expect(error.details).toMatchObject({ public_url: 'https://mcp.example.com/mcp' })
  })

  it('an allowed host off loopback, among loopback ones, is E_CONFIG naming it', () => {
    const error = refused({ host: '127.0.0.1', allowedHosts: ['localhost', 'mcp.example.com'], authenticated: false })
    expect(error.code).toBe('E_CONFIG')
    expect(error.message).toContain('mcp.example.com')
    expect(error.details).toMatchObject({ allowed_hosts: ['mcp.example.com'] })
  })

  it('with authentication, anything goes', () => {
    expect(
      checkExposure({
        host: '0.0.0.0',
        publicUrl: 'https://mcp.example.com/tools/mcp',
        allowedHosts: ['mcp.example.com'],
        authenticated: true,
      })?.pathname,
    ).toBe('/tools/mcp')
  })

  it('a public URL that is not an http(s) URL, or has a fragment, is E_CONFIG, authenticated or not', () => {
    for (const publicUrl of ['mcp.example.com/mcp', 'ftp://mcp.example.com/mcp', 'https://mcp.example.com/mcp#x'])
      for (const authenticated of [false, true])
        expect(refused({ host: '127.0.0.1', publicUrl, authenticated }).message).toContain('--public-url')
  })
})

describe('the resource an issuer’s tokens must name', () => {
  it('a wildcard listener’s URL is E_CONFIG asking for --public-url', () => {
    for (const url of ['http://0.0.0.0:8765/mcp', 'http://[::]:8765/mcp'])
      expect(() => checkResource(new URL(url), true)).toThrow(/needs --public-url/)
  })

  it('a concrete address, or an audience given apart, is kept', () => {
    expect(() => checkResource(new URL('http://10.0.0.5:8765/mcp'), true)).not.toThrow()
    expect(() => checkResource(new URL('https://mcp.example.com/mcp'), true)).not.toThrow()
    expect(() => checkResource(new URL('http://0.0.0.0:8765/mcp'), false)).not.toThrow()
  })
})

describe('a request a proxy forwarded', () => {
  it('is told by any forwarding header (RFC 7239 or the de facto ones), and the refusal names it and the flags', () => {
    expect(forwardedBy({ host: '127.0.0.1:8765', 'content-type': 'application/json' })).toBeUndefined()
    for (const name of ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-real-ip'])
      expect(forwardedBy({ host: '127.0.0.1', [name]: 'x' })).toBe(name)
    expect(forwardedRefusal('x-forwarded-for')).toBe(
      'forwarded by a proxy (x-forwarded-for): this endpoint has no authentication and serves this machine only; configure --auth-issuer or --auth-tokens',
    )
  })
})
