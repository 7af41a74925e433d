import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { npmOrThrow } from './_npm.js'
import { type PreflightOptions, preflight, type ToolPackage } from './preflight.js'

/** One platform's release archive, as `update` finds it: `<bin>-v<version>-<platform>-<arch>.tar.gz`. */
export type ArchiveResult = {
  name: string
  path: string
  sha256: string
  bytes: number
  bin: string
  version: string
  target: string
  /** Packages in the staged production `node_modules`. */
  packages: number
}

/**
 * Stage and archive a built tool for the platform this runs on: exactly the files `npm pack` would publish, its
 * production dependencies installed fresh from the registry (so native modules such as the keychain's are this
 * platform's, which is why each platform's archive is built on its own runner), a smoke run of the staged bin,
 * then one `tar.gz` whose top-level directory is `<bin>/`.
 */
export async function archiveTool(
  options: {
    toolDir: string
    outDir: string
    log?: (line: string) => void
  } & PreflightOptions,
): Promise<ArchiveResult> {
  const log = options.log ?? (() => {})
  const { toolDir, pjson, bin, target } = preflight(options)
  const work = mkdtempSync(join(tmpdir(), 'agentcli-release-'))
  try {
    const packed = JSON.parse(
      npmOrThrow(['pack', '--json', '--ignore-scripts', '--pack-destination', work], toolDir),
    ) as Array<{ filename: string }>
    const stage = join(work, 'stage')
    const dir = join(stage, bin)
    mkdirSync(dir, { recursive: true })
    const tar = await import('tar')
    await tar.extract({ file: join(work, packed[0]!.filename), cwd: dir, strip: 1 })
    const staged = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as ToolPackage
    // A runtime install: devDependencies would only be resolved (and fetched) to be omitted.
    delete staged.devDependencies
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(staged, null, 2)}\n`)
    // A tool's npm-shrinkwrap.json (packed with it) pins the install; otherwise the package-lock.json npm writes
    // stays in the archive as the record of exactly what it holds.
    log(`installing the production dependencies of ${pjson.name}@${pjson.version} from the registry`)
    npmOrThrow(['install', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund'], dir)
    npmOrThrow(['ls', '--omit=dev', '--all', '--json'], dir)
    const packages = pruneLinks(join(dir, 'node_modules'))
    smokeRun(dir, staged, bin, pjson.version, work)
    mkdirSync(resolve(options.outDir), { recursive: true })
    const name = `${bin}-v${pjson.version}-${target}.tar.gz`
    const path = join(resolve(options.outDir), name)
    await tar.create({ gzip: true, file: path, cwd: stage, portable: true }, [bin])
    const bytes = readFileSync(path)
    log(`wrote ${name} (${bytes.length} bytes, ${packages} packages)`)
    return {
      name,
      path,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      bytes: bytes.length,
      bin,
      version: pjson.version,
      target,
      packages,
    }
  } finally {
    rmSync(work, { recursive: true, force: true })
  }
}

/**
 * `update` extracts no links, so the archive carries none: `.bin` shims are dropped (nothing runs them), and any
 * other link fails the release. Returns the number of packages.
 */
function pruneLinks(nodeModules: string): number {
  let packages = 0
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.name === '.bin' && dir.endsWith('node_modules')) {
        rmSync(path, { recursive: true, force: true })
        continue
      }
      if (lstatSync(path).isSymbolicLink()) throw new Error(`the staged install contains a link: ${path}`)
      if (!entry.isDirectory()) continue
      const parent = basename(dir)
      if (parent === 'node_modules' ? !entry.name.startsWith('@') : parent.startsWith('@')) packages++
      walk(path)
    }
  }
  if (existsSync(nodeModules)) walk(nodeModules)
  return packages
}

/** The staged tool must start from its own files and report the version being released. */
function smokeRun(dir: string, pjson: ToolPackage, bin: string, version: string, work: string): void {
  const entry = typeof pjson.bin === 'object' ? pjson.bin[bin] : pjson.bin
  if (!entry) throw new Error(`package.json has no bin entry for ${bin}`)
  const home = join(work, 'home')
  mkdirSync(home, { recursive: true })
  const r = spawnSync(process.execPath, [join(dir, entry), '--version', '--format', 'json'], {
    cwd: work,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      HOME: home,
      USERPROFILE: home,
      XDG_CONFIG_HOME: join(home, 'config'),
      XDG_DATA_HOME: join(home, 'data'),
      XDG_CACHE_HOME: join(home, 'cache'),
      XDG_STATE_HOME: join(home, 'state'),
    },
  })
  let reported: unknown
  try {
    reported = (JSON.parse(r.stdout) as { data?: { version?: unknown } }).data?.version
  } catch {}
  if (r.status !== 0 || reported !== version)
    throw new Error(
      `the staged ${bin} does not start as ${version} (exit ${r.status}, reported ${String(reported)}):\n${r.stderr.slice(-2000)}`,
    )
}
