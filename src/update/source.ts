import { createReadStream } from 'node:fs'
import { readFile, stat } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
// semver's functions, not its index: the index evaluates every module of the package, ranges included (≈ 1 ms).
import semverRcompare from 'semver/functions/rcompare.js'
import semverValid from 'semver/functions/valid.js'
import { builtin } from '../boot/builtin.js'
import { AgentError, isAgentError } from '../errors/agent-error.js'
import { httpClient } from '../http/client.js'

/** One downloadable file of a release. */
export type Asset = { name: string; url: string }

/** A release, whatever the source. */
export type Release = {
  version: string
  tag: string
  url: string | null
  notes: string
  prerelease: boolean
  assets: Asset[]
}

/** Where releases come from. */
export type ReleaseSource = {
  describe: string
  list(): Promise<Release[]>
  fetch(asset: Asset, signal?: AbortSignal): Promise<Response>
}

type GithubRelease = {
  tag_name: string
  html_url: string
  body: string | null
  prerelease: boolean
  draft: boolean
  assets: Array<{ name: string; browser_download_url: string }>
}

function discoverError(error: unknown, where: string): AgentError {
  const base = isAgentError(error) ? error : new AgentError('E_NETWORK', `cannot reach ${where}`, { cause: error })
  base.details.stage = 'discover'
  return base
}

/** A release list whose shape is not what the source promises: the source's fault, said as such. */
function malformed(where: string, why: string): AgentError {
  return new AgentError('E_SERVER', `${where} answered a release list that is malformed (${why})`, {
    details: { stage: 'discover', reason: 'malformed_body', source: where },
  })
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null
const isReleaseList = (v: unknown, name: string) =>
  Array.isArray(v) &&
  v.every(
    (r) =>
      isObject(r) &&
      typeof r[name] === 'string' &&
      Array.isArray(r.assets) &&
      r.assets.every((a) => isObject(a) && typeof a.name === 'string'),
  )

/** GitHub Releases of `repository` (`api` defaults to api.github.com; set it for GitHub Enterprise). */
export function githubSource(
  repository: string,
  api = 'https://api.github.com/',
  signal?: AbortSignal,
  timeoutMs = 10_000,
): ReleaseSource {
  const client = httpClient({
    baseUrl: api,
    timeoutMs,
    retries: 1,
    ...(signal ? { signal } : {}),
    userAgent: 'agentcli-update',
  })
  return {
    describe: `github:${repository}`,
    async list() {
      try {
        const { data } = await client.get<GithubRelease[]>(`repos/${repository}/releases`, { query: { per_page: 50 } })
        if (!isReleaseList(data, 'tag_name'))
          throw malformed(`GitHub releases of ${repository}`, 'expected an array of releases')
        return data
          .filter((r) => !r.draft && semverValid(r.tag_name.replace(/^v/, '')))
          .map((r) => ({
            version: semverValid(r.tag_name.replace(/^v/, ''))!,
            tag: r.tag_name,
            url: r.html_url,
            notes: r.body ?? '',
            prerelease: r.prerelease,
            assets: r.assets.map((a) => ({ name: a.name, url: a.browser_download_url })),
          }))
      } catch (error) {
        throw discoverError(error, `GitHub releases of ${repository}`)
      }
    },
    fetch: (asset, s) => fetch(asset.url, { signal: s ?? null, redirect: 'follow' }),
  }
}

type Manifest = Array<{
  version: string
  tag?: string
  notes?: string
  prerelease?: boolean
  url?: string
  assets: Array<{ name: string; url?: string }>
}>

function fromManifest(manifest: Manifest, resolve: (name: string, url?: string) => string): Release[] {
  return manifest
    .filter((r) => semverValid(r.version))
    .map((r) => ({
      version: r.version,
      tag: r.tag ?? `v${r.version}`,
      url: r.url ?? null,
      notes: r.notes ?? '',
      prerelease: Boolean(r.prerelease),
      assets: r.assets.map((a) => ({ name: a.name, url: resolve(a.name, a.url) })),
    }))
}

/** A mirror: `<base>/releases.json` listing releases, assets relative to the base (for enterprises). */
export function mirrorSource(base: string, signal?: AbortSignal, timeoutMs = 10_000): ReleaseSource {
  const root = base.endsWith('/') ? base : `${base}/`
  return {
    describe: `mirror:${root}`,
    async list() {
      try {
        const { data } = await httpClient({
          baseUrl: root,
          retries: 1,
          timeoutMs,
          ...(signal ? { signal } : {}),
        }).get<Manifest>('releases.json')
        if (!isReleaseList(data, 'version')) throw malformed(`the mirror ${root}`, 'expected an array of releases')
        return fromManifest(data, (name, url) => new URL(url ?? name, root).toString())
      } catch (error) {
        throw discoverError(error, `the mirror ${root}`)
      }
    },
    fetch: (asset, s) => fetch(asset.url, { signal: s ?? null }),
  }
}

/** A local directory with `releases.json` and the assets beside it (for air-gapped machines). */
export function directorySource(dir: string): ReleaseSource {
  return {
    describe: `dir:${dir}`,
    async list() {
      try {
        const manifest = JSON.parse(await readFile(join(dir, 'releases.json'), 'utf8')) as Manifest
        if (!isReleaseList(manifest, 'version')) throw new Error('not an array of releases')
        return fromManifest(manifest, (name, url) => (url && isAbsolute(url) ? url : join(dir, url ?? name)))
      } catch (error) {
        throw discoverError(
          new AgentError('E_IO', `cannot read ${join(dir, 'releases.json')}`, {
            details: { path: join(dir, 'releases.json') },
            cause: error,
          }),
          dir,
        )
      }
    },
    async fetch(asset) {
      // Streamed with its size declared, like an HTTP source: a huge file is refused from its size, never read
      // into memory.
      let info: Awaited<ReturnType<typeof stat>>
      try {
        info = await stat(asset.url)
        if (!info.isFile()) throw new Error('not a file')
      } catch {
        return new Response('missing', { status: 404 })
      }
      // node:stream on first use: every doctor reads the settings that name this source, few fetch from a directory.
      const { Readable } = builtin<typeof import('node:stream')>('node:stream')
      const body = Readable.toWeb(createReadStream(asset.url)) as unknown as ReadableStream<Uint8Array>
      return new Response(body, { headers: { 'content-length': String(info.size) } })
    },
  }
}

/** The newest release on a channel (`stable` skips prereleases), or the one asked for. */
export function pickRelease(
  releases: Release[],
  options: { channel: string; to?: string | undefined },
): Release | undefined {
  if (options.to) return releases.find((r) => r.version === semverValid(options.to!.replace(/^v/, '')))
  return releases
    .filter((r) => options.channel !== 'stable' || !r.prerelease)
    .sort((a, b) => semverRcompare(a.version, b.version))[0]
}
