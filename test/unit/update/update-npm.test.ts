import { randomBytes } from 'node:crypto'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { delay, HttpResponse, http } from 'msw'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { runBinInProcess } from '../../support/in-process.js'
import {
  attestationsFor,
  NPM_PUBLISH,
  type NpmPackage,
  provenanceStatement,
  serveNpmPackage,
  sha512,
  sri,
} from '../../support/npm-provenance.js'
import { makeInstall } from '../../support/release.js'
import {
  api,
  authority,
  identityFor,
  REPO,
  rootFile,
  serveRelease,
  stranger,
  updateEnv,
  useUpdateWorld,
} from '../../support/update-world.js'

// `update` on an npm global install: the registry's SLSA provenance for the target version is verified (pinned
// trusted root, exact workflow identity, subject digest = dist.integrity) before npm runs, and npm installs the
// downloaded, re-hashed tarball. The registry (packument, attestations, tarball) is msw on loopback; npm is a stub
// that records what it was asked to install. In-process (run(root, { io })): the run's PATH finds the stub and its
// TMPDIR holds the download; npm in a real process (its deadline, its group killed, one npm for parallel confirms)
// is test/cli/update/update-robust.test.ts.

const box = useSandbox()
useUpdateWorld('provenance')
const PKG = 'tasks-example'
let base: string
let pkgDir: string
let stubs: string
let npmLog: string
const TARBALL = randomBytes(4096)

const statement = (over: { name?: string; digest?: Buffer } = {}) =>
  provenanceStatement(over.name ?? `pkg:npm/${PKG}@0.2.0`, over.digest ?? TARBALL)

type Registry = Omit<NpmPackage, 'name' | 'version' | 'tarball'>

/** The GitHub release that announces 0.2.0, and the npm registry for it. */
function serve(r: Registry): void {
  serveRelease('v0.2.0', {})
  serveNpmPackage(api, { name: PKG, version: '0.2.0', tarball: TARBALL, ...r })
}

const attested = (subject = identityFor('v0.2.0'), st: unknown = statement(), by = authority) =>
  attestationsFor(by, st, subject)

function run(args: string[], extra: Record<string, string> = {}) {
  return runBinInProcess(join(pkgDir, 'bin', 'run.js'), args, {
    env: updateEnv(
      {
        ...box().env,
        PATH: `${stubs}:${process.env.PATH}`,
        TASKS_NPM_REGISTRY: `${api.url}registry/`,
        // The tool's own temp dir, to see that the downloaded tarball never outlives the update.
        TMPDIR: join(base, 'tmp'),
      },
      extra,
    ),
  })
}

async function confirm(extra: Record<string, string> = {}) {
  const dry = await run(['update', '--dry-run'], extra)
  expect(dry.code, dry.stdout).toBe(0)
  return run(['update', '--confirm', env(dry).data.confirm_token], extra)
}

beforeEach(() => {
  // An npm global prefix inside the repository (so the copy's imports resolve), and an npm stub that answers
  // `npm prefix -g` and records each install with the SHA-512 of the file it was given.
  base = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-install-npm-'))
  const install = makeInstall({ trusted_root: rootFile })
  pkgDir = join(base, 'prefix', 'lib', 'node_modules', PKG)
  cpSync(join(install.root, 'versions', '0.1.0'), pkgDir, { recursive: true })
  install.cleanup()
  stubs = join(base, 'stubs')
  mkdirSync(stubs)
  mkdirSync(join(base, 'tmp'))
  npmLog = join(base, 'npm.log')
  writeFileSync(
    join(stubs, 'npm'),
    `#!/bin/sh\nif [ "$1" = prefix ]; then echo "${join(base, 'prefix')}"; exit 0; fi\necho "$1 $2 $(sha512sum "$3" | cut -d' ' -f1)" >> "${npmLog}"\n`,
    { mode: 0o755 },
  )
})
afterEach(() => rmSync(base, { recursive: true, force: true }))

const npmCalls = () => (existsSync(npmLog) ? readFileSync(npmLog, 'utf8').trim().split('\n') : [])

