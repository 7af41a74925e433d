import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { editJson } from './copy.js'
import { ROOT } from './helpers.js'

/**
 * The spawn tier's global setup: the fixture CLI (test/fixtures/cli) bundled once per run, in a copy inside the
 * repository (so `agentcli` resolves from the root node_modules), named to the tests by `AGENTCLI_TEST_FIXTURE_BIN`
 * (test/support/helpers.ts `FIXTURE_BIN`; the workers start after this and inherit it). From its modules, each of
 * its runs cost 350-500 ms of CPU (some 500 ES modules through Node's loader), bundled 70-90 ms, and the tier starts
 * it about 250 times. The source stays unbundled: the unit tier runs it in-process, and tests that copy and edit it
 * get its modules, never a bundle built before their edit.
 */
export default function setup(): () => void {
  if (process.env.AGENTCLI_TEST_FIXTURE_BIN) return () => {}
  const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-fixture-'))
  cpSync(join(ROOT, 'test/fixtures/cli'), dir, { recursive: true })
  editJson(join(dir, 'package.json'), (pjson) => {
    pjson.agentcli = { ...(pjson.agentcli as object), bundle: true }
  })
  const build = spawnSync(process.execPath, [join(ROOT, 'bin/agentcli-build.js'), dir], { encoding: 'utf8' })
  if (build.status !== 0) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`agentcli-build of the fixture CLI failed (${build.status}): ${build.stderr}`)
  }
  process.env.AGENTCLI_TEST_FIXTURE_BIN = join(dir, 'bin/run.js')
  return () => {
    rmSync(dir, { recursive: true, force: true })
    delete process.env.AGENTCLI_TEST_FIXTURE_BIN
  }
}
