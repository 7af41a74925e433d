import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { env, useSandbox } from '../../support/helpers.js'
import { fixtureInProcess } from '../../support/in-process.js'

const box = useSandbox()

/** Resolves once `path` exists (polled; the run under test is in this process). */
async function appeared(path: string): Promise<void> {
  const deadline = Date.now() + 15_000
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

describe("a confirmed write its caller interrupts during the plan (the session's signal, asked without making it)", () => {
  it('stops at the commit point: E_INTERRUPTED, nothing applied, the token still usable', async () => {
    const b = box()
    const dir = b.env.HOME!
    const marker = join(dir, 'marker')
    const planGo = join(dir, 'plan-go')
    const args = ['slow-note', '--marker', marker, '--go', join(dir, 'go'), '--plan-go', planGo]
    writeFileSync(join(dir, 'go'), '')
    writeFileSync(planGo, '')
    const dry = await fixtureInProcess(b, [...args, '--dry-run'])
    expect(dry.code, dry.stdout).toBe(0)
    const token = env(dry).data.confirm_token as string
    rmSync(planGo)
    rmSync(`${planGo}.planning`)

    const caller = new AbortController()
    const run = fixtureInProcess(b, [...args, '--confirm', token], { signal: caller.signal })
    await appeared(`${planGo}.planning`)
    caller.abort()
    writeFileSync(planGo, '')
    const stopped = await run
    expect(stopped.code, stopped.stdout).toBe(130)
    expect(env(stopped).error).toMatchObject({ code: 'E_INTERRUPTED', details: { signal: 'SIGINT' } })
    expect(existsSync(marker)).toBe(false)

    const retry = await fixtureInProcess(b, [...args, '--confirm', token])
    expect(retry.code, retry.stdout).toBe(0)
    expect(existsSync(marker)).toBe(true)
  })
})
