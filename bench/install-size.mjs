// What a tool made by `agentcli init` installs, and the size of agentcli's public surface (docs/performance.md,
// "Install size and public surface"). Packs agentcli as `npm publish` would, installs the tarball into a temp
// directory, makes a tool from it and installs that tool with and without its devDependencies. Third-party
// packages come from npm's cache when it has them. Run `npm run build` first; writes nothing in the repository.
import { execFileSync } from 'node:child_process'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

const ROOT = join(import.meta.dirname, '..')
const WORK = mkdtempSync(join(tmpdir(), 'agentcli-install-size-'))
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
  npm_config_prefer_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
}
const sh = (cwd, command, args) => execFileSync(command, args, { cwd, env, encoding: 'utf8', stdio: 'pipe' })

/** Packages (the lines of `npm ls --all --parseable` below the root) and bytes of node_modules. */
function measure(dir) {
  let listed = ''
  try {
    listed = sh(dir, 'npm', ['ls', '--all', '--parseable'])
  } catch (error) {
    listed = error.stdout // npm ls exits 1 on a missing optional peer; its list is still complete
  }
  const packages = new Set(listed.trim().split('\n').slice(1)).size
  const bytes = Number(sh(dir, 'du', ['-sb', 'node_modules']).split('\t')[0])
  return { packages, mb: Math.round(bytes / 1e5) / 10 }
}

try {
  const tgz = join(WORK, JSON.parse(sh(ROOT, 'npm', ['pack', '--json', '--pack-destination', WORK]))[0].filename)
  const host = join(WORK, 'host')
  mkdirSync(host)
  writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'host', version: '1.0.0', private: true }))
  sh(host, 'npm', ['install', tgz])
  const tool = join(WORK, 'tool')
  sh(host, process.execPath, [join(host, 'node_modules/.bin/agentcli'), 'init', tool, '--agentcli', `file:${tgz}`])
  const production = join(WORK, 'tool-production')
  cpSync(tool, production, { recursive: true })
  sh(production, 'npm', ['install', '--omit=dev'])
  sh(tool, 'npm', ['install'])

  const pjson = JSON.parse(readFileSync(join(host, 'node_modules/agentcli/package.json'), 'utf8'))
  const entries = Object.entries(pjson.exports).filter(([key]) => key !== './package.json')
  let exports = 0
  for (const [, target] of entries)
    exports += Object.keys(await import(pathToFileURL(join(host, 'node_modules/agentcli', target.default)).href)).length

  console.log(
    JSON.stringify(
      {
        tool_omit_dev: measure(production),
        tool_full: measure(tool),
        entry_points: entries.map(([key]) => key),
        runtime_exports: exports,
      },
      null,
      2,
    ),
  )
} finally {
  rmSync(WORK, { recursive: true, force: true })
}
