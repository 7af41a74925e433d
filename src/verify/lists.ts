import { argvKey, words } from './_private.js'
import { type Call, call, json, type Target } from './call.js'
import { itemCount, runnableExample, type Seen } from './examples.js'
import type { Ref, RefCommand } from './reference-types.js'
import type { Report } from './report.js'

/** A list: a non-streaming read whose declared output has an `items` array. */
export function isList(c: RefCommand): boolean {
  const items = (c.output_schema.properties as Record<string, { type?: unknown }> | undefined)?.items
  return c.type === 'read' && !c.stream && !c.async && items?.type === 'array'
}

/**
 * An example's argv without its own `--limit` (`--limit 10`, `--limit=10`): the check runs the default and then
 * `--limit 1` itself, and a parser refuses a flag given twice (oclif's `E_USAGE`), which is no unbounded list.
 */
function withoutLimit(argv: string[]): string[] {
  return argv.filter((word, i) => word !== '--limit' && !word.startsWith('--limit=') && argv[i - 1] !== '--limit')
}

/**
 * Bounded lists (docs/contract.md, pagination): every list has a `--limit` with a default, its default run
 * answers no more than that, and `--limit 1` on a store of two or more items answers exactly one. `answered`: the
 * reads the self-checks made on this state, by argv; a default run among them is not made again.
 */
export async function boundedLists(
  t: Target,
  ref: Ref,
  report: Report,
  seen: Seen,
  answered: ReadonlyMap<string, Call> = new Map(),
): Promise<void> {
  for (const command of ref.commands.filter(isList)) {
    const id = `lists.bounded:${command.path}`
    const limit = command.params.find((p) => p.kind === 'flag' && p.name === 'limit')
    const base = withoutLimit(runnableExample(command, ref.tool, seen) ?? words(command.path))
    if (!limit) {
      report.add(id, 'lists', false, 'a list without a --limit flag: an agent cannot bound what it reads')
      continue
    }
    const fallback = typeof limit.default === 'number' ? limit.default : Number(limit.default)
    if (limit.default === undefined || limit.default === null || !Number.isInteger(fallback) || fallback < 1) {
      report.add(id, 'lists', false, `--limit has no default (${JSON.stringify(limit.default ?? null)})`)
      continue
    }
    const all = answered.get(argvKey(base)) ?? (await call(t, `lists:${command.path}`, base))
    const total = itemCount(json(all)?.data)
    if (all.code !== 0 || total === undefined) {
      report.add(id, 'lists', 'skip', `its run answered no list (exit ${all.code})`)
      continue
    }
    if (total > fallback) {
      report.add(id, 'lists', false, `default --limit ${fallback}, but it answered ${total} items`)
      continue
    }
    if (total < 2) {
      report.add(id, 'lists', 'skip', `needs 2 items to prove --limit is honoured, has ${total} (add --setup lines)`)
      continue
    }
    const one = await call(t, `lists:${command.path} --limit 1`, [...base, '--limit', '1'])
    const got = itemCount(json(one)?.data)
    report.add(
      id,
      'lists',
      one.code === 0 && got === 1,
      got === 1
        ? `default --limit ${fallback}; --limit 1 of ${total} answered 1`
        : `--limit 1 of ${total} answered ${got ?? 'no list'} (exit ${one.code}): --limit is ignored`,
    )
  }
}
