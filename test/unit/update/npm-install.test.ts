// What src/update/npm-install.ts decides before npm runs, in-process against a loopback registry and a throw-away
// Sigstore authority: the registry it reads, that a tool declaring no repository is refused before any request,
// the identity it expects (the declared repository and workflow at the tag prefix and the version being
// installed), and that only the attested bytes reach a temp dir of their own, removed on any failure. The whole
// `update` over an npm install is test/unit/update/update-npm.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { delay, HttpResponse, http } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'
import { toolConfig } from '../../../src/runtime/tool-config.js'
import { setRunEnv } from '../../../src/settings/run-env.js'
import { npmRegistry, verifiedNpmTarball } from '../../../src/update/npm-install.js'
import { DEFAULT_NPM_REGISTRY } from '../../../src/update/provenance.js'
import { updateSettings } from '../../../src/update/settings.js'
import { attestationsFor, provenanceStatement, serveNpmPackage } from '../../support/npm-provenance.js'
import { api, authority, identityFor, REPO, stranger, useUpdateWorld } from '../../support/update-world.js'

useUpdateWorld('npm-install')
const PKG = 'tasks-example'
const VERSION = '0.2.0'
const TARBALL = Buffer.from('the attested tarball of 0.2.0')
let work: string
let tmp: string
let before: NodeJS.ProcessEnv | undefined

/** The tool `tasks` with `update` declared as its author ships it (`over` replaces or adds keys). */
function tool(over: Record<string, unknown> = {}): ToolConfig {
  const update = { repository: REPO, issuer: authority.issuer, ...over }
  return toolConfig(work, { name: PKG, version: '0.1.0', oclif: { bin: 'tasks' }, agentcli: { update } })
}

/** The run's environment (as an in-process run sets it): its own TMPDIR, and `env`. */
const runWith = (env: Record<string, string> = {}) => void setRunEnv({ TMPDIR: tmp, ...env })

/** The registry under `<upstream>/<mount>/registry/`, serving 0.2.0 with a provenance signed for `subject`. */
async function serve(subject: string, options: { by?: typeof authority; served?: Buffer; mount?: string } = {}) {
  const attestations = await attestationsFor(
    options.by ?? authority,
    provenanceStatement(`pkg:npm/${PKG}@${VERSION}`, TARBALL),
    subject,
  )
  serveNpmPackage(api, {
    name: PKG,
    version: VERSION,
    tarball: TARBALL,
    attestations,
    ...(options.served ? { served: options.served } : {}),
  })
  return `${api.url}${options.mount ?? 'chosen'}/registry/`
}

const verified = (config: ToolConfig) =>
  verifiedNpmTarball(config, updateSettings(config), VERSION, authority.trustedRoot, new AbortController().signal)

const failure = (p: Promise<unknown>) =>
  p.then(
    () => {
      throw new Error('expected a refusal')
    },
    (e: unknown) => e as { code: string; details: Record<string, unknown> },
  )

/** The paths asked of the registry (not of the authority's log, which signing the provenance asked). */
const requested = () => api.requests.map((r) => new URL(r.url).pathname).filter((p) => p.includes('/registry/'))
const tarballRequests = () => requested().filter((p) => p.endsWith('.tgz'))

beforeEach(() => {
  work = mkdtempSync(join(tmpdir(), 'agentcli-npm-install-'))
  tmp = join(work, 'tmp')
  mkdirSync(tmp)
  before = setRunEnv({ TMPDIR: tmp })
})
afterEach(() => {
  setRunEnv(before)
  rmSync(work, { recursive: true, force: true })
})

describe('npmRegistry: the registry the npm method reads', () => {
  it('is <BIN>_NPM_REGISTRY, else the declared npm_registry, else npm_config_registry, else the public one', () => {
    const declared = tool({ npm_registry: 'https://declared.example/' })
    runWith({ TASKS_NPM_REGISTRY: 'https://env.example/', npm_config_registry: 'https://npmrc.example/' })
    expect(npmRegistry(declared)).toBe('https://env.example/')
    // Empty is unset; another tool's variable is not this tool's.
    runWith({ TASKS_NPM_REGISTRY: '', OTHER_NPM_REGISTRY: 'https://other.example/' })
    expect(npmRegistry(declared)).toBe('https://declared.example/')
    runWith({ npm_config_registry: 'https://npmrc.example/' })
    expect(npmRegistry(declared)).toBe('https://declared.example/')
    expect(npmRegistry(tool())).toBe('https://npmrc.example/')
    runWith({ npm_config_registry: '' })
    expect(npmRegistry(tool())).toBe(DEFAULT_NPM_REGISTRY)
    const bare = toolConfig(work, { name: PKG, version: '0.1.0', oclif: { bin: 'tasks' } })
    expect(npmRegistry(bare)).toBe(DEFAULT_NPM_REGISTRY)
  })
})

