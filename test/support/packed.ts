import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { inject } from 'vitest'
import { ROOT } from './helpers.js'

const WAIT_MS = 180_000

/**
 * This repository packed exactly as `npm publish` would pack it (`npm pack`), once per test run: the first file
 * that asks packs it into the run's directory (test/support/pack-dir.global.ts) under a lock, the others wait for
 * it. Shared read-only: a test that edits the package unpacks its own copy.
 */
export async function packedAgentcli(): Promise<string> {
  const dir = inject('agentcliPackDir') ?? mkdtempSync(join(tmpdir(), 'agentcli-packed-'))
  const done = join(dir, 'tarball')
  const failed = join(dir, 'failed')
  const end = Date.now() + WAIT_MS
  let mine = false
  try {
    mkdirSync(join(dir, 'lock'))
    mine = true
  } catch {}
  if (mine) {
    const stage = mkdtempSync(join(dir, 'stage-'))
    const run = spawnSync('npm', ['pack', '--json', '--pack-destination', stage], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
      env: {
        PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
        HOME: stage,
        npm_config_cache: process.env.npm_config_cache ?? join(process.env.HOME ?? tmpdir(), '.npm'),
        npm_config_update_notifier: 'false',
      },
    })
    if (run.status !== 0) {
      writeFileSync(failed, `npm pack: ${run.error ?? ''}\n${run.stdout}\n${run.stderr}`)
      throw new Error(readFileSync(failed, 'utf8'))
    }
    const filename = (JSON.parse(run.stdout) as Array<{ filename: string }>)[0]!.filename
    renameSync(join(stage, filename), join(dir, filename))
    // Written last: a waiter that sees it finds the tarball complete.
    writeFileSync(done, filename)
  }
  for (;;) {
    if (existsSync(done)) return join(dir, readFileSync(done, 'utf8'))
    if (existsSync(failed)) throw new Error(readFileSync(failed, 'utf8'))
    if (Date.now() > end) throw new Error(`no agentcli tarball in ${dir} after ${WAIT_MS} ms`)
    await new Promise((r) => setTimeout(r, 100))
  }
}
