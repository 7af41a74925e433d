import { createHash, generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { issuerAuth, KEYS_REFRESH_MS, KEYS_RETRY_MS, LOCAL_ISSUER, tokenListAuth } from '../../../src/mcp/http-auth.js'

const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
function file(text: string, mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-auth-'))
  dirs.push(dir)
  const path = join(dir, 'tokens')
  writeFileSync(path, text)
  chmodSync(path, mode)
  return path
}
const sha = (t: string) => createHash('sha256').update(t).digest('hex')

describe('a local list of hashed tokens', () => {
  it("answers a listed token's subject, refuses any other token", async () => {
    const auth = tokenListAuth(file(`# team\nsha256:${sha('tok-ann')} ann\nsha256:${sha('tok-bob')} bob\n`))
    expect(await auth.verify('tok-ann')).toMatchObject({ subject: 'ann', issuer: LOCAL_ISSUER })
    expect(await auth.verify('tok-bob')).toMatchObject({ subject: 'bob' })
    for (const bad of ['', 'tok-an', 'tok-ann ', sha('tok-ann'), `sha256:${sha('tok-ann')}`])
      await expect(auth.verify(bad), bad).rejects.toThrow('unknown token')
  })

  it('refuses to start on a list others can write, a malformed line, or no token: E_CONFIG', () => {
    expect(() => tokenListAuth(file(`sha256:${sha('t')} ann\n`, 0o666))).toThrow(/writable by other users/)
    expect(() => tokenListAuth(file('tok-ann ann\n'))).toThrow(/line 1/)
    expect(() => tokenListAuth(file(`sha256:${sha('t')}\n`))).toThrow(/line 1/)
    expect(() => tokenListAuth(file('# nothing\n'))).toThrow(/lists no token/)
    expect(() => tokenListAuth('/nonexistent/tokens')).toThrow(/cannot read/)
  })
})

describe('JWTs of a configured issuer, checked against its JWKS', () => {
  const issuer = 'https://issuer.example'
  const audience = 'http://127.0.0.1:8765/mcp'
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const other = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const jwk = (k: KeyObject, kid: string) => ({ ...(k.export({ format: 'jwk' }) as object), kid, use: 'sig' })
  const now = 1_800_000_000_000
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  const mint = (
    claims: Record<string, unknown>,
    header: Record<string, unknown> = { alg: 'ES256', kid: 'ec' },
    key: KeyObject = ec.privateKey,
  ) => {
    const input = `${b64(header)}.${b64({ iss: issuer, aud: audience, sub: 'ann', exp: now / 1000 + 600, ...claims })}`
    const alg = header.alg as string
    const sig = alg.startsWith('ES')
      ? sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : alg.startsWith('RS')
        ? sign('sha256', Buffer.from(input), key)
        : Buffer.from('x')
    return `${input}.${sig.toString('base64url')}`
  }
  let fetches = 0
  const world = (metaIssuer = issuer) =>
    (async (url: string) => {
      fetches++
      const u = String(url)
      if (u === `${issuer}/.well-known/oauth-authorization-server`)
        return Response.json({ issuer: metaIssuer, jwks_uri: `${issuer}/jwks` })
      if (u === `${issuer}/jwks`) return Response.json({ keys: [jwk(ec.publicKey, 'ec'), jwk(rsa.publicKey, 'rsa')] })
      return new Response('no', { status: 404 })
    }) as unknown as typeof fetch
  const auth = (metaIssuer?: string) => issuerAuth({ issuer, audience, now: () => now, fetch: world(metaIssuer) })

  it('accepts a token signed by a published key, for this audience, in date: its subject and scopes', async () => {
    const a = auth()
    expect(await a.verify(mint({ scope: 'mcp tasks' }))).toEqual({
      subject: 'ann',
      issuer,
      expiresAt: now / 1000 + 600,
      scopes: ['mcp', 'tasks'],
    })
    expect(
      await a.verify(mint({ aud: ['other', `${audience}/`] }, { alg: 'RS256', kid: 'rsa' }, rsa.privateKey)),
    ).toMatchObject({
      subject: 'ann',
    })
    expect(a.authorizationServers).toEqual([issuer])
  })

  it('refuses: another issuer, another audience, expired, not yet valid, no subject', async () => {
    const a = auth()
    await expect(a.verify(mint({ iss: 'https://evil.example' }))).rejects.toThrow('wrong issuer')
    await expect(a.verify(mint({ aud: 'https://elsewhere.example/mcp' }))).rejects.toThrow('not for this server')
    await expect(a.verify(mint({ exp: now / 1000 - 61 }))).rejects.toThrow('expired')
    await expect(a.verify(mint({ exp: undefined }))).rejects.toThrow('expired')
    await expect(a.verify(mint({ nbf: now / 1000 + 120 }))).rejects.toThrow('not valid yet')
    await expect(a.verify(mint({ sub: '' }))).rejects.toThrow('no subject')
  })

  it('refuses a forged signature, alg none or HS256, a key of another type, a kid not published, garbage', async () => {
    const a = auth()
    await expect(a.verify(mint({}, { alg: 'ES256', kid: 'ec' }, other.privateKey))).rejects.toThrow('bad signature')
    await expect(a.verify(mint({}, { alg: 'none', kid: 'ec' }))).rejects.toThrow('unsupported algorithm')
    await expect(a.verify(mint({}, { alg: 'HS256', kid: 'ec' }))).rejects.toThrow('unsupported algorithm')
    await expect(a.verify(mint({}, { alg: 'constructor', kid: 'ec' }))).rejects.toThrow('unsupported algorithm')
    await expect(a.verify(mint({}, { alg: 'RS256', kid: 'ec' }, rsa.privateKey))).rejects.toThrow('does not fit')
    await expect(a.verify(mint({}, { alg: 'ES256', kid: 'nope' }))).rejects.toThrow('no key')
    await expect(a.verify(mint({}, { alg: 'ES256', kid: 'ec', crit: ['x'] }))).rejects.toThrow('critical')
    await expect(a.verify('a.b')).rejects.toThrow('not a JWT')
    await expect(a.verify(`${b64([1])}.${b64({})}.x`)).rejects.toThrow('not a JWT')
  })

  it('refuses metadata that names another issuer (RFC 8414 §3.3), and a non-https issuer off loopback', async () => {
    await expect(auth('https://evil.example').verify(mint({}))).rejects.toThrow('no metadata')
    expect(() => issuerAuth({ issuer: 'http://issuer.example', audience })).toThrow(/must be https/)
    expect(() => issuerAuth({ issuer: 'not a url', audience })).toThrow(/not a URL/)
    expect(() => issuerAuth({ issuer: 'http://127.0.0.1:9/', audience })).not.toThrow()
  })

  it('fetches the keys once, and again for an unknown kid at most every 30 s', async () => {
    fetches = 0
    const a = auth()
    await a.verify(mint({}))
    await a.verify(mint({}))
    expect(fetches).toBe(2)
    await expect(a.verify(mint({}, { alg: 'ES256', kid: 'nope' }))).rejects.toThrow('no key')
    expect(fetches).toBe(2)
  })

  it('fetches once for a burst of tokens before the first fetch ends, and again for an unknown kid only after 30 s', async () => {
    fetches = 0
    let clock = now
    const a = issuerAuth({ issuer, audience, now: () => clock, fetch: world() })
    const subjects = await Promise.all(Array.from({ length: 20 }, () => a.verify(mint({}))))
    expect(subjects.map((s) => s.subject)).toEqual(Array(20).fill('ann'))
    expect(fetches).toBe(2)
    const unknown = mint({}, { alg: 'ES256', kid: 'nope' })
    await Promise.all(Array.from({ length: 5 }, () => expect(a.verify(unknown)).rejects.toThrow('no key')))
    expect(fetches).toBe(2)
    clock += KEYS_REFRESH_MS
    await Promise.all(Array.from({ length: 5 }, () => expect(a.verify(unknown)).rejects.toThrow('no key')))
    expect(fetches).toBe(4)
  })

  it('the retry period counts from when a failed fetch ended: one that took its whole timeout is not retried at once', async () => {
    let clock = now
    let asked = 0
    const slowFail = (async () => {
      asked++
      clock += 10_000
      throw new Error('timed out')
    }) as unknown as typeof fetch
    const a = issuerAuth({ issuer, audience, now: () => clock, fetch: slowFail })
    const token = mint({})
    await expect(a.verify(token)).rejects.toThrow()
    const once = asked
    await expect(a.verify(token)).rejects.toThrow()
    expect(asked).toBe(once)
    clock += KEYS_RETRY_MS
    await expect(a.verify(token)).rejects.toThrow()
    expect(asked).toBe(2 * once)
  })

  it('an issuer that is down is asked once per retry period however many tokens come, every token refused', async () => {
    let down = true
    let asked = 0
    let clock = now
    const flaky = (async (url: string) => {
      asked++
      if (down) throw new Error('connect ECONNREFUSED')
      return (world() as unknown as (u: string) => Promise<Response>)(url)
    }) as unknown as typeof fetch
    const a = issuerAuth({ issuer, audience, now: () => clock, fetch: flaky })
    const token = mint({})
    const refused = () => Promise.all(Array.from({ length: 10 }, () => expect(a.verify(token)).rejects.toThrow()))
    await refused()
    await refused()
    // RFC 8414, then OpenID metadata: one attempt at the keys is one fetch of each, whatever the number of tokens.
    const once = asked
    expect(once).toBe(2)
    clock += KEYS_RETRY_MS - 1
    await refused()
    expect(asked).toBe(once)
    clock += 1
    down = false
    expect((await a.verify(token)).subject).toBe('ann')
    await Promise.all(Array.from({ length: 10 }, () => a.verify(token)))
    expect(asked).toBe(once + 2)
  })
})
