#!/usr/bin/env node
// The closest TypeScript peer itself in bench/mcp.mjs and bench/mcp-steady.mjs: an incur CLI (npm `incur`, a
// devDependency pinned exactly) with one command, `get <id>`, doing what the example's `tasks get` does in
// substance: a zod-validated argument, the store file read from disk on every call (the example's own file,
// $XDG_DATA_HOME/tasks/tasks.json, laid out as examples/tasks/src/store.ts writes it), its structure checked, the
// task returned under an output schema. Served over MCP stdio as incur's README says (`<cli> --mcp`), with
// `mcp.tools.discovery: 'direct'` so the tool is `get`, as ours is (incur's default, progressive discovery, puts
// every call behind `call_read_tool`). Each call writes one line to stderr, as our server's log does, so the bench
// can count the calls that reached the handler. Not a tool; started by the benches only.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Cli, z } from 'incur'

const path = join(process.env.XDG_DATA_HOME ?? join(process.env.HOME ?? '.', '.local/share'), 'tasks', 'tasks.json')

const task = z.object({
  id: z.string().describe('Task id (a string, even though ids are numeric).'),
  title: z.string(),
  status: z.enum(['open', 'done']),
  created_at: z.iso.datetime().describe('ISO 8601 UTC.'),
  updated_at: z.iso.datetime().describe('ISO 8601 UTC.'),
  version: z.number().int().describe('Moves on every change.'),
  remote_id: z.string().optional().describe('Set on tasks pulled by `sync`: the id at the remote API.'),
})
const store = z.object({ schema: z.literal(1), next_id: z.number().int(), tasks: z.array(task) })

Cli.create('tasks-incur', {
  version: '1.0.0',
  description: 'The example tasks tool, as an incur CLI (bench peer)',
  mcp: { tools: { discovery: 'direct' } },
})
  .command('get', {
    description: 'Show one task',
    args: z.object({ id: z.string().describe('Task id.') }),
    output: task,
    mcp: { annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } },
    async run(c) {
      process.stderr.write(`incur: get ${c.args.id}\n`)
      const file = store.parse(JSON.parse(await readFile(path, 'utf8')))
      const found = file.tasks.find((t) => t.id === c.args.id)
      if (!found) return c.error({ code: 'NOT_FOUND', message: `task ${c.args.id} not found` })
      return found
    },
  })
  .serve()
