#!/usr/bin/env node
// Writes oclif.manifest.json for each package dir given, so oclif imports only the command being run.
// Uses @oclif/core's own Plugin loader (what `oclif manifest` does) without the heavy `oclif` CLI package.
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { Plugin } from '@oclif/core'

for (const dir of process.argv.slice(2)) {
  const root = resolve(dir)
  const plugin = new Plugin({ root, type: 'core', ignoreManifest: true, errorOnManifestCreate: true, isRoot: true })
  await plugin.load()
  const manifest = JSON.parse(JSON.stringify(plugin.manifest))
  await writeFile(resolve(root, 'oclif.manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  process.stderr.write(`manifest: ${dir}: ${Object.keys(manifest.commands).length} commands\n`)
}
