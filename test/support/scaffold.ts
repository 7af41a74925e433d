import { type SpawnSyncReturns, spawnSync } from 'node:child_process'
import { lstatSync, readdirSync, realpathSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { expect } from 'vitest'
import { ROOT } from './helpers.js'

/** A new author's shell: the environment the journey's commands run in, and `sh` to run one. */
export type AuthorShell = {
  env: Record<string, string>
  /** Run `command` in `cwd`, killed after `timeout` ms. */
  sh(cwd: string, command: string, args: string[], timeout?: number): SpawnSyncReturns<string>
}

/**
 * A new author's shell for the scaffold's journeys (test/cli/scaffold/pack-install.test.ts, from-checkout.test.ts):
 * a minimal environment with its own HOME, so nothing from the developer's npm configuration or the test runner's
 * npm_* leaks in. Third-party packages come from npm's cache when it has them.
 */
export function authorShell(home: string): AuthorShell {
  const env = {
    PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
    HOME: home,
    npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
    npm_config_prefer_offline: 'true',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
    npm_config_update_notifier: 'false',
    NO_COLOR: '1',
    // The extra CA this machine may need to reach the registry, when it is set.
    ...Object.fromEntries(
      ['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE']
        .filter((name) => process.env[name])
        .map((name) => [name, process.env[name]!]),
    ),
  }
  const sh = (cwd: string, command: string, args: string[], timeout = 180_000) =>
    spawnSync(command, args, {
      cwd,
      env,
      encoding: 'utf8',
      timeout,
      killSignal: 'SIGKILL',
      stdio: ['ignore', 'pipe', 'pipe'],
    })
  return { env, sh }
}

/** Its stdout, once it ran and exited 0 (else the test fails with what it printed). */
export function ok(run: SpawnSyncReturns<string>, what: string): string {
  expect(run.error, what).toBeUndefined()
  expect(run.status, `${what}\n${run.stdout}\n${run.stderr}`).toBe(0)
  return run.stdout
}

/** Every symlink under `dir` whose target lies in the checkout: an install that still leans on the repository. */
export function linksIntoCheckout(dir: string): string[] {
  const found: string[] = []
  const checkout = realpathSync(ROOT)
  const walk = (path: string) => {
    const stat = lstatSync(path)
    if (stat.isSymbolicLink()) {
      let target = ''
      try {
        target = realpathSync(path)
      } catch {
        return
      }
      if (target === checkout || target.startsWith(`${checkout}/`)) found.push(`${path} -> ${target}`)
    } else if (stat.isDirectory()) for (const name of readdirSync(path)) walk(join(path, name))
  }
  walk(dir)
  return found
}
