#!/usr/bin/env node
// Moves the test suite into its layout: test/unit/<concern>/ (in-process), test/cli/<concern>/ (spawns the real
// bin), helpers in test/support/, fixtures where they are (test/fixtures/). Idempotent: re-run it after merging a
// branch that added tests at the top of test/; it moves those too (git mv), rewrites their relative imports and the
// mentions of their old paths in docs, scripts and comments. `--dry-run` prints the moves only.
//
//   node scripts/test-layout.mjs [--dry-run]

import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { basename, dirname, join, posix } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const DRY = process.argv.includes('--dry-run')

/** Helpers (imported by tests, not tests themselves): test/support/. */
const SUPPORT = [
  'attest',
  'copy',
  'fleet',
  'helpers',
  'keyring',
  'mcp-session',
  'npm-provenance',
  'registry',
  'release',
  'render',
  'schema',
  'sigstore',
  'tuf-repo',
  'update-world',
  'upstream',
]

/** Where each known test goes: tier (unit | cli) and concern (mostly a folder of src/). */
const TESTS = {
  // In-process.
  'api-docs': 'unit/docs',
  'batch.unit': 'unit/write',
  'builtins-choice': 'unit/builtins',
  'checksums.unit': 'unit/update',
  'concerns.unit': 'unit/command',
  'confirm.unit': 'unit/confirm',
  docs: 'unit/docs',
  'fleet-location': 'unit/fleet',
  'fs.unit': 'unit/fs',
  'http-client.unit': 'unit/http',
  'http-origin.unit': 'unit/http',
  'mcp.unit': 'unit/mcp',
  'provenance.unit': 'unit/update',
  'redaction.unit': 'unit/output',
  'reference-compact.unit': 'unit/describe',
  'release-specs.unit': 'unit/release',
  'render.unit': 'unit/output',
  'signature.unit': 'unit/update',
  'text-layout.unit': 'unit/output',
  'trust-root.unit': 'unit/update',
  'update-identity.unit': 'unit/update',
  'verify-units': 'unit/verify',
  // The real bin, as a child process.
  'batch-resume': 'cli/write',
  'bundle-ascii': 'cli/build',
  bundle: 'cli/build',
  'code-cache': 'cli/boot',
  'contract-compat': 'cli/contract',
  'contract-deprecation': 'cli/contract',
  'contract-hints': 'cli/contract',
  'contract-input': 'cli/contract',
  'descriptions-split': 'cli/describe',
  engines: 'cli/boot',
  'bundle-chunks': 'cli/boot',
  fcc: 'cli/verify',
  fields: 'cli/output',
  'fleet-confirm': 'cli/fleet',
  'fleet-faults': 'cli/fleet',
  'fleet-jobs': 'cli/fleet',
  'fleet-keys': 'cli/fleet',
  foundation: 'cli/command',
  guide: 'cli/docs',
  help: 'cli/describe',
  'hot-path': 'cli/boot',
  'http-trust': 'cli/http',
  init: 'cli/scaffold',
  'jobs-robust': 'cli/jobs',
  keychain: 'cli/credentials',
  'keyring-helper': 'cli/credentials',
  kinds: 'cli/command',
  'long-work': 'cli/jobs',
  'mcp-differential': 'cli/mcp',
  'mcp-flows': 'cli/mcp',
  'mcp-modern': 'cli/mcp',
  mcp: 'cli/mcp',
  'pack-install': 'cli/scaffold',
  pagination: 'cli/output',
  'process-edges': 'cli/process',
  progress: 'cli/output',
  provenance: 'cli/update',
  readme: 'cli/docs',
  redaction: 'cli/output',
  'reference-compact': 'cli/describe',
  'release-pipeline': 'cli/release',
  'self-description': 'cli/describe',
  settings: 'cli/settings',
  signals: 'cli/process',
  'source-patches': 'cli/build',
  'stream-lines': 'cli/output',
  'text-format': 'cli/output',
  times: 'cli/output',
  'update-robust': 'cli/update',
  'update-trust': 'cli/update',
  update: 'cli/update',
  upstream: 'cli/http',
  'verify-generic': 'cli/verify',
  'verify-mcp': 'cli/verify',
  'verify-state': 'cli/verify',
  verify: 'cli/verify',
  'write-safety': 'cli/write',
  'write-trust': 'cli/write',
}