describe('update on an npm install verifies the registry provenance first', () => {
  it('a provenance signed by the declared workflow at v<version>: npm installs exactly the attested tarball', async () => {
    serve({ attestations: await attested() })
    expect(env(await run(['update', '--check'])).data).toMatchObject({ install_method: 'npm', update_available: true })
    const done = await confirm()
    expect(done.code, done.stdout).toBe(0)
    expect(env(done).data).toMatchObject({
      install_method: 'npm',
      signature_status: 'verified_provenance',
      signature_verified: true,
      checksum_verified: true,
      current_version: '0.2.0',
    })
    expect(npmCalls()).toEqual([`install -g ${sha512(TARBALL).toString('hex')}`])
    expect(readdirSync(join(base, 'tmp'))).toEqual([])
  })

  const refusals: Array<[string, () => Promise<Registry>, string, Record<string, string>?]> = [
    [
      'a provenance from another repository',
      async () => ({ attestations: await attested(identityFor('v0.2.0', 'evil/tasks-example')) }),
      'identity_mismatch',
    ],
    [
      'a provenance from another workflow of the repository',
      async () => ({ attestations: await attested(identityFor('v0.2.0', REPO, '.github/workflows/other.yml')) }),
      'identity_mismatch',
    ],
    [
      'a provenance signed at another tag (v0.2.00)',
      async () => ({ attestations: await attested(identityFor('v0.2.00')) }),
      'identity_mismatch',
    ],
    [
      'a provenance from a Sigstore instance that is not trusted',
      async () => ({ attestations: await attested(identityFor('v0.2.0'), statement(), stranger) }),
      'root_untrusted',
    ],
    ['no attestation at all (404)', async () => ({ attestationStatus: 404 }), 'signature_missing'],
    [
      'only the publish attestation, no SLSA provenance',
      async () => ({
        attestations: {
          attestations: [{ predicateType: NPM_PUBLISH, bundle: {} }],
        },
      }),
      'signature_missing',
    ],
    [
      'a packument whose integrity is not the attested digest',
      async () => ({ attestations: await attested(), integrity: sri(Buffer.from('other bytes')) }),
      'signature_invalid',
    ],
    [
      'a provenance about another package',
      async () => ({ attestations: await attested(identityFor('v0.2.0'), statement({ name: 'pkg:npm/evil@0.2.0' })) }),
      'signature_invalid',
    ],
    [
      'a tarball whose bytes are not the attested ones',
      async () => ({
        attestations: await attested(identityFor('v0.2.0'), statement({ digest: TARBALL })),
        served: Buffer.concat([TARBALL, Buffer.from('x')]),
      }),
      'checksum_mismatch',
    ],
  ]
  for (const [name, registry, reason] of refusals) {
    it(`refuses ${name}: E_INTEGRITY ${reason}, npm never runs`, async () => {
      serve(await registry())
      const done = await confirm()
      expect(done.code, done.stdout).toBe(1)
      expect(env(done).error).toMatchObject({
        code: 'E_INTEGRITY',
        retryable: false,
        details: { reason, binary_replaced: false },
      })
      expect(npmCalls()).toEqual([])
    })
  }

  it('a registry that is down is E_NETWORK (retryable), and npm never runs', async () => {
    serve({ attestations: await attested() })
    const done = await confirm({ TASKS_NPM_REGISTRY: 'http://127.0.0.1:9/' })
    expect(done.code, done.stdout).toBe(7)
    expect(env(done).error).toMatchObject({
      code: 'E_NETWORK',
      retryable: true,
      details: { stage: 'verify_signature' },
    })
    expect(npmCalls()).toEqual([])
  })

  it('a registry answering 503 for the attestations is E_SERVER, not a silent pass', async () => {
    serve({ attestationStatus: 503 })
    const done = await confirm()
    expect(done.code, done.stdout).toBe(7)
    expect(env(done).error).toMatchObject({ code: 'E_SERVER' })
    expect(npmCalls()).toEqual([])
  })
})

/** Declare update timeouts or limits in the installed package.json, as a tool author would ship them. */
function declareUpdate(section: 'timeouts' | 'limits', values: Record<string, number>): void {
  const path = join(pkgDir, 'package.json')
  const pjson = JSON.parse(readFileSync(path, 'utf8'))
  pjson.agentcli.update[section] = values
  writeFileSync(path, JSON.stringify(pjson, null, 2))
}

describe('the registry answers of an npm update are held to the declared registry_bytes', () => {
  it('a packument over agentcli.update.limits.registry_bytes is E_INTEGRITY too_large naming its URL; npm never runs', async () => {
    declareUpdate('limits', { registry_bytes: 64 })
    serve({ attestations: await attested() })
    const done = await confirm()
    expect(done.code, done.stdout).toBe(1)
    const error = env(done).error
    expect([error.code, error.retryable, error.details.reason]).toEqual(['E_INTEGRITY', false, 'too_large'])
    // The packument is the first registry answer read; the URL names it, the setting says what to raise.
    expect(error.details).toMatchObject({
      stage: 'verify_signature',
      path: `${api.url}registry/${PKG}`,
      limit: 64,
      setting: 'agentcli.update.limits.registry_bytes',
      binary_replaced: false,
    })
    expect(npmCalls()).toEqual([])
  })
})

describe('the registry steps of an npm update are bounded by the declared download_ms', () => {
  const declareTimeouts = (timeouts: Record<string, number>) => declareUpdate('timeouts', timeouts)

  const stalls: Array<[string, string, string]> = [
    ['the attestations request', `*/registry/-/npm/v1/attestations/${PKG}@0.2.0`, 'verify_signature'],
    ['the tarball download', `*/registry/${PKG}/-/${PKG}-0.2.0.tgz`, 'download'],
  ]
  for (const [what, path, stage] of stalls) {
    it(`${what} that stalls is E_TIMEOUT (retryable) at ${stage} within download_ms, and npm never runs`, async () => {
      declareTimeouts({ download_ms: 1_500 })
      serve({ attestations: await attested() })
      api.use(
        http.get(path, async () => {
          await delay(20_000)
          return new HttpResponse('late')
        }),
      )
      const dry = await run(['update', '--dry-run'])
      expect(dry.code, dry.stdout).toBe(0)
      const started = Date.now()
      const done = await run(['update', '--confirm', env(dry).data.confirm_token])
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(done.code, done.stdout).toBe(8)
      expect(env(done).error).toMatchObject({
        code: 'E_TIMEOUT',
        retryable: true,
        details: { stage, timeout_ms: 1_500, binary_replaced: false },
      })
      expect(npmCalls()).toEqual([])
      expect(readdirSync(join(base, 'tmp'))).toEqual([])
    }, 30_000)
  }
})
