import { parse as shellParse } from 'shell-quote'
import type { RefCommand } from './reference-types.js'

/** Values seen in real outputs, by key (`id`, `job_id` …), used to fill an example's `<placeholder>`s. */
export type Seen = Map<string, string>

/**
 * An example (or `--setup` line) as argv, without the tool's own name. `<name>` is a placeholder, not a shell
 * redirection; a real redirection or pipe ends the tool's own words.
 */
export function exampleArgv(example: string, tool: string): string[] {
  const quoted = example.replace(/(^|\s)<([A-Za-z0-9_.-]+)>(?=\s|$)/g, '$1"<$2>"')
  const parsed = shellParse(quoted)
  const end = parsed.findIndex((w) => typeof w !== 'string')
  const words = (end < 0 ? parsed : parsed.slice(0, end)) as string[]
  return words[0] === tool ? words.slice(1) : words
}

const PLACEHOLDER = /^<([^<>]+)>$/

/** The argv with every `<name>` replaced from `seen`, or undefined when one has no value yet. */
export function fill(argv: string[], seen: Seen): string[] | undefined {
  const out: string[] = []
  for (const word of argv) {
    const name = PLACEHOLDER.exec(word)?.[1]
    if (!name) {
      out.push(word)
      continue
    }
    // `<task_id>` may be filled by an `id` seen in a list: the prefix names the resource, not the key.
    const value = seen.get(name) ?? (name.endsWith('_id') || name.endsWith('-id') ? seen.get('id') : undefined)
    if (value === undefined) return undefined
    out.push(value)
  }
  return out
}

/** Record the scalar fields of a read's `data` (and of its first list item) for later placeholders. */
export function harvest(data: unknown, seen: Seen): void {
  if (!data || typeof data !== 'object' || Array.isArray(data)) return
  const record = data as Record<string, unknown>
  const first = Array.isArray(record.items) ? record.items[0] : undefined
  for (const source of [first, record]) {
    if (!source || typeof source !== 'object') continue
    for (const [key, value] of Object.entries(source))
      if ((typeof value === 'string' || typeof value === 'number') && !seen.has(key)) seen.set(key, String(value))
  }
}

/**
 * The first example of a command that, once filled, runs it as JSON with no `--fields`/`--format` reshaping and
 * returns at once (no `--wait`, `--follow`).
 */
export function runnableExample(command: RefCommand, tool: string, seen: Seen): string[] | undefined {
  for (const example of command.examples) {
    const argv = exampleArgv(example, tool)
    if (
      argv.some((w) => ['--fields', '--format', '--confirm', '--dry-run', '--wait', '--follow', '--watch'].includes(w))
    )
      continue
    if (argv.slice(0, command.path.split(' ').length).join(' ') !== command.path) continue
    const filled = fill(argv, seen)
    if (filled) return filled
  }
  return undefined
}

/** The number of items of a list's `data`, or undefined when it is not a list. */
export function itemCount(data: unknown): number | undefined {
  const items = (data as { items?: unknown } | undefined)?.items
  return Array.isArray(items) ? items.length : undefined
}