/** A test this script does not know yet (another branch's): its concern from its name's first word. */
const CONCERN_WORDS = [
  'batch',
  'build',
  'bundle',
  'confirm',
  'contract',
  'credentials',
  'describe',
  'docs',
  'fast',
  'fleet',
  'fs',
  'http',
  'jobs',
  'mcp',
  'output',
  'release',
  'settings',
  'update',
  'verify',
  'write',
]
/** What makes a test a spawn test: it starts the bin (or another process) or drives a tool through a helper. */
const SPAWNS =
  /\b(runTool|spawn|spawnSync|execFile|execFileSync|execSync|onMachine|fixtureOn)\b|\b(tasks|fixture)\(box|from '\.\/(mcp-session|update-world|release|registry)\.js'/

/** The destination (repository-relative, POSIX) of a file at the top of test/, or undefined to leave it. */
function destination(file) {
  const name = basename(file)
  // The type tests (checked by tsc, not run) resolve the package's declarations from here: they stay.
  if (name === 'types.test-d.ts') return undefined
  const stem = name.replace(/\.test\.ts$/, '')
  if (!name.endsWith('.test.ts')) {
    if (!name.endsWith('.ts')) return undefined
    const helper = name.replace(/\.ts$/, '')
    if (!SUPPORT.includes(helper)) console.warn(`note: ${file}: not a test; moved to test/support/ as a helper`)
    return `test/support/${name}`
  }
  const known = TESTS[stem]
  const target = stem.replace(/\.unit$/, '')
  if (known) return `test/${known}/${target}.test.ts`
  const text = readFileSync(join(ROOT, file), 'utf8')
  const tier = stem.endsWith('.unit') || !SPAWNS.test(text) ? 'unit' : 'cli'
  const concern = CONCERN_WORDS.find((w) => target === w || target.startsWith(`${w}-`)) ?? 'misc'
  console.warn(`note: ${file}: not in this script's table; classified ${tier}/${concern} (add it to TESTS)`)
  return `test/${tier}/${concern}/${target}.test.ts`
}

const git = (...args) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' })

/** Every old path → new path, for the files at the top of test/ now and for those moved by an earlier run. */
const top = readdirSync(join(ROOT, 'test')).filter((f) => statSync(join(ROOT, 'test', f)).isFile())
const moves = new Map()
for (const f of top) {
  const to = destination(`test/${f}`)
  if (to) moves.set(`test/${f}`, to)
}
const known = new Map(moves)
for (const helper of SUPPORT) known.set(`test/${helper}.ts`, `test/support/${helper}.ts`)
for (const [stem, place] of Object.entries(TESTS))
  known.set(`test/${stem}.test.ts`, `test/${place}/${stem.replace(/\.unit$/, '')}.test.ts`)

if (moves.size === 0) {
  console.log('nothing to move: the top of test/ holds no test or helper')
  process.exit(0)
}
for (const [from, to] of moves) console.log(`${from} -> ${to}`)
if (DRY) process.exit(0)

/**
 * Where a relative specifier written in `oldFile` points now; unchanged when it names no file of the repository
 * (code a test writes into a temporary tool: `import Probe from './commands/probe.js'` is the tool's, not ours).
 */
function respecify(spec, oldFile, newFile) {
  const target = posix.normalize(posix.join(posix.dirname(oldFile), spec))
  const ts = target.replace(/\.js$/, '.ts')
  const moved = known.get(ts)
  if (!moved && !existsSync(join(ROOT, target)) && !existsSync(join(ROOT, ts))) return spec
  const now = moved ? moved.replace(/\.ts$/, target.endsWith('.js') ? '.js' : '.ts') : target
  let out = posix.relative(posix.dirname(newFile), now)
  if (!out.startsWith('.')) out = `./${out}`
  return out
}

/** Rewrite the relative module specifiers and the repository-root idioms of a file moved from old to new. */
function rewrite(text, oldFile, newFile) {
  const toRoot = posix.relative(posix.dirname(newFile), '.') || '.'
  return (
    text
      .replace(
        /(\bfrom\s+|\bimport\s*\(\s*|\bvi\.(?:mock|doMock)\(\s*|^import\s+)(['"])(\.{1,2}\/[^'"]+)\2/gm,
        (_, head, q, spec) => `${head}${q}${respecify(spec, oldFile, newFile)}${q}`,
      )
      // The repository root, as a declaration of the test's own (`const root = …`), never inside code it writes.
      .replace(
        /^(\s*(?:export\s+)?const\s+\w+\s*=.*)import\.meta\.dirname, '\.\.'\)/gm,
        `$1import.meta.dirname, '${toRoot}')`,
      )
      .replace(
        /^(\s*(?:export\s+)?const\s+\w+\s*=.*)new URL\('\.\.', import\.meta\.url\)/gm,
        `$1new URL('${toRoot}/', import.meta.url)`,
      )
      .replace(
        /^(\s*(?:export\s+)?const\s+\w+\s*=.*)join\(dirname\(fileURLToPath\(import\.meta\.url\)\), '\.\.'\)/gm,
        `$1join(dirname(fileURLToPath(import.meta.url)), '${toRoot}')`,
      )
  )
}

for (const [from, to] of moves) {
  execFileSync('mkdir', ['-p', dirname(join(ROOT, to))])
  git('mv', from, to)
  writeFileSync(join(ROOT, to), rewrite(readFileSync(join(ROOT, to), 'utf8'), from, to))
}

// Mentions of the old paths in prose and comments. Not CHANGELOG.md (its released sections are history), and not the
// files another part of the work owns at the time of writing (the command's run and the boot): their comments are
// fixed when they next change.
const SKIP = [/^CHANGELOG\.md$/, /^src\/(session|entry|command)\.ts$/, /^src\/boot\//, /^test\/fixtures\//]
const tracked = git('ls-files', 'docs', 'scripts', 'src', 'test', 'plugins', 'examples', '.github', '*.md')
  .split('\n')
  .filter((f) => f && /\.(md|ts|mjs|js|yml|json)$/.test(f) && !SKIP.some((s) => s.test(f)))
  .filter((f) => !f.includes('/dist/') && !f.includes('node_modules') && existsSync(join(ROOT, f)))
const mention = [...moves.keys()].sort((a, b) => b.length - a.length)
const pattern = new RegExp(
  `(?<![\\w/.-])(${mention.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})(?![\\w.-])`,
  'g',
)
let touched = 0
for (const f of tracked) {
  const text = readFileSync(join(ROOT, f), 'utf8')
  const next = text.replace(pattern, (m) => moves.get(m))
  if (next !== text) {
    writeFileSync(join(ROOT, f), next)
    touched++
  }
}
// Longer relative paths can push an import past the line width, and import order follows the paths: reformat.
execFileSync(join(ROOT, 'node_modules/.bin/biome'), ['check', '--write', ...moves.values()], {
  cwd: ROOT,
  stdio: 'inherit',
})
console.log(`moved ${moves.size} files; rewrote mentions in ${touched} others`)
console.log('next: npx tsc -p tsconfig.test.json --noEmit && npx vitest list --filesOnly (both tiers listed)')
