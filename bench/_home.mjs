// What every bench shares: a throw-away HOME (XDG data, config and cache inside it; nothing of the developer's
// environment but PATH), optionally the example's store seeded with open tasks, and the median of a sample.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A temporary home (or `home`, when given) and the environment that confines a tool to it. */
export function benchHome(prefix, { tasks = 0, home = mkdtempSync(join(tmpdir(), prefix)) } = {}) {
  const env = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: join(home, 'data'),
    XDG_CONFIG_HOME: join(home, 'config'),
    XDG_CACHE_HOME: join(home, 'cache'),
  }
  if (tasks > 0) {
    mkdirSync(join(home, 'data', 'tasks'), { recursive: true })
    const at = '2026-01-02T03:04:05.000Z'
    const list = Array.from({ length: tasks }, (_, i) => ({
      id: String(i + 1),
      title: `task ${i + 1}`,
      status: 'open',
      created_at: at,
      updated_at: at,
      version: 1,
    }))
    writeFileSync(
      join(home, 'data', 'tasks', 'tasks.json'),
      JSON.stringify({ schema: 1, next_id: tasks + 1, tasks: list }),
    )
  }
  return { home, env }
}

/** The median of a sample (the mean of the middle two for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2
}