describe('verifiedNpmTarball', () => {
  it('refuses a tool that declares no repository (identity_mismatch) before any request, downloading nothing', async () => {
    await serve(identityFor(`v${VERSION}`))
    runWith({ TASKS_NPM_REGISTRY: `${api.url}chosen/registry/` })
    const error = await failure(verified(tool({ repository: null })))
    expect(error).toMatchObject({
      code: 'E_INTEGRITY',
      message: 'the tool declares no repository, so no provenance identity can be expected',
      details: { reason: 'identity_mismatch' },
    })
    expect(requested()).toEqual([])
    expect(readdirSync(tmp)).toEqual([])
  })

  it('downloads exactly the attested tarball, from the chosen registry, into a temp dir that cleanup removes', async () => {
    runWith({ TASKS_NPM_REGISTRY: await serve(identityFor(`v${VERSION}`), { mount: 'env' }) })
    const got = await verified(tool({ npm_registry: `${api.url}declared/registry/` }))
    expect(got.signed_by).toBe(identityFor(`v${VERSION}`))
    expect(readFileSync(got.path).equals(TARBALL)).toBe(true)
    const [dir] = readdirSync(tmp)
    expect(dir).toMatch(/^tasks-npm-update-/)
    expect(got.path).toBe(join(tmp, dir!, `${PKG}-${VERSION}.tgz`))
    // The metadata came from the registry the environment chose, not the declared one.
    expect(requested().filter((p) => !p.endsWith('.tgz'))).toEqual([
      `/env/registry/${PKG}`,
      `/env/registry/-/npm/v1/attestations/${PKG}@${VERSION}`,
    ])
    await got.cleanup()
    expect(readdirSync(tmp)).toEqual([])
  })

  it('without a TMPDIR in the run’s environment, downloads into the OS temp dir, and cleanup removes it', async () => {
    setRunEnv({ TASKS_NPM_REGISTRY: await serve(identityFor(`v${VERSION}`)) })
    const got = await verified(tool())
    const dir = join(got.path, '..')
    expect(join(dir, '..')).toBe(tmpdir())
    expect(readFileSync(got.path).equals(TARBALL)).toBe(true)
    await got.cleanup()
    expect(existsSync(dir)).toBe(false)
    expect(readdirSync(tmp)).toEqual([])
  })

  it('expects the identity at the declared tag prefix and the version being installed', async () => {
    runWith({ TASKS_NPM_REGISTRY: await serve(identityFor(`release-${VERSION}`)) })
    const got = await verified(tool({ tag_prefix: 'release-' }))
    expect(got.signed_by).toBe(identityFor(`release-${VERSION}`))
    await got.cleanup()
  })

  it.each([
    ['at v<version> when the tool tags release-<version>', identityFor(`v${VERSION}`), { tag_prefix: 'release-' }],
    ['at another tag that starts with it (v0.2.00)', identityFor('v0.2.00'), {}],
    ['by another repository', identityFor(`v${VERSION}`, 'evil/tasks-example'), {}],
    ['by another workflow', identityFor(`v${VERSION}`, REPO, '.github/workflows/other.yml'), {}],
  ])('refuses a provenance signed %s: identity_mismatch, nothing downloaded', async (_, subject, over) => {
    runWith({ TASKS_NPM_REGISTRY: await serve(subject) })
    expect(await failure(verified(tool(over)))).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'identity_mismatch' },
    })
    expect(tarballRequests()).toEqual([])
    expect(readdirSync(tmp)).toEqual([])
  })

  it('refuses a provenance from a Sigstore instance the tool does not trust, nothing downloaded', async () => {
    runWith({ TASKS_NPM_REGISTRY: await serve(identityFor(`v${VERSION}`), { by: stranger }) })
    expect(await failure(verified(tool()))).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'root_untrusted' },
    })
    expect(tarballRequests()).toEqual([])
    expect(readdirSync(tmp)).toEqual([])
  })

  it('removes its temp dir when the registry serves other bytes than the attested ones (checksum_mismatch)', async () => {
    const served = Buffer.concat([TARBALL, Buffer.from('!')])
    runWith({ TASKS_NPM_REGISTRY: await serve(identityFor(`v${VERSION}`), { served }) })
    expect(await failure(verified(tool()))).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'checksum_mismatch' },
    })
    expect(tarballRequests()).toHaveLength(1)
    expect(readdirSync(tmp)).toEqual([])
  })

  it('holds the registry to the declared download_ms and registry_bytes', async () => {
    runWith({ TASKS_NPM_REGISTRY: await serve(identityFor(`v${VERSION}`)) })
    expect(await failure(verified(tool({ limits: { registry_bytes: 64 } })))).toMatchObject({
      code: 'E_INTEGRITY',
      details: { reason: 'too_large', limit: 64, path: `${api.url}chosen/registry/${PKG}` },
    })
    api.use(
      http.get(`*/registry/${PKG}`, async () => {
        await delay(5_000)
        return new HttpResponse('late')
      }),
    )
    const started = Date.now()
    expect(await failure(verified(tool({ timeouts: { download_ms: 300 } })))).toMatchObject({
      code: 'E_TIMEOUT',
      details: { stage: 'verify_signature', timeout_ms: 300 },
    })
    expect(Date.now() - started).toBeLessThan(3_000)
    expect(readdirSync(tmp)).toEqual([])
  })
})
