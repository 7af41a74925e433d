/**
 * A child process of `agentcli-build` (`writeHelpMemo`): `node help-render.js <bundle> <root> <out> <id>…` loads the
 * tool's fresh bundle once and asks it, in this process, for each command's `--help`, writing to `out` a JSON array
 * of `[id, exit code, stdout, stderr]`. Its stdout is the parent's pipe, so oclif renders as it does off a terminal;
 * one process for every command instead of one per command (a tool of 1000 commands).
 */
import { writeFileSync } from 'node:fs'
import { loadBundle } from '../boot/load-bundle.js'

const [bundle, root, out, ...ids] = process.argv.slice(2)
if (!bundle || !root || !out) throw new Error('usage: help-render.js <bundle> <root> <out> <id>…')
const loaded = loadBundle(bundle)
if (!loaded) throw new Error(`cannot load ${bundle}`)
const results: [string, number, string, string][] = []
for (const id of ids) {
  const chunks: Buffer[] = []
  let stderr = ''
  const code = await (loaded.run as unknown as (root: string, options: object) => Promise<number>)(root, {
    argv: [...id.split(':'), '--help'],
    bundle,
    io: {
      stdout: (chunk: string | Uint8Array) => void chunks.push(Buffer.from(chunk)),
      stderr: (text: string) => {
        stderr += text
      },
      env: { ...process.env },
    },
  })
  results.push([id, code, Buffer.concat(chunks).toString('utf8'), stderr])
}
writeFileSync(out, JSON.stringify(results))
