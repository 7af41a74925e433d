import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { editJson } from './copy.js'
import { ROOT, TASKS_BIN } from './helpers.js'

let cold: { dir: string; bin: string; path: string } | undefined

/**
 * For a file whose servers are not about the warm pool: while its tests run, `tool mcp` of the example (the
 * sessions of mcp-session.ts, the servers of mcp-http.ts, and whoever asks {@link tasksServer}) is a copy of
 * examples/tasks, made once for the file, with `agentcli.mcp.warm_processes` 0. A server then starts no process
 * ahead of its calls (two per server, and one more after every call, by default): each call starts its own, as a
 * cold start does. Its PATH names the copy `tasks`, so the next steps its calls print are the example's.
 */
export function useColdTasks(): void {
  beforeAll(() => {
    const dir = mkdtempSync(join(ROOT, 'test/fixtures/.tmp-cold-'))
    cpSync(join(ROOT, 'examples/tasks'), join(dir, 'tasks'), {
      recursive: true,
      filter: (p) => !p.includes('node_modules'),
    })
    editJson(join(dir, 'tasks/package.json'), (pkg) => {
      const agentcli = pkg.agentcli as Record<string, unknown>
      agentcli.mcp = { ...(agentcli.mcp as object), warm_processes: 0 }
    })
    const bin = join(dir, 'tasks/bin/run.js')
    mkdirSync(join(dir, 'path'))
    symlinkSync(bin, join(dir, 'path/tasks'))
    cold = { dir, bin, path: join(dir, 'path') }
  })
  afterAll(() => {
    if (cold) rmSync(cold.dir, { recursive: true, force: true })
    cold = undefined
  })
}

/** The bin `tool mcp` of the example runs from, and what its environment needs: the copy while one is in use. */
export function tasksServer(): { bin: string; env: Record<string, string> } {
  if (!cold) return { bin: TASKS_BIN, env: {} }
  return { bin: cold.bin, env: { PATH: `${cold.path}${delimiter}${process.env.PATH ?? ''}` } }
}
