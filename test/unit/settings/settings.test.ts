import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { envelopeViolations } from 'agentcli/testing'
import { describe, expect, it } from 'vitest'
import { CORE_ERRORS } from '../../../src/errors/catalogue.js'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * Settings in-process (test/support/in-process.ts); what needs the process's working directory:
 * test/cli/settings/settings.test.ts.
 */
const box = useSandbox()
const CONFIG_EXIT = CORE_ERRORS.E_CONFIG.exit

function configFile(content: string): string {
  const dir = join(box().env.XDG_CONFIG_HOME!, 'tasks')
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'config.json')
  writeFileSync(path, content)
  return path
}

describe('environment settings are checked with the catalogue, at once', () => {
  it.each([
    ['TASKS_HTTP_RETRIES', 'abc', { type: 'integer', min: 0, max: 10 }],
    ['TASKS_HTTP_RETRIES', '-1', { type: 'integer', min: 0, max: 10 }],
    ['TASKS_HTTP_RETRIES', '1e3', { type: 'integer', min: 0, max: 10 }],
    ['TASKS_HTTP_TIMEOUT_MS', '99999999999999', { type: 'integer', min: 1, max: 600000 }],
    ['TASKS_HTTP_TIMEOUT_MS', '0', { type: 'integer', min: 1, max: 600000 }],
    ['TASKS_HTTP_TIMEOUT_MS', '2.5', { type: 'integer', min: 1, max: 600000 }],
    ['TASKS_KEYCHAIN_TIMEOUT_MS', '99', { type: 'integer', min: 100, max: 120000 }],
    ['TASKS_CREDENTIAL_STORE', 'vault', ['auto', 'keychain', 'file']],
    ['TASKS_PROFILE', '../prod', expect.stringContaining('letters')],
    ['TASKS_UPDATE_API_URL', 'not a url', 'an http:// or https:// URL'],
    ['TASKS_UPDATE_CHANNEL', 'Stable Channel', expect.stringContaining('channel')],
    ['TASKS_DATA_DIR', 'relative/data', 'an absolute path'],
    ['AGENTCLI_CODE_CACHE', 'off', ['0', '1']],
    ['AGENTCLI_NO_BUNDLE', 'yes', ['0', '1']],
    ['AGENTCLI_CODE_CACHE_DIR', 'cache-here', 'an absolute path'],
  ])('%s=%s is E_CONFIG with allowed and got', async (name, value, allowed) => {
    const started = performance.now()
    // whoami talks to the upstream through the HTTP settings: before, `abc` retried forever.
    const run = await tasks(box(), ['whoami'], {
      env: { [name]: value, TASKS_TOKEN: 't0k', TASKS_API_URL: 'http://127.0.0.1:9' },
    })
    expect(performance.now() - started).toBeLessThan(5000)
    expect(run.code).toBe(CONFIG_EXIT)
    expect(envelopeViolations(run.stdout, run.code)).toEqual([])
    expect(env(run).error).toMatchObject({
      code: 'E_CONFIG',
      retryable: false,
      details: { setting: name, got: value, allowed, fix: expect.stringContaining(`unset ${name}`) },
    })
  })

  it('a bad setting is reported whatever the command, before it runs, and a write refused this way is audited', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    const list = await tasks(box(), ['list'], { env: { TASKS_HTTP_RETRIES: 'many' } })
    expect(env(list).error.code).toBe('E_CONFIG')
    const create = await tasks(box(), ['create', '--title', 'x', '--dry-run'], { env: { TASKS_PROFILE: 'a b' } })
    expect(env(create).error).toMatchObject({ code: 'E_CONFIG', details: { setting: 'TASKS_PROFILE' } })
    // Nothing was minted: no secret was created for a call that never ran; the refusal is audited.
    expect(existsSync(join(box().env.XDG_CONFIG_HOME!, 'tasks', 'confirm.secret'))).toBe(false)
    const audit = readFileSync(join(box().env.XDG_DATA_HOME!, 'tasks', 'audit.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
    expect(audit.map((l) => JSON.parse(l))).toEqual([
      expect.objectContaining({ command: 'create', kind: 'write', mode: 'refused', result_code: 'E_CONFIG' }),
    ])
  })

  it('reference lists E_CONFIG for every command: any call can meet a bad setting', async () => {
    const ref = env(await tasks(box(), ['reference'])).data
    for (const c of ref.commands) expect(c.errors, c.path).toContain('E_CONFIG')
  })

  it('good values are accepted, and an empty variable counts as unset', async () => {
    seed(box(), [{ id: '1', title: 'first' }])
    for (const extra of [
      { TASKS_HTTP_RETRIES: '0', TASKS_HTTP_TIMEOUT_MS: '600000' },
      { TASKS_HTTP_RETRIES: '10', TASKS_PROFILE: 'staging-eu.1', TASKS_CREDENTIAL_STORE: 'file' },
      { TASKS_HTTP_RETRIES: '', TASKS_UPDATE_API_URL: 'https://ghe.example.com/api/v3/' },
    ]) {
      const run = await tasks(box(), ['list'], { env: extra })
      expect(run.code, `${JSON.stringify(extra)}: ${run.stdout}`).toBe(0)
    }
    const context = await tasks(box(), ['context'], { env: { TASKS_PROFILE: 'staging-eu.1' } })
    expect(env(context).data.environment).toBe('staging-eu.1')
  })
})

describe("a tool's own settings: env var or config.json key, checked the same way", () => {
  it('TASKS_API_URL that is not an http(s) URL is E_CONFIG naming the variable', async () => {
    const run = await tasks(box(), ['whoami'], { env: { TASKS_API_URL: 'ftp://example.com', TASKS_TOKEN: 't' } })
    expect(run.code).toBe(CONFIG_EXIT)
    expect(env(run).error.details).toMatchObject({ setting: 'TASKS_API_URL', got: 'ftp://example.com' })
  })

  it('api_url of the wrong type in config.json is E_CONFIG naming the file and key', async () => {
    const path = configFile('{"api_url": 42}')
    const run = await tasks(box(), ['sync', '--dry-run'], { env: { TASKS_TOKEN: 't' } })
    expect(run.code).toBe(CONFIG_EXIT)
    expect(env(run).error.details).toMatchObject({ setting: `${path}: api_url`, got: 42 })
  })

  it('the variable wins over the file; a corrupt file is E_IO naming it', async () => {
    configFile('{"api_url": "not a url"}')
    const fromEnv = await tasks(box(), ['whoami'], {
      env: { TASKS_API_URL: 'http://127.0.0.1:9', TASKS_TOKEN: 't', TASKS_HTTP_RETRIES: '0' },
    })
    expect(env(fromEnv).error.code).toBe('E_NETWORK')
    const path = configFile('{"api_url": ')
    const corrupt = await tasks(box(), ['whoami'], { env: { TASKS_TOKEN: 't' } })
    expect(env(corrupt).error).toMatchObject({ code: 'E_IO', details: { path } })
  })
})
