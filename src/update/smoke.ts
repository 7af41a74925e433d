import { access, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { runBounded } from './_child.js'
import { integrityError } from './errors.js'

function refuse(check: string, message: string, details: Record<string, unknown> = {}) {
  return integrityError('release_broken', `the release cannot start: ${message}`, {
    stage: 'smoke_test',
    check,
    ...details,
  })
}

/**
 * Prove a staged version starts before anything points at it: its package.json names the release's version,
 * it has `bin/run.js`, and `run.js --version` answers that version within `timeoutMs`. A correctly signed
 * release that fails any of these is refused (`E_INTEGRITY`, `release_broken`), so the switch never happens.
 */
export async function smokeTest(
  versionDir: string,
  expected: string,
  options: { timeoutMs: number; signal: AbortSignal },
): Promise<void> {
  let declared: unknown
  try {
    declared = (JSON.parse(await readFile(join(versionDir, 'package.json'), 'utf8')) as { version?: unknown }).version
  } catch {
    throw refuse('package_json', 'it has no readable package.json')
  }
  if (declared !== expected)
    throw refuse('package_version', `its package.json says version ${String(declared)}, the release is ${expected}`, {
      expected_version: expected,
      got_version: declared ?? null,
    })
  const bin = join(versionDir, 'bin', 'run.js')
  try {
    await access(bin)
  } catch {
    throw refuse('bin_missing', 'it has no bin/run.js')
  }
  // --format json explicitly: a person's <BIN>_FORMAT=text default must not make a good release look broken.
  const run = await runBounded(process.execPath, [bin, '--version', '--format', 'json'], {
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    cwd: versionDir,
  })
  if (run.timed_out)
    throw refuse('smoke_run', `"--version" did not answer within ${options.timeoutMs} ms`, {
      timeout_ms: options.timeoutMs,
    })
  let reported: unknown
  try {
    reported = (JSON.parse(run.stdout) as { data?: { version?: unknown } }).data?.version
  } catch {}
  if (run.code !== 0 || reported !== expected)
    throw refuse('smoke_run', `"--version" exited ${run.code} reporting ${String(reported ?? 'nothing')}`, {
      expected_version: expected,
      got_version: reported ?? null,
      exit_code: run.code,
      stderr: run.stderr.slice(-500),
    })
}
