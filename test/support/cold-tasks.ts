import { cpSync, mkdirSync, symlinkSync } from 'node:fs'
import { delimiter, join } from 'node:path'
import { afterAll, beforeAll } from 'vitest'
import { editJson } from './copy.js'
import { ROOT, TASKS_BIN } from './helpers.js'
import { oncePerRun } from './once-per-run.js'

let cold: { bin: string; path: string } | undefined

/**
 * For a file whose servers are not about the warm pool: while its tests run, `tool mcp` of the example (the
 * sessions of mcp-session.ts, the servers of mcp-http.ts, and whoever asks {@link tasksServer}) is a copy of
 * examples/tasks with `agentcli.mcp.warm_processes` 0. A server then starts no process ahead of its calls (two per
 * server, and one more after every call, by default): each call starts its own, as a cold start does. Its PATH names
 * the copy `tasks`, so the next steps its calls print are the example's. One copy per test run, shared read-only by
 * the files that ask (test/support/once-per-run.ts): a copy per file compiled its bundle's code cache afresh in
 * each (a bundle's cache is keyed by its path), and its MCP server's modules with it.
 */
export function useColdTasks(): void {
  beforeAll(async () => {
    const dir = await oncePerRun('cold-tasks', (stage) => {
      cpSync(join(ROOT, 'examples/tasks'), join(stage, 'tasks'), {
        recursive: true,
        filter: (p) => !p.includes('node_modules'),
      })
      editJson(join(stage, 'tasks/package.json'), (pkg) => {
        const agentcli = pkg.agentcli as Record<string, unknown>
        agentcli.mcp = { ...(agentcli.mcp as object), warm_processes: 0 }
      })
      mkdirSync(join(stage, 'path'))
      symlinkSync(join(stage, 'tasks/bin/run.js'), join(stage, 'path/tasks'))
      return stage
    })
    cold = { bin: join(dir, 'tasks/bin/run.js'), path: join(dir, 'path') }
  }, 60_000)
  afterAll(() => {
    cold = undefined
  })
}

/** The bin `tool mcp` of the example runs from, and what its environment needs: the copy while one is in use. */
export function tasksServer(): { bin: string; env: Record<string, string> } {
  if (!cold) return { bin: TASKS_BIN, env: {} }
  return { bin: cold.bin, env: { PATH: `${cold.path}${delimiter}${process.env.PATH ?? ''}` } }
}
