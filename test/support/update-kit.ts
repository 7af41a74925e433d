import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Sandbox, ToolRun } from 'agentcli/testing'
import { delay, HttpResponse, http } from 'msw'
import { afterAll, beforeAll, expect } from 'vitest'
import { env, ROOT } from './helpers.js'
import type { makeInstall } from './release.js'
import { snapshot } from './release.js'
import { confirmUpdate, updateEnv } from './update-world.js'

// The calls the update suites make of one install, the same whether the bin is spawned (runTool) or run in-process
// (runBinInProcess): a suite keeps its own `install` and hands a getter, so each test may make a fresh one.

/** A standalone install of the example (test/support/release.ts). */
export type Install = ReturnType<typeof makeInstall>
/** `runTool` or `runBinInProcess`. */
export type BinRunner = (
  bin: string,
  args: readonly string[],
  options: { env: Record<string, string> },
) => Promise<ToolRun>

/** `tool` runs the install's bin with the update settings; `confirm` is a dry run then its confirm; `expectRefused`
 * confirms, expects the error, and proves the install untouched and still 0.1.0. */
export function updateCalls(run: BinRunner, install: () => Install) {
  const tool = (b: Sandbox, args: string[], extra: Record<string, string> = {}) =>
    run(install().bin, args, { env: updateEnv(b.env, extra) })
  const confirm = (b: Sandbox, extra: Record<string, string> = {}) => confirmUpdate((args) => tool(b, args, extra))
  async function expectRefused(b: Sandbox, code: string, details: Record<string, unknown>, extra = {}) {
    const before = snapshot(install().root)
    const run = await confirm(b, extra)
    expect(env(run).error, run.stdout).toMatchObject({ code, details })
    expect(env(run).error.details).toMatchObject({ binary_replaced: false, current_version: '0.1.0' })
    expect(snapshot(install().root)).toEqual(before)
    expect(env(await tool(b, ['--version'])).data.version).toBe('0.1.0')
    return run
  }
  /** Nothing of 0.2.0 is installed or linked, the skill was not synced, and the tool still runs 0.1.0. */
  async function untouched(b: Sandbox, before: Record<string, string>) {
    expect(snapshot(install().root)).toEqual(before)
    expect(existsSync(join(b.root, '.agents', 'skills', 'tasks'))).toBe(false)
    const version = await tool(b, ['--version'])
    expect(env(version).data.version).toBe('0.1.0')
    expect((await tool(b, ['list'])).code).toBe(0)
  }
  return { tool, confirm, expectRefused, untouched }
}

/** A download of the asset `name` that stalls (20 s, past any deadline a test declares) before its bytes. */
export function stalledAsset(name: string, bytes: Buffer) {
  return http.get(`*/assets/${name}`, async () => {
    await delay(20_000)
    return new HttpResponse(new Uint8Array(bytes))
  })
}

/** A scratch directory for the file's tests (removed after them): trust files and directory sources. */
export function useScratch(name: string) {
  let scratch: string
  beforeAll(() => {
    scratch = mkdtempSync(join(ROOT, `test/fixtures/.tmp-${name}-`))
  })
  afterAll(() => rmSync(scratch, { recursive: true, force: true }))
  return {
    /** The scratch directory. */
    dir: () => scratch,
    /** A file of its own under the scratch dir. */
    file(fileName: string, content: string): string {
      const path = join(scratch, `${Date.now()}-${Math.random().toString(36).slice(2)}-${fileName}`)
      writeFileSync(path, content)
      return path
    },
    /** A directory source (air-gapped machines) whose releases.json labels 0.2.0 with `tag`. */
    directory(tag: string, files: Record<string, Buffer | string>): string {
      const dir = mkdtempSync(join(scratch, 'dir-'))
      for (const [fileName, body] of Object.entries(files)) writeFileSync(join(dir, fileName), body)
      writeFileSync(
        join(dir, 'releases.json'),
        JSON.stringify([{ version: '0.2.0', tag, assets: Object.keys(files).map((n) => ({ name: n })) }]),
      )
      return dir
    },
  }
}
