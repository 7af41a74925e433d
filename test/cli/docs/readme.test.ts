import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ROOT, useSandbox } from '../../support/helpers.js'

const README = readFileSync(join(ROOT, 'README.md'), 'utf8')

/** The shell blocks of one README section, in order. */
function shellBlocks(section: string): string[] {
  const start = README.indexOf(`## ${section}\n`)
  expect(start, section).toBeGreaterThanOrEqual(0)
  const end = README.indexOf('\n## ', start + 1)
  const body = README.slice(start, end === -1 ? undefined : end)
  return [...body.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.trim())
}

describe('README', () => {
  const box = useSandbox()

  it('the run command prints one JSON envelope on stdout, no npm banner (so `| jq` works)', () => {
    const [setUp] = shellBlocks('The two commands')
    expect(setUp).toMatch(/^npm ci && npm run build && /)
    const runPart = setUp!.split(' && ').at(-1)!
    expect(runPart).toMatch(/^npm run /)
    // The set-up part is what a fresh clone runs; here the tree is built, so only the run part is run, as typed.
    const result = spawnSync('sh', ['-c', runPart], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...box().env, PATH: `${dirname(process.execPath)}:${process.env.PATH}` },
    })
    expect(result.status, result.stderr).toBe(0)
    expect(result.stdout).not.toMatch(/^>/m)
    const envelope = JSON.parse(result.stdout) as { ok: boolean; data: { items: unknown[] } }
    expect(envelope.ok).toBe(true)
    expect(Array.isArray(envelope.data.items)).toBe(true)
  })

  it('the test command sets up the machine, then npm ci && npm test; CI runs it as typed; a third shows how a new author starts', () => {
    const [, test, start, checkout, tarball] = shellBlocks('The two commands')
    expect(test).toBe('scripts/test-prereqs.sh && npm ci && npm test')
    // CI is the README's command on a fresh machine, not a set-up of its own beside it.
    const ci = readFileSync(join(ROOT, '.ci/run'), 'utf8')
    const commands = ci.split('\n').filter((line) => line && !/^(#|set |cd |export )/.test(line))
    expect(commands).toEqual([test])
    expect(start).toMatch(/^npx agentcli init mytool\b/)
    // Before the registry: the two paths test/cli/scaffold/from-checkout.test.ts and pack-install.test.ts run.
    expect(checkout).toBe('node bin/agentcli.js init ../mytool --agentcli . && cd ../mytool && npm install && npm test')
    expect(tarball).toMatch(
      /^npm pack && node bin\/agentcli\.js init \.\.\/mytool --agentcli \.\/agentcli-[\d.]+\.tgz && cd/,
    )
  })

  it("the release workflow's gate is CI's: .ci/run as root, on PostgreSQL and Redis services", async () => {
    const { parse } = await import('yaml')
    const workflow = parse(readFileSync(join(ROOT, '.github/workflows/release.yml'), 'utf8'))
    const check = workflow.jobs.check
    expect(check.steps.map((s: { run?: string }) => s.run).filter(Boolean)[0]).toBe('sudo -E env "PATH=$PATH" .ci/run')
    expect(check.services.postgres.env).toMatchObject({ POSTGRES_HOST_AUTH_METHOD: 'trust', POSTGRES_USER: 'root' })
    expect(check.services.postgres.ports).toEqual(['5432:5432'])
    expect(check.services.redis.ports).toEqual(['6379:6379'])
  })
})
