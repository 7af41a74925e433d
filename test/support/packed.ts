import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ROOT } from './helpers.js'
import { oncePerRun } from './once-per-run.js'

/**
 * This repository packed exactly as `npm publish` would pack it (`npm pack`), once per test run (the first file
 * that asks packs it, the others wait for it). Shared read-only: a test that edits the package unpacks its own copy.
 */
export function packedAgentcli(): Promise<string> {
  return oncePerRun('agentcli-tarball', (stage) => {
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
    if (run.status !== 0) throw new Error(`npm pack: ${run.error ?? ''}\n${run.stdout}\n${run.stderr}`)
    return join(stage, (JSON.parse(run.stdout) as Array<{ filename: string }>)[0]!.filename)
  })
}
