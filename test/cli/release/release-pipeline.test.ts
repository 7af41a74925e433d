import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runTool } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { attest } from '../../support/attest.js'
import { env, ROOT, useSandbox } from '../../support/helpers.js'
import { startRegistry, withRegistryRanges } from '../../support/registry.js'
import { makeInstall, makeToolCopy } from '../../support/release.js'
import { createAuthority } from '../../support/sigstore.js'
import { startUpstream, type Upstream } from '../../support/upstream.js'

// The release pipeline end to end, minus GitHub: the same `agentcli-release` steps the workflow runs (archive on
// this runner's platform, checksums, verify), checksums.txt signed by the test's Sigstore authority in place of
// the workflow's OIDC identity, then a standalone install of 0.1.0 updated to the result through the real
// `update --check`, `--dry-run`, `--confirm`. No network but loopback: the archive's `npm install` resolves from
// a loopback registry holding this repository's packed packages and the third-party packages already installed
// in node_modules (test/support/registry.ts); npm's cache is a fresh temp dir.

const box = useSandbox()
const REPO = 'agentcli/tasks-example'
const RELEASE_BIN = join(ROOT, 'bin/agentcli-release.js')
const TARGET = `${process.platform}-${process.arch}`
const identityFor = (tag: string, repo = REPO) =>
  `https://github.com/${repo}/.github/workflows/release.yml@refs/tags/${tag}`

let registry: Awaited<ReturnType<typeof startRegistry>>
let api: Upstream
let authority: Awaited<ReturnType<typeof createAuthority>>
let work: string
let out: string
let npmCache: string
let rootFile: string

/**
 * @sigstore/sign writes message signatures as v0.2 bundles (a certificate chain); cosign 3 writes v0.3 (the leaf
 * certificate alone). Same signature, same log entry: only the envelope's shape differs.
 */
function asV03(bundle: unknown): Record<string, unknown> {
  const b = bundle as { verificationMaterial: { x509CertificateChain?: { certificates: Array<{ rawBytes: string }> } } }
  const { x509CertificateChain, ...material } = b.verificationMaterial
  return {
    ...b,
    mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
    verificationMaterial: { ...material, certificate: x509CertificateChain!.certificates[0] },
  }
}

