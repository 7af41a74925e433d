import { spawnSync } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { oncePerRun } from './once-per-run.js'

/**
 * What npm needs of this machine to reach its registry, and nothing else of the caller's environment: the extra CA
 * (a TLS-inspecting proxy's, else SELF_SIGNED_CERT_IN_CHAIN), the proxy variables and npm's own network settings.
 */
const NETWORK_SETTINGS =
  /^(NODE_EXTRA_CA_CERTS|SSL_CERT_FILE|SSL_CERT_DIR|https?_proxy|no_proxy|all_proxy|npm_config_(registry|cafile|ca|strict_ssl|proxy|https_proxy|noproxy|cache|userconfig|globalconfig))$/i
const networkEnv = () =>
  Object.fromEntries(
    Object.entries(process.env).filter((e): e is [string, string] => NETWORK_SETTINGS.test(e[0]) && e[1] !== undefined),
  )

/**
 * A real Node 22 (the other line `engines` allows; the suite runs on 24): npm's `node` package (a few seconds from
 * npm's cache, else from the registry), installed once per test run and shared read-only. Resolves to the path of
 * its `node`; rejects when it cannot be had or is not a 22: a supported Node left untested must be red, never a skip.
 */
export function getNode22(): Promise<string> {
  return oncePerRun('node22', installNode22)
}

function installNode22(dir: string): string {
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'node22', private: true }))
  const install = spawnSync('npm', ['install', 'node@22', '--no-save', '--no-audit', '--no-fund'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 150_000,
    killSignal: 'SIGKILL',
    env: {
      ...networkEnv(),
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? homedir(),
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    },
  })
  if (install.status !== 0)
    throw new Error(`npm install node@22: ${install.error ?? `exit ${install.status}`}\n${install.stderr}`)
  const node = join(dir, 'node_modules/.bin/node')
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? ''
  if (!/^v22\./.test(version)) throw new Error(`npm install node@22 gave ${JSON.stringify(version)}`)
  return node
}
