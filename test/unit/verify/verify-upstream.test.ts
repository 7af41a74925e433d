import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT } from '../../support/helpers.js'
import { runInProcess } from '../../support/in-process.js'

// `agentcli verify`'s settings for a tool with an upstream, refused before anything runs: the whole command,
// in-process (it starts no target). What the target does with them is test/cli/verify/verify-upstream.test.ts.
const TOOL = join(ROOT, 'test/fixtures/upstream-tool')

describe('agentcli verify --allow-upstream / --env', () => {
  it.each([
    [['--allow-upstream', 'http://example.com:80'], '--allow-upstream'],
    [['--allow-upstream', 'http://10.0.0.1:80'], '--allow-upstream'],
    [['--allow-upstream', 'http://127.0.0.1'], '--allow-upstream'],
    [['--allow-upstream', 'file:///etc/passwd'], '--allow-upstream'],
    [['--env', 'HOME=/root'], '--env'],
    [['--env', 'https_proxy=http://evil:1'], '--env'],
    [['--env', 'NO_PROXY=*'], '--env'],
    [['--env', 'NOEQUALS'], '--env'],
  ])('refuses %j with E_VALIDATION before running anything', async (flags, param) => {
    const run = await runInProcess(ROOT, ['verify', ...flags, '--', process.execPath, join(TOOL, 'bin/run.js')])
    expect(run.code, run.stdout).toBe(2)
    expect(run.json).toMatchObject({ ok: false, error: { code: 'E_VALIDATION', details: { param } } })
  })
})