/** Run `agentcli-release` as the workflow does, with npm pointed at the loopback registry. */
function release(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RELEASE_BIN, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        npm_config_registry: registry.url,
        npm_config_cache: npmCache,
        npm_config_update_notifier: 'false',
        // Anything but the loopback registry would go through a proxy that does not exist: no network, provably.
        npm_config_proxy: 'http://127.0.0.1:9',
        npm_config_https_proxy: 'http://127.0.0.1:9',
        npm_config_noproxy: '127.0.0.1',
        npm_config_audit: 'false',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (c) => {
      stdout += c
    })
    child.stderr.on('data', (c) => {
      stderr += c
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

beforeAll(async () => {
  registry = await startRegistry()
  api = await startUpstream([])
  authority = await createAuthority(`${api.url}rekor`)
  api.use(authority.handler)
  work = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-release-'))
  out = join(work, 'dist-release')
  npmCache = mkdtempSync(join(tmpdir(), 'agentcli-npm-cache-'))
  rootFile = join(work, 'trusted_root.json')
  writeFileSync(rootFile, JSON.stringify(authority.trustedRoot))
}, 60_000)
afterAll(async () => {
  rmSync(work, { recursive: true, force: true })
  rmSync(npmCache, { recursive: true, force: true })
  await registry.close()
  await api.close()
})

describe('the release pipeline produces what update accepts', () => {
  it('archive → checksums → signed → verify; a standalone 0.1.0 updates to it through check, dry-run, confirm', async () => {
    // The tool as its author's repository has it: real version ranges (the example uses a workspace link).
    const tool = makeToolCopy(work, '0.2.0', withRegistryRanges)
    const started = Date.now()
    const archived = await release([
      'archive',
      tool,
      '--out',
      out,
      '--tag',
      'v0.2.0',
      '--target',
      TARGET,
      '--repository',
      REPO,
    ])
    const archiveMs = Date.now() - started
    expect(archived.code, archived.stderr).toBe(0)
    const result = JSON.parse(archived.stdout)
    expect(result).toMatchObject({ name: `tasks-v0.2.0-${TARGET}.tar.gz`, bin: 'tasks', version: '0.2.0' })
    expect(result.packages).toBeGreaterThan(20)
    expect(registry.requests.some((r) => r.url.endsWith('/agentcli'))).toBe(true)

    const sums = await release(['checksums', out, '--expect', TARGET])
    expect(sums.code, sums.stderr).toBe(0)
    const checksums = readFileSync(join(out, 'checksums.txt'))
    expect(checksums.toString()).toBe(`${result.sha256}  ${result.name}\n`)
    // In the format cosign 3 (`sign-blob --new-bundle-format --bundle`) writes: v0.3, a single leaf certificate.
    const signed = asV03(await authority.sign(checksums, identityFor('v0.2.0')))
    expect(signed).toMatchObject({
      mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json',
      verificationMaterial: { certificate: { rawBytes: expect.any(String) } },
    })
    writeFileSync(join(out, 'checksums.txt.sigstore.json'), JSON.stringify(signed))
    const verified = await release(['verify', out, '--repository', REPO, '--tag', 'v0.2.0', '--trusted-root', rootFile])
    expect(verified.code, verified.stderr).toBe(0)
    expect(JSON.parse(verified.stdout)).toEqual({ identity: identityFor('v0.2.0'), archives: [result.name] })

    const assets = readdirSync(out)
    expect(assets.sort()).toEqual(['checksums.txt', 'checksums.txt.sigstore.json', result.name])
    api.use(
      http.get(`*/repos/${REPO}/releases`, () =>
        HttpResponse.json([
          {
            tag_name: 'v0.2.0',
            html_url: `https://github.com/${REPO}/releases/v0.2.0`,
            body: '### Added\n- Everything in 0.2.0.',
            prerelease: false,
            draft: false,
            assets: assets.map((name) => ({ name, browser_download_url: `${api.url}assets/${name}` })),
          },
        ]),
      ),
      http.get('*/assets/:name', ({ params }) => new HttpResponse(readFileSync(join(out, String(params.name))))),
    )
    const install = makeInstall({ trusted_root: rootFile })
    try {
      const tasks = (args: string[]) =>
        runTool(install.bin, args, {
          // An update verifies, downloads and installs a release: runTool's 20 s kill is a window load can close.
          timeoutMs: 120_000,
          env: {
            ...box().env,
            TASKS_UPDATE_API_URL: api.url,
            TASKS_HTTP_RETRIES: '0',
          },
        })
      const check = await tasks(['update', '--check'])
      expect(env(check).data).toMatchObject({
        current_version: '0.1.0',
        target_version: '0.2.0',
        update_available: true,
        install_method: 'standalone',
        checksums_available: true,
        signature_available: true,
      })
      const dry = await tasks(['update', '--dry-run'])
      expect(dry.code, dry.stdout).toBe(0)
      const done = await tasks(['update', '--confirm', env(dry).data.confirm_token])
      expect(done.code, done.stdout).toBe(0)
      expect(env(done).data).toMatchObject({
        previous_version: '0.1.0',
        current_version: '0.2.0',
        install_method: 'standalone',
        signature_status: 'verified',
        signature_verified: true,
        checksum_verified: true,
      })
      // The new version runs from its own production install, resolved from the registry, not from the checkout.
      const installed = join(install.root, 'versions', '0.2.0', 'node_modules')
      for (const pkg of ['agentcli', '@oclif/core'])
        expect(lstatSync(join(installed, pkg)).isDirectory(), pkg).toBe(true)
      expect(existsSync(join(installed, '.bin'))).toBe(false)
      // The record of what the archive holds, resolved from the registry (not from the checkout).
      const lock = JSON.parse(readFileSync(join(install.root, 'versions', '0.2.0', 'package-lock.json'), 'utf8'))
      expect(lock.packages['node_modules/agentcli']).toMatchObject({
        version: '0.1.0',
        integrity: expect.stringMatching(/^sha512-/),
      })
      expect(lock.packages['node_modules/agentcli'].link).toBeUndefined()
      expect(env(await tasks(['--version'])).data.version).toBe('0.2.0')
      const list = await tasks(['list'])
      expect(list.code, list.stdout).toBe(0)
    } finally {
      install.cleanup()
    }
    console.info(
      `agentcli-release archive (npm install from the loopback registry): ${archiveMs} ms, ${result.packages} packages, ${result.bytes} bytes`,
    )
  }, 180_000)

  it('refuses what update would refuse or what cannot be installed, before anything is published; verify-npm checks a published provenance', async () => {
    const stage = mkdtempSync(join(work, 'refusals-'))
    // Every refusal below comes from preflight, which reads package.json and sees a manifest: no build needed.
    const linked = makeToolCopy(stage, '0.3.0', undefined, { build: false })
    writeFileSync(
      join(linked, 'package.json'),
      JSON.stringify({
        ...JSON.parse(readFileSync(join(linked, 'package.json'), 'utf8')),
        dependencies: { agentcli: 'file:../..', left: 'github:someone/left', ok: '^1.0.0' },
      }),
    )
    // A signed release of two stand-in archives, to refuse on checksums and verify without an install.
    const fake = mkdtempSync(join(work, 'fake-'))
    for (const t of [TARGET, 'win32-x64']) writeFileSync(join(fake, `tasks-v0.3.0-${t}.tar.gz`), t)
    writeFileSync(join(fake, 'tasks-v0.2.9-darwin-arm64.tar.gz.partial'), 'ignored')
    expect((await release(['checksums', fake, '--expect', `${TARGET},win32-x64`])).code).toBe(0)
    const sums = readFileSync(join(fake, 'checksums.txt'))
    writeFileSync(
      join(fake, 'checksums.txt.sigstore.json'),
      JSON.stringify(await authority.sign(sums, identityFor('v0.3.0'))),
    )
    expect(
      (await release(['verify', fake, '--repository', REPO, '--tag', 'v0.3.0', '--trusted-root', rootFile])).code,
    ).toBe(0)
    const tampered = mkdtempSync(join(work, 'tampered-'))
    for (const name of readdirSync(fake)) writeFileSync(join(tampered, name), readFileSync(join(fake, name)))
    writeFileSync(join(tampered, `tasks-v0.3.0-${TARGET}.tar.gz`), 'other bytes')
    // What cosign 2 wrote without --new-bundle-format: refused, as update refuses it.
    const legacy = mkdtempSync(join(work, 'legacy-'))
    for (const name of readdirSync(fake)) writeFileSync(join(legacy, name), readFileSync(join(fake, name)))
    writeFileSync(
      join(legacy, 'checksums.txt.sigstore.json'),
      JSON.stringify({ base64Signature: 'MEUCIQ==', cert: 'LS0t', rekorBundle: { SignedEntryTimestamp: 'MEQ=' } }),
    )
    const mixed = mkdtempSync(join(work, 'mixed-'))
    writeFileSync(join(mixed, `tasks-v0.3.0-${TARGET}.tar.gz`), 'a')
    writeFileSync(join(mixed, `tasks-v0.2.0-${TARGET}.tar.gz`), 'b')
    const ready = makeToolCopy(mkdtempSync(join(work, 'ready-')), '0.3.0', withRegistryRanges, { build: false })
    const checked = await release(['preflight', ready, '--tag', 'v0.3.0', '--repository', REPO])
    expect(checked.code, checked.stderr).toBe(0)
    expect(JSON.parse(checked.stdout)).toEqual({ name: 'tasks-example', version: '0.3.0', bin: 'tasks' })
    const refusals: Array<[string[], RegExp]> = [
      [['preflight', ready, '--repository', 'someone/else'], /expects releases signed by agentcli\/tasks-example/],
      [
        ['preflight', ready, '--repository', REPO, '--workflow', '.github/workflows/other.yml'],
        /expects releases signed/,
      ],
      [['preflight', linked, '--tag', 'v0.3.0'], /do not come from the registry/],
      [
        ['archive', linked, '--out', stage],
        /do not come from the registry.*agentcli@file:\.\.\/\.\., left@github:someone\/left/,
      ],
      [['archive', linked, '--out', stage, '--tag', 'v0.3.1'], /tag v0\.3\.1 is not v0\.3\.0/],
      [
        ['archive', linked, '--out', stage, '--target', 'plan9-mips'],
        /build each platform's archive on its own runner/,
      ],
      [['checksums', stage], /no \.tar\.gz archives/],
      [['checksums', fake, '--expect', `${TARGET},win32-x64,darwin-arm64`], /no archive for darwin-arm64/],
      [['checksums', mixed], /more than one tool or version/],
      [['verify', fake, '--repository', REPO, '--tag', 'v0.3.00', '--trusted-root', rootFile], /identity_mismatch/],
      [
        ['verify', fake, '--repository', 'evil/tasks-example', '--tag', 'v0.3.0', '--trusted-root', rootFile],
        /identity_mismatch/,
      ],
      [['verify', fake, '--repository', REPO, '--tag', 'v0.3.0'], /root_untrusted|cannot refresh/],
      [
        ['verify', legacy, '--repository', REPO, '--tag', 'v0.3.0', '--trusted-root', rootFile],
        /legacy.*bundle_invalid/,
      ],
      [
        ['verify', tampered, '--repository', REPO, '--tag', 'v0.3.0', '--trusted-root', rootFile],
        /does not match checksums\.txt/,
      ],
      [['archive'], /usage:/],
    ]
    for (const [args, message] of refusals) {
      const r = await release(args)
      expect(r.code, args.join(' ')).toBe(args.length === 1 ? 2 : 1)
      expect(r.stderr, args.join(' ')).toMatch(message)
      expect(r.stdout).toBe('')
    }
    expect(readdirSync(stage).filter((n) => n.endsWith('.tar.gz'))).toEqual([])
    // verify-npm: the workflow's check of what it just published with --provenance.
    const tarball = Buffer.from('published tarball')
    const sha512 = createHash('sha512').update(tarball).digest()
    const published = (subject: string) =>
      attest(
        authority,
        {
          _type: 'https://in-toto.io/Statement/v1',
          subject: [{ name: 'pkg:npm/%40agentcli/plugin-builtins@0.3.0', digest: { sha512: sha512.toString('hex') } }],
          predicateType: 'https://slsa.dev/provenance/v1',
          predicate: {},
        },
        subject,
      )
    let bundle = await published(identityFor('v0.3.0'))
    api.use(
      http.get('*/npm/@agentcli%2fplugin-builtins', () =>
        HttpResponse.json({
          versions: {
            '0.3.0': { dist: { integrity: `sha512-${sha512.toString('base64')}`, tarball: `${api.url}t.tgz` } },
          },
        }),
      ),
      http.get('*/npm/-/npm/v1/attestations/:spec', () =>
        HttpResponse.json({ attestations: [{ predicateType: 'https://slsa.dev/provenance/v1', bundle }] } as never),
      ),
    )
    const npmArgs = [
      'verify-npm',
      '@agentcli/plugin-builtins@0.3.0',
      '--repository',
      REPO,
      '--registry',
      `${api.url}npm/`,
    ]
    const good = await release([...npmArgs, '--trusted-root', rootFile])
    expect(good.code, good.stderr).toBe(0)
    expect(JSON.parse(good.stdout)).toMatchObject({ signed_by: identityFor('v0.3.0'), sha512: sha512.toString('hex') })
    bundle = await published(identityFor('v0.3.0', 'evil/tasks-example'))
    const foreign = await release([...npmArgs, '--trusted-root', rootFile])
    expect([foreign.code, foreign.stdout]).toEqual([1, ''])
    expect(foreign.stderr).toMatch(/identity_mismatch/)
    expect(readFileSync(join(fake, 'checksums.txt'), 'utf8')).not.toMatch(/partial/)
  }, 60_000)
})
