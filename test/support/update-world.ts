import { createHash } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ToolRun } from 'agentcli/testing'
import { HttpResponse, http } from 'msw'
import { afterAll, beforeAll, beforeEach } from 'vitest'
import { env, ROOT } from './helpers.js'
import { createAuthority, type SignKind } from './sigstore.js'
import { startUpstream, type Upstream } from './upstream.js'

// What every `update` suite stands on: a loopback upstream serving GitHub releases, a throw-away Sigstore
// authority whose root the install pins, and a stranger authority that no install trusts. The bindings below are
// live: `useUpdateWorld()` fills them in its hooks, and each test file (its own module instance) reads them.

/** The example's release repository. */
export const REPO = 'agentcli/tasks-example'

/** The certificate identity of the release workflow for `tag`. */
export const identityFor = (tag: string, repo = REPO, workflow = '.github/workflows/release.yml') =>
  `https://github.com/${repo}/${workflow}@refs/tags/${tag}`

/** A release tarball. */
export type Release = { name: string; bytes: Buffer }
/** The assets of one release, by file name. */
export type Assets = Record<string, Buffer | string>
/** A mock Sigstore authority. */
export type Authority = Awaited<ReturnType<typeof createAuthority>>

/** The loopback upstream (releases, assets, Rekor). */
export let api: Upstream
/** The authority the installs trust. */
export let authority: Authority
/** An authority nobody trusts. */
export let stranger: Authority
/** A trusted-root file of {@link authority}, for `makeInstall({ trusted_root })`. */
export let rootFile: string

/**
 * Start the world before the file's tests and stop it after; before each test the upstream forgets earlier
 * handlers and requests and serves both authorities' logs again.
 */
export function useUpdateWorld(name: string): void {
  beforeAll(async () => {
    api = await startUpstream([])
    authority = await createAuthority(`${api.url}rekor`)
    stranger = await createAuthority(`${api.url}stranger`)
    rootFile = join(ROOT, `test/fixtures/.tmp-${name}-root.json`)
    writeFileSync(rootFile, JSON.stringify(authority.trustedRoot))
  }, 60_000)
  afterAll(async () => {
    rmSync(rootFile, { force: true })
    await api.close()
  })
  beforeEach(() => {
    api.reset()
    api.use(...authority.handlers, ...stranger.handlers)
  })
}

/** The `checksums.txt` line of a release. */
export function checksumsFor(r: Release): string {
  return `${createHash('sha256').update(r.bytes).digest('hex')}  ${r.name}\n`
}

/**
 * The release with a checksums file `sums` and a bundle over it signed for `subject` by `by`, in the format
 * `kind` (`cosign3`: what cosign 3.1 writes by default).
 */
export async function signedAssets(
  r: Release,
  subject: string,
  sums = checksumsFor(r),
  by = authority,
  kind: SignKind = 'message',
) {
  return {
    [r.name]: r.bytes,
    'checksums.txt': sums,
    'checksums.txt.sigstore.json': JSON.stringify(await by.sign(Buffer.from(sums), subject, undefined, kind)),
  } satisfies Assets
}

/** Serve one GitHub release of `tag` with these assets. */
export function serveRelease(tag: string, assets: Assets): void {
  api.use(
    http.get(`*/repos/${REPO}/releases`, () =>
      HttpResponse.json([
        {
          tag_name: tag,
          html_url: `https://github.com/${REPO}/releases/${tag}`,
          body: '### Added\n- things',
          prerelease: false,
          draft: false,
          assets: Object.keys(assets).map((name) => ({ name, browser_download_url: `${api.url}assets/${name}` })),
        },
      ]),
    ),
    http.get('*/assets/:name', ({ params }) => {
      const body = assets[String(params.name)]
      return body === undefined
        ? new HttpResponse('missing', { status: 404 })
        : new HttpResponse(typeof body === 'string' ? body : new Uint8Array(body))
    }),
  )
}

/** The settings every update run gets: the loopback API, no HTTP retries (a fault must show at once). */
export function updateEnv(base: Record<string, string>, extra: Record<string, string> = {}): Record<string, string> {
  return { ...base, TASKS_UPDATE_API_URL: api.url, TASKS_HTTP_RETRIES: '0', ...extra }
}

/** `update --dry-run`, then `update --confirm` with its token; the dry run's failure is returned as it is. */
export async function confirmUpdate(run: (args: string[]) => Promise<ToolRun>, flags: string[] = []) {
  const dry = await run(['update', '--dry-run', ...flags])
  if (dry.code !== 0) return dry
  return run(['update', '--confirm', env(dry).data.confirm_token, ...flags])
}
