import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { NOTICE_CACHE_FILE } from '../../../src/update/notice-cache.js'
import {
  CHECK_FAILURE_FILE,
  checkedSource,
  RECENT_CHECK_MS,
  RECENT_FAILURE_MS,
  recentCheck,
} from '../../../src/update/recent-check.js'

// What doctor's update check may answer without the network: a recent check of the same source and channel.
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})
const NOW = Date.parse('2026-12-02T12:00:00.000Z')
const at = (msAgo: number) => new Date(NOW - msAgo).toISOString()
const where = { source: 'github:o/r@https://api.github.com/', channel: 'stable', version: '0.1.0' }
const newer = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true }) > 0

function cacheDir(notice?: Record<string, unknown>, failure?: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'agentcli-recent-'))
  dirs.push(dir)
  if (notice) writeFileSync(join(dir, NOTICE_CACHE_FILE), JSON.stringify(notice))
  if (failure) writeFileSync(join(dir, CHECK_FAILURE_FILE), JSON.stringify(failure))
  return dir
}
const notice = (over: Record<string, unknown> = {}) => ({
  latest_version: '0.1.0',
  checked_at: at(60_000),
  install_method: 'standalone',
  recommended_command: null,
  release_url: null,
  severity: 'info',
  source: where.source,
  channel: where.channel,
  ...over,
})
const failure = (over: Record<string, unknown> = {}) => ({
  source: where.source,
  channel: where.channel,
  checked_at: at(10_000),
  message: 'cannot resolve the host',
  fix: 'check the network',
  ...over,
})

describe('recentCheck', () => {
  it('answers from a success of the same source and channel within its window', () => {
    expect(recentCheck(cacheDir(notice()), where, newer, NOW)).toMatchObject({ ok: true, checked_at: at(60_000) })
  })

  it.each([
    ['older than the window', { checked_at: at(RECENT_CHECK_MS) }],
    ['ahead of the clock', { checked_at: at(-1000) }],
    ['another source', { source: 'github:o/r@http://127.0.0.1:9/' }],
    ['another channel', { channel: 'beta' }],
    ['no source recorded (an older cache)', { source: undefined }],
    ['newer but no command to update (written for another version)', { latest_version: '0.2.0' }],
    ['a command but nothing newer', { recommended_command: 'tasks update --dry-run' }],
  ])('sends doctor to the network for a success %s', (_, over) => {
    expect(recentCheck(cacheDir(notice(over)), where, newer, NOW)).toBeUndefined()
  })

  it('answers from a network failure of the last minute only', () => {
    expect(recentCheck(cacheDir(undefined, failure()), where, newer, NOW)).toMatchObject({ ok: false })
    expect(recentCheck(cacheDir(undefined, failure({ checked_at: at(RECENT_FAILURE_MS) })), where, newer, NOW)).toBe(
      undefined,
    )
    expect(recentCheck(cacheDir(undefined, failure({ source: 'dir:/x' })), where, newer, NOW)).toBeUndefined()
    expect(recentCheck(cacheDir(undefined, failure({ fix: 5 })), where, newer, NOW)).toBeUndefined()
  })

  it('takes the later of a success and a failure', () => {
    const dir = cacheDir(notice({ checked_at: at(5_000) }), failure({ checked_at: at(20_000) }))
    expect(recentCheck(dir, where, newer, NOW)).toMatchObject({ ok: true })
    const other = cacheDir(notice({ checked_at: at(30_000) }), failure({ checked_at: at(20_000) }))
    expect(recentCheck(other, where, newer, NOW)).toMatchObject({ ok: false })
  })
})

describe('checkedSource', () => {
  it('names a GitHub repository with its API, a mirror by URL, a directory by absolute path', () => {
    const github = { source: 'github', repository: 'o/r', github_api: 'https://api.github.com/' }
    expect(checkedSource(github)).toBe('github:o/r@https://api.github.com/')
    expect(checkedSource({ ...github, github_api: 'https://ghe.example/api/v3/' })).not.toBe(checkedSource(github))
    expect(checkedSource({ ...github, source: 'https://mirror.example/releases' })).toBe(
      'https://mirror.example/releases',
    )
    expect(checkedSource({ ...github, source: 'releases' })).toBe(`dir:${join(process.cwd(), 'releases')}`)
  })

  it('never keeps a credential of a URL (the key is written to a cache others may read)', () => {
    const github = {
      source: 'github',
      repository: 'o/r',
      github_api: 'https://u:s3cret@ghe.example/api/?t=s3cret#s3cret',
    }
    expect(checkedSource(github)).toBe('github:o/r@https://ghe.example/api/')
    expect(checkedSource({ ...github, source: 'https://u:s3cret@mirror.example/rel?token=s3cret' })).toBe(
      'https://mirror.example/rel',
    )
    expect(checkedSource({ ...github, github_api: 'not a url s3cret' })).not.toContain('s3cret')
  })
})
