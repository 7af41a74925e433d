#!/usr/bin/env node
// `agentcli/boot` as one file (dist/boot/start.js): every tool's start imports it first, and as nine ES modules
// the loader resolves, reads and links each one (≈ 2–4 ms of a 30 ms start; docs/performance.md). Only
// the boot's own modules are inlined; anything it imports lazily (the entry, errors) stays a relative import of
// the modules beside it, so the oclif path loads exactly what it did.
import { dirname, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'

const dist = resolve(fileURLToPath(new URL('..', import.meta.url)), 'dist')
const OWN = [
  'boot/index.js',
  'boot/builtin.js',
  'boot/code-cache.js',
  'boot/early-signals.js',
  'boot/engines.js',
  'boot/warm.js',
  'boot/load-bundle.js',
  'boot/bundle-file.js',
  'boot/wrapped-source.js',
]
const INLINED = new Set([...OWN, 'boot/root-path.js'].map((f) => resolve(dist, f)))

await build({
  entryPoints: [resolve(dist, 'boot/index.js')],
  outfile: resolve(dist, 'boot/start.js'),
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node22',
  logLevel: 'warning',
  plugins: [
    {
      name: 'boot-only',
      setup(b) {
        b.onResolve({ filter: /^\./ }, (args) => {
          const path = resolve(dirname(args.importer), args.path)
          if (INLINED.has(path)) return { path }
          // Rewritten relative to the output (dist/boot/), which is where the importer's own directory was or next to it.
          const spec = relative(resolve(dist, 'boot'), path)
          return { path: spec.startsWith('.') ? spec : `./${spec}`, external: true }
        })
      },
    },
  ],
})
