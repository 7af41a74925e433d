// The optional peers of agentcli (state-store drivers and queues, the keychain binding, Sigstore, the verifier's
// schema validator): a tool that uses one without installing it gets E_CONFIG naming the one install command.
// The packages are hidden with a resolve hook (test/fixtures/hide-modules.mjs), as if the tool left them out.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { installCommand, isMissing, OPTIONAL_PACKAGES } from '../../../src/runtime/optional-peers.js'
import { env, ROOT, tasks, useSandbox } from '../../support/helpers.js'

const HIDE = join(ROOT, 'test/fixtures/hide-modules.mjs')
// The state URLs below name a closed port: were the driver loaded after all, nothing would be created anywhere.
const hiding = (modules: string[]) => ({ NODE_OPTIONS: `--import=${HIDE}`, HIDDEN_MODULES: modules.join(',') })
const box = useSandbox()

/** Run `code` (an ES module body that prints one JSON line) in a Node with `modules` hidden. */
function inNode(modules: string[], code: string): { code: string; fix: string; missing: string[] } {
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, ...hiding(modules) },
  })
  expect(run.status, run.stderr).toBe(0)
  return JSON.parse(run.stdout)
}
const report = `.catch((e) => console.log(JSON.stringify({ code: e.code, fix: e.details?.fix, missing: e.details?.missing })))`

describe('a missing optional peer', () => {
  it('is an optional peer in package.json (a development tool: not even that), installed for the repository’s tests', () => {
    const pjson = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
    for (const { packages, dev } of Object.values(OPTIONAL_PACKAGES))
      for (const name of packages) {
        expect(pjson.dependencies?.[name], name).toBeUndefined()
        expect(pjson.peerDependencies[name], name).toBe(dev ? undefined : `^${pjson.devDependencies[name]}`)
        expect(pjson.peerDependenciesMeta[name], name).toEqual(dev ? undefined : { optional: true })
        expect(pjson.devDependencies[name], name).toBeDefined()
      }
    // The bundler too: `agentcli-build` loads the tool's own esbuild.
    expect(pjson.peerDependencies.esbuild).toBeUndefined()
  })

  it('a postgres:// state URL without pg: E_CONFIG with `npm install pg pg-boss`, before any connection', async () => {
    const run = await tasks(box(), ['job', 'list'], {
      env: { ...hiding(['pg', 'pg-boss']), TASKS_STATE_URL: 'postgres://root@127.0.0.1:1/test?schema=unused' },
    })
    expect(run.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      details: { reason: 'optional_dependency_missing', missing: ['pg', 'pg-boss'], fix: 'npm install pg pg-boss' },
    })
  })

  it('a redis:// state URL without ioredis: E_CONFIG with `npm install ioredis bullmq`', async () => {
    const run = await tasks(box(), ['job', 'list'], {
      env: { ...hiding(['ioredis', 'bullmq']), TASKS_STATE_URL: 'redis://127.0.0.1:1/0?prefix=unused' },
    })
    expect(run.code).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(env(run).error).toMatchObject({ code: 'E_CONFIG', details: { fix: 'npm install ioredis bullmq' } })
  })

  it('agentcli verify without ajv: E_CONFIG with `npm install --save-dev ajv ajv-formats`', () => {
    const run = spawnSync(
      process.execPath,
      [join(ROOT, 'bin/agentcli.js'), 'verify', '--', process.execPath, join(ROOT, 'examples/tasks/bin/run.js')],
      { cwd: ROOT, encoding: 'utf8', env: { ...process.env, ...hiding(['ajv', 'ajv-formats']) }, timeout: 120_000 },
    )
    expect(run.status, run.stderr).toBe(CORE_ERRORS.E_CONFIG.exit)
    expect(JSON.parse(run.stdout).error).toMatchObject({
      code: 'E_CONFIG',
      details: { fix: 'npm install --save-dev ajv ajv-formats' },
    })
  }, 150_000)

  it('agentcli-build without esbuild: E_CONFIG with `npm install --save-dev esbuild`, before anything is written', () => {
    // A tool that asks for a bundle, beside the repository so that it resolves agentcli; nothing else in it.
    const tool = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-esbuild-'))
    try {
      const commands = { strategy: 'explicit', target: './dist/index.js', identifier: 'COMMANDS' }
      writeFileSync(
        join(tool, 'package.json'),
        JSON.stringify({
          name: 'nobundler',
          version: '1.0.0',
          type: 'module',
          oclif: { commands },
          agentcli: { bundle: true },
        }),
      )
      const got = inNode(
        ['esbuild'],
        `const { bundleTool } = await import('./dist/build/bundle.js')
await bundleTool(${JSON.stringify(tool)}).then(() => console.log(JSON.stringify({ code: 'bundled' })))${report}`,
      )
      expect(got).toEqual({ code: 'E_CONFIG', fix: 'npm install --save-dev esbuild', missing: ['esbuild'] })
      expect(readdirSync(tool)).toEqual(['package.json'])
    } finally {
      rmSync(tool, { recursive: true, force: true })
    }
  })

  it('the keychain binding: E_CONFIG with `npm install @napi-rs/keyring`, never a silent fallback to a file', () => {
    const got = inNode(
      ['@napi-rs/keyring'],
      `const { Credentials } = await import('./dist/credentials/credentials.js')
const credentials = new Credentials({ bin: 'hidden', configDir: ${JSON.stringify(join(box().root, 'config'))}, mode: 'auto', refreshable: false, warn: () => {} })
await credentials.save({ account: 'a', access_token: 't', refresh_token: null, expires_at: null, scopes: [] })
  .then(() => console.log(JSON.stringify({ code: 'saved' })))${report}`,
    )
    expect(got).toEqual({ code: 'E_CONFIG', fix: 'npm install @napi-rs/keyring', missing: ['@napi-rs/keyring'] })
  })

  it('Sigstore, when an update is verified: E_CONFIG with the Sigstore install command', () => {
    const got = inNode(
      ['@sigstore/bundle', '@sigstore/protobuf-specs', '@sigstore/tuf', '@sigstore/verify'],
      `const { verifyBundle } = await import('./dist/update/signature.js')
await verifyBundle({ bundle: {}, artifact: Buffer.from(''), identity: {}, trustedRoot: {} })${report}`,
    )
    expect(got.code).toBe('E_CONFIG')
    expect(got.fix).toBe(installCommand('update'))
    expect(got.fix).toBe('npm install @sigstore/bundle @sigstore/protobuf-specs @sigstore/tuf @sigstore/verify')
  })

  it('only a missing package itself counts: a failure inside an installed one is not hidden behind E_CONFIG', () => {
    const nested = Object.assign(new Error("Cannot find package 'left-pad' imported from /x/node_modules/pg/a.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    })
    expect(isMissing(nested, 'postgres')).toBe(false)
    const own = Object.assign(new Error("Cannot find package 'pg' imported from /x/dist/fleet/postgres.js"), {
      code: 'ERR_MODULE_NOT_FOUND',
    })
    expect(isMissing(own, 'postgres')).toBe(true)
    expect(isMissing(new Error("Cannot find package 'pg'"), 'postgres')).toBe(false)
  })
})
