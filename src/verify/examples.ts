import { parse as shellParse } from 'shell-quote'
import { UNIVERSAL_VALUE_TOKENS } from '../universal-flags/table.js'
import type { RefCommand, RefParam } from './reference-types.js'

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

/** An example filled: its argv, how many placeholders it had, and whether one was filled by a guess. */
export type Filled = { argv: string[]; placeholders: number; guessed: boolean }

/**
 * The argv with every `<name>` replaced from `seen`, or undefined when one has no value yet. A value seen under
 * the placeholder's own name is grounded; `<task_id>` filled by an `id` is a guess (the `id` may be another
 * resource's).
 */
export function fillInfo(argv: string[], seen: Seen): Filled | undefined {
  const out: string[] = []
  let placeholders = 0
  let guessed = false
  for (const word of argv) {
    const name = PLACEHOLDER.exec(word)?.[1]
    if (!name) {
      out.push(word)
      continue
    }
    placeholders++
    // `<task_id>` may be filled by an `id` seen in a list: the prefix names the resource, not the key.
    let value = seen.get(name)
    if (value === undefined && (name.endsWith('_id') || name.endsWith('-id'))) {
      value = seen.get('id')
      guessed = true
    }
    if (value === undefined) return undefined
    out.push(value)
  }
  return { argv: out, placeholders, guessed }
}

/** The argv with every `<name>` replaced from `seen`, or undefined when one has no value yet. */
export function fill(argv: string[], seen: Seen): string[] | undefined {
  return fillInfo(argv, seen)?.argv
}

/** What fills every placeholder on an empty state: a value that names nothing (`E_NOT_FOUND` where ids are looked up). */
export const NOTHING: Seen = new (class extends Map<string, string> {
  override get(): string {
    return 'agentcli-verify-none'
  }
})()

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
 * The write and job flags that keep an example from being a plain call: a write's preview or confirm (verify drives
 * those through the write flow itself), and what makes a call block or stream instead of returning at once (`--wait`
 * of an async command; `--follow`, `--watch`, a tool's own). Named here because no one name holds them:
 * `WRITE_FLAGS` and `WAIT_FLAGS` are oclif flag builders (and `--wait-timeout` alone blocks nothing), and
 * `--follow`/`--watch` are no flag of the framework's.
 */
export const NOT_PLAIN_FLAGS: ReadonlySet<string> = new Set(['--confirm', '--dry-run', '--wait', '--follow', '--watch'])

/**
 * Whether an example's word makes it no plain call ({@link NOT_PLAIN_FLAGS}) or reshapes its answer. Of the
 * universal flags, those taking a value (`--format`, `--fields`) choose what the answer looks like; the switches
 * leave it the JSON verify validates (`--json` is the default format, `--compact`/`--pretty` only spacing). `--x=v`
 * is `--x v`: an example writing `--format=text` is as unfit to validate as one writing `--format text`.
 */
function notPlain(word: string): boolean {
  const flag = word.split('=')[0]!
  return UNIVERSAL_VALUE_TOKENS.has(flag) || NOT_PLAIN_FLAGS.has(flag)
}

/**
 * The first example of a command that, once filled, runs it as JSON with no `--fields`/`--format` reshaping and
 * returns at once (no `--wait`, `--follow`): see {@link NOT_PLAIN_FLAGS}.
 */
export function runnableExampleInfo(command: RefCommand, tool: string, seen: Seen): Filled | undefined {
  for (const example of command.examples) {
    const argv = exampleArgv(example, tool)
    if (argv.some(notPlain)) continue
    if (argv.slice(0, command.path.split(' ').length).join(' ') !== command.path) continue
    const filled = fillInfo(argv, seen)
    if (filled) return filled
  }
  return undefined
}

/** {@link runnableExampleInfo}'s argv. */
export function runnableExample(command: RefCommand, tool: string, seen: Seen): string[] | undefined {
  return runnableExampleInfo(command, tool, seen)?.argv
}

/**
 * The example with a second value for each literal free-text word (a string flag's value or argument without
 * options, placeholders and the idempotency key aside), so a second run makes a second item even where the tool
 * dedupes by value (a title, a name). Undefined when it has no such word.
 */
export function varied(argv: string[], command: RefCommand): string[] | undefined {
  const free = (p: RefParam | undefined) => p !== undefined && p.type === 'string' && !p.options?.length
  const args = command.params.filter((p) => p.kind === 'arg')
  let next = 0
  let changed = false
  const out = [...argv]
  for (let i = command.path.split(' ').length; i < out.length; i++) {
    const word = out[i]!
    let param: RefParam | undefined
    let at = i
    if (word === '--') continue
    if (word.startsWith('-')) {
      param = command.params.find((p) => p.kind === 'flag' && `--${p.name}` === word)
      if (!param || param.type === 'boolean') continue
      at = ++i
      if (param.name === 'idempotency-key') continue
    } else {
      param = args[next]
      if (!param?.multiple) next++
    }
    const value = out[at]
    if (value === undefined || !free(param) || PLACEHOLDER.test(value)) continue
    out[at] = `${value}-2`
    changed = true
  }
  return changed ? out : undefined
}

/** The number of items of a list's `data`, or undefined when it is not a list. */
export function itemCount(data: unknown): number | undefined {
  const items = (data as { items?: unknown } | undefined)?.items
  return Array.isArray(items) ? items.length : undefined
}
