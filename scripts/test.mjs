#!/usr/bin/env node
// `npm test` after the build: the static checks (`npm run check`: biome, the type-check of the tests, the import
// graph) run beside the suite instead of before it. They are mostly one single-threaded tsc, so on two cores the
// suite's workers take the other core meanwhile. A failed check stops the suite at once (its output is printed, the
// suite ended by its PID) so a typo still fails in seconds; otherwise the suite's exit code is ours.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const check = spawn(npm, ['run', '-s', 'check'], { stdio: ['ignore', 'pipe', 'pipe'] })
let checkOutput = ''
check.stdout.on('data', (chunk) => {
  checkOutput += chunk
})
check.stderr.on('data', (chunk) => {
  checkOutput += chunk
})
// vitest itself, not through npm: the PID to end is the suite's own (its workers leave when it does).
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
const suite = spawn(process.execPath, [vitest, 'run', '--coverage'], { stdio: 'inherit' })

const exited = (child) =>
  new Promise((resolve) => child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0))))
const suiteDone = exited(suite)
const checkCode = await exited(check)
process.stderr.write(`npm run check (beside the suite): ${checkCode === 0 ? 'passed' : 'FAILED'}\n${checkOutput}`)
if (checkCode !== 0) {
  try {
    suite.kill('SIGTERM')
  } catch {}
  await suiteDone
  process.exitCode = checkCode
} else {
  process.exitCode = await suiteDone
}
