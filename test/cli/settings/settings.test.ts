import { mkdirSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, tasks, useSandbox } from '../../support/helpers.js'

/*
 * Settings where the process's working directory matters (nothing written where the tool was run). The rest runs
 * in-process: test/unit/settings/settings.test.ts.
 */
const box = useSandbox()

describe('directory settings', () => {
  it('a relative data dir or code-cache dir is E_CONFIG, and nothing is written where the tool was run', async () => {
    const cwd = join(box().root, 'cwd')
    mkdirSync(cwd)
    for (const extra of [{ TASKS_DATA_DIR: 'data' }, { AGENTCLI_CODE_CACHE_DIR: 'cache' }]) {
      const run = await tasks(box(), ['create', '--title', 'x'], { env: extra, cwd })
      expect(env(run).error, JSON.stringify(extra)).toMatchObject({
        code: 'E_CONFIG',
        details: { allowed: 'an absolute path' },
      })
      expect(readdirSync(cwd)).toEqual([])
    }
  })
})
