import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { AgentError, Flags, output, type Plan, previewItems, WriteCommand, type WriteJobContext } from 'agentcli'
import { STATUSES, type Status, TaskStore } from '../store.js'

/** The file as read by `plan()`: in the worker, the framework applies it only if its digest is the confirmed one. */
type Source = { path: string; digest: string; lines: number; bytes: Buffer }

export default class Import extends WriteCommand<Source> {
  static override summary = 'Import tasks from a JSON Lines file, as an async job'
  static override description =
    'Each line is {"title": string, "status"?: "open"|"done"}. The job reports progress; a malformed line fails it with the line number and no task from the file is written. The confirm token is bound to the file content, and the job imports exactly the bytes that were previewed: a file changed after the dry-run fails the job with E_CONFLICT and imports nothing.'
  static override examples = [
    '<%= config.bin %> import --file tasks.jsonl --dry-run',
    '<%= config.bin %> import --file tasks.jsonl --confirm <confirm_token>',
    '<%= config.bin %> job status --id <job_id> --wait',
  ]
  static override flags = { file: Flags.string({ required: true, description: 'Path of the JSON Lines file.' }) }
  static override async = true
  static override errorCodes = ['E_NOT_FOUND', 'E_IO'] as const
  /** Import only adds tasks: each can be deleted again by its id. */
  static override risk = {
    action: 'create',
    blast_radius: 'set',
    reversible: true,
    undo: 'tasks delete <ids…> (the ids the job reports)',
    cost: null,
  } as const
  static override output = output((z) => z.object({ imported: z.number().int(), ids: z.array(z.string()) }))

  async plan(): Promise<Plan<Source>> {
    const { flags } = await this.parse(Import)
    const path = resolve(flags.file)
    let bytes: Buffer
    try {
      bytes = await readFile(path)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT') throw new AgentError('E_NOT_FOUND', `no file ${path}`, { details: { path } })
      throw new AgentError('E_IO', `cannot read ${path}: ${code}`, { details: { path } })
    }
    const digest = createHash('sha256').update(bytes).digest('hex')
    const text = bytes.toString('utf8').split('\n')
    const lines = text.filter((l) => l.trim()).length
    // What will be created, as the job will parse it (bounded), and which lines would fail the job.
    const parsed = previewItems(tasksIn(text))
    const invalid = previewItems(invalidLines(text))
    return {
      changes: [
        {
          action: 'import',
          resource: 'task',
          id: null,
          before: null,
          after: {
            file: path,
            lines,
            sha256: digest,
            tasks: parsed,
            ...(invalid.count > 0 ? { invalid_lines: invalid } : {}),
          },
        },
      ],
      targets: [{ id: `file:${path}`, version: digest }],
      // The number of tasks the file holds: the tool's policy asks a person to approve a large import.
      size: lines,
      state: { path, digest, lines, bytes },
    }
  }

  async apply() {
    return this.submit()
  }

  override async work(ctx: WriteJobContext<Source>) {
    // The bytes the framework checked against the confirmed digest: the path is never read again.
    const text = ctx.plan.state!.bytes.toString('utf8')
    const parsed: Array<{ title: string; status: Status }> = []
    const total = Math.max(1, ctx.plan.state!.lines)
    const started = Date.now()
    let lineNo = 0
    for (const line of text.split('\n')) {
      lineNo++
      if (ctx.signal.aborted) throw ctx.signal.reason
      if (!line.trim()) continue
      parsed.push(parseLine(line.replace(/\r$/, ''), lineNo))
      if (parsed.length % 500 === 0) {
        const done = parsed.length / total
        await ctx.progress(done * 0.9, {
          eta_seconds: Math.round(((Date.now() - started) / done) * (1 - done)) / 1000,
          message: `parsed ${parsed.length} of ${total}`,
        })
      }
    }
    // All or nothing: one locked, atomic replacement of the store.
    const ids = await new TaskStore(this.config.dataDir).update((file) => {
      const at = new Date().toISOString()
      return parsed.map((p) => {
        const id = String(file.next_id++)
        file.tasks.push({ id, title: p.title, status: p.status, created_at: at, updated_at: at, version: 1 })
        return id
      })
    })
    return { imported: ids.length, ids }
  }
}

/** The tasks the valid lines describe, in file order. */
function* tasksIn(lines: readonly string[]): Iterable<{ title: string; status: Status }> {
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue
    try {
      yield parseLine(line.replace(/\r$/, ''), i + 1)
    } catch {}
  }
}

/** The lines that would fail the job: their number and why. */
function* invalidLines(lines: readonly string[]): Iterable<{ line: number; reason: string }> {
  for (const [i, line] of lines.entries()) {
    if (!line.trim()) continue
    try {
      parseLine(line.replace(/\r$/, ''), i + 1)
    } catch (error) {
      yield { line: i + 1, reason: String((error as AgentError).details.reason) }
    }
  }
}

function parseLine(line: string, lineNo: number): { title: string; status: Status } {
  const fail = (reason: string) =>
    new AgentError('E_VALIDATION', `line ${lineNo}: ${reason}`, {
      details: { line: lineNo, reason, allowed: '{"title": string, "status"?: "open"|"done"}' },
    })
  let value: unknown
  try {
    value = JSON.parse(line)
  } catch {
    throw fail('not valid JSON')
  }
  const v = value as { title?: unknown; status?: unknown }
  if (typeof v !== 'object' || v === null || typeof v.title !== 'string' || !v.title.trim())
    throw fail('title must be a non-empty string')
  if (v.status !== undefined && !(STATUSES as readonly unknown[]).includes(v.status))
    throw fail(`status must be one of ${STATUSES.join(', ')}`)
  return { title: v.title.trim(), status: (v.status as Status | undefined) ?? 'open' }
}
