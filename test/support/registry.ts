import { createHash } from 'node:crypto'
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { HttpResponse, http } from 'msw'
import { ROOT } from './helpers.js'
import { packedAgentcli } from './packed.js'
import { startUpstream, type Upstream } from './upstream.js'

type Manifest = { name: string; version: string; dependencies?: Record<string, string>; [key: string]: unknown }
type Entry = { manifest: Manifest; tarball: () => Buffer }

const KEEP = [
  'name',
  'version',
  'dependencies',
  'optionalDependencies',
  'peerDependencies',
  'peerDependenciesMeta',
  'bin',
  'engines',
  'os',
  'cpu',
  'libc',
]

/** `file:` specs between this repository's packages, as they read once published with real version ranges. */
export function withRegistryRanges<T extends { dependencies?: Record<string, string> }>(pjson: T): T {
  const versions = repoPackageVersions()
  const deps = Object.fromEntries(
    Object.entries(pjson.dependencies ?? {}).map(([name, spec]) => [
      name,
      spec.startsWith('file:') && versions[name] ? versions[name] : spec,
    ]),
  )
  return { ...pjson, dependencies: deps }
}

function repoPackageVersions(): Record<string, string> {
  const out: Record<string, string> = {}
  for (const dir of [ROOT]) {
    const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
    out[p.name] = p.version
  }
  return out
}

/** Every package installed under the repository's node_modules (links, i.e. workspaces, excluded), by name. */
function installedPackages(): Map<string, Map<string, string>> {
  const found = new Map<string, Map<string, string>>()
  const visit = (nodeModules: string) => {
    let names: string[]
    try {
      names = readdirSync(nodeModules)
    } catch {
      return
    }
    for (const name of names) {
      if (name.startsWith('.')) continue
      const path = join(nodeModules, name)
      if (name.startsWith('@')) {
        for (const sub of readdirSync(path)) add(join(path, sub))
      } else add(path)
    }
  }
  const add = (dir: string) => {
    if (lstatSync(dir).isSymbolicLink()) return
    try {
      const p = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest
      if (p.name && p.version) {
        if (!found.has(p.name)) found.set(p.name, new Map())
        found.get(p.name)!.set(p.version, dir)
      }
    } catch {}
    visit(join(dir, 'node_modules'))
  }
  visit(join(ROOT, 'node_modules'))
  return found
}

const pick = (m: Manifest): Manifest => Object.fromEntries(KEEP.filter((k) => k in m).map((k) => [k, m[k]])) as Manifest

/**
 * A loopback npm registry with no network behind it: this repository's packages as `npm pack` packs them (the
 * run's one tarball, `packedAgentcli()`; their `file:` ranges read as real ranges), and every third-party package
 * from the copy already installed in the repository's node_modules (packed on first request). Enough for
 * `npm install` of a tool built on agentcli.
 */
export async function startRegistry(): Promise<Upstream & { packed: string[] }> {
  const work = mkdtempSync(join(tmpdir(), 'agentcli-registry-'))
  const installed = installedPackages()
  const entries = new Map<string, Map<string, Entry>>()
  const packed: string[] = []
  const { create, extract } = await import('tar')
  const tarOf = (cwd: string, files: string[], prefix?: string) => {
    const file = join(work, `${createHash('sha1').update(cwd).digest('hex')}.tgz`)
    // The fastest gzip level: these bytes cross a loopback socket once, and their packing is this process's CPU.
    create({ sync: true, gzip: { level: 1 }, file, cwd, portable: true, ...(prefix ? { prefix } : {}) }, files)
    return readFileSync(file)
  }
  // The run's one tarball of the repository (packed once, shared read-only); unpacked here to be edited.
  for (const tarball of [await packedAgentcli()]) {
    const unpacked = join(work, basename(tarball, '.tgz'))
    mkdirSync(unpacked)
    await extract({ file: tarball, cwd: unpacked })
    const pjsonPath = join(unpacked, 'package', 'package.json')
    const manifest = withRegistryRanges(JSON.parse(readFileSync(pjsonPath, 'utf8')) as Manifest)
    writeFileSync(pjsonPath, JSON.stringify(manifest, null, 2))
    const bytes = tarOf(unpacked, ['package'])
    entries.set(manifest.name, new Map([[manifest.version, { manifest: pick(manifest), tarball: () => bytes }]]))
    packed.push(manifest.name)
  }
  const entriesOf = (name: string): Map<string, Entry> | undefined => {
    if (entries.has(name)) return entries.get(name)
    const versions = installed.get(name)
    if (!versions) return undefined
    const out = new Map<string, Entry>()
    for (const [version, dir] of versions) {
      let bytes: Buffer | undefined
      const manifest = pick(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest)
      const files = readdirSync(dir).filter((f) => f !== 'node_modules')
      out.set(version, { manifest, tarball: () => (bytes ??= tarOf(dir, files, 'package')) })
    }
    entries.set(name, out)
    return out
  }
  const upstream = await startUpstream([])
  const tarballUrl = (name: string, version: string) =>
    `${upstream.url}${name}/-/${name.split('/').pop()}-${version}.tgz`
  upstream.use(
    http.get('*', ({ request }) => {
      const path = decodeURIComponent(new URL(request.url).pathname.slice(1))
      const file = /^(.+)\/-\/[^/]+-(\d[^/]*)\.tgz$/.exec(path)
      if (file) {
        const entry = entriesOf(file[1]!)?.get(file[2]!)
        return entry ? new HttpResponse(new Uint8Array(entry.tarball())) : new HttpResponse(null, { status: 404 })
      }
      const versions = entriesOf(path)
      if (!versions) return HttpResponse.json({ error: 'Not found' }, { status: 404 })
      const list = [...versions.keys()]
      return HttpResponse.json({
        name: path,
        'dist-tags': { latest: list[list.length - 1]! },
        versions: Object.fromEntries(
          [...versions].map(([version, entry]) => [
            version,
            {
              ...entry.manifest,
              dist: {
                tarball: tarballUrl(path, version),
                integrity: `sha512-${createHash('sha512').update(entry.tarball()).digest('base64')}`,
              },
            },
          ]),
        ),
      })
    }),
  )
  return {
    ...upstream,
    packed,
    close: async () => {
      await upstream.close()
      rmSync(work, { recursive: true, force: true })
    },
  }
}
