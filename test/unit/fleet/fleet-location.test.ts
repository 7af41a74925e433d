import type { Config } from '@oclif/core'
import { afterEach, describe, expect, it } from 'vitest'
import { stateCheck } from '../../../src/fleet/doctor.js'
import { redactUrl, stateLocation } from '../../../src/fleet/location.js'
import { namespaceOf } from '../../../src/fleet/types.js'

/** Just what the state URL resolution reads of an oclif Config. */
function config(state?: unknown): Config {
  return { bin: 'tasks', dataDir: '/tmp/x', pjson: { agentcli: state === undefined ? {} : { state } } } as never
}

afterEach(() => {
  delete process.env.TASKS_STATE_URL
})

describe('choosing the state backend', () => {
  it('unset (or empty) is the files; the env var beats the documented settings key', () => {
    expect(stateLocation(config())).toEqual({ kind: 'file' })
    process.env.TASKS_STATE_URL = ''
    expect(stateLocation(config())).toEqual({ kind: 'file' })
    expect(stateLocation(config({ url: 'redis://h:6379' }))).toMatchObject({
      kind: 'redis',
      source: 'package.json agentcli.state.url',
    })
    process.env.TASKS_STATE_URL = 'postgresql://u@h/db'
    expect(stateLocation(config({ url: 'redis://h:6379' }))).toMatchObject({
      kind: 'postgres',
      source: '$TASKS_STATE_URL',
    })
    process.env.TASKS_STATE_URL = 'rediss://h'
    expect(stateLocation(config()).kind).toBe('redis')
  })

  it('any other scheme is E_CONFIG, never a silent fall-back to files; the password never appears', async () => {
    process.env.TASKS_STATE_URL = 'mysql://u:hunter2@h/db'
    let thrown: unknown
    try {
      stateLocation(config())
    } catch (error) {
      thrown = error
    }
    expect(thrown).toMatchObject({ code: 'E_CONFIG' })
    expect(JSON.stringify((thrown as { details: unknown }).details)).not.toContain('hunter2')
    const check = await stateCheck(config())
    expect(check).toMatchObject({ check: 'state_store', status: 'fail' })
    expect(redactUrl('postgres://u:hunter2@h/db')).toBe('postgres://u:***@h/db')
    expect(redactUrl('not a url')).toBe('<unparsable URL>')
  })

  it('the namespace and lease come off the URL, validated; the rest goes to the driver', () => {
    const ns = namespaceOf('postgres://u@h/db?schema=ops_1&lease_seconds=5&sslmode=require', 'schema', 'tasks')
    expect(ns).toEqual({ driverUrl: 'postgres://u@h/db?sslmode=require', name: 'ops_1', leaseMs: 5000 })
    expect(namespaceOf('redis://h', 'prefix', 'my-tool').name).toBe('agentcli_my_tool')
    for (const bad of ['?schema=Robert%22;drop', '?schema=a-b', '?lease_seconds=1', '?lease_seconds=x'])
      expect(() => namespaceOf(`postgres://h/db${bad}`, 'schema', 'tasks')).toThrow(/not valid/)
  })

  it('doctor passes on the files without touching any store', async () => {
    expect(await stateCheck(config())).toMatchObject({ status: 'pass', fix: null })
  })
})
