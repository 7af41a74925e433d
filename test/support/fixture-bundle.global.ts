import { spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..')

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
  const pjsonPath = join(dir, 'package.json')
  const pjson = JSON.parse(readFileSync(pjsonPath, 'utf8'))
  pjson.agentcli = { ...pjson.agentcli, bundle: true }
  writeFileSync(pjsonPath, JSON.stringify(pjson, null, 2))
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
