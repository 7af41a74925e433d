import { needsInput, words } from './_private.js'
import { call, type Target } from './call.js'
import { runnableExample, type Seen } from './examples.js'
import type { Ref } from './reference-types.js'
import type { Report } from './report.js'
import { changes, localOverreach, snapshot, stateBefore } from './side-effects.js'

/**
 * A `local` command changes a session, stored credentials or a job, without a token (docs/contract.md, kinds of
 * command): never the state the tool's writes own, which would go around dry-run → confirm. Each local command is
 * run once (plainly, or from its first example the populated state fills) and what it changed is compared with
 * what the confirmed writes made while populating (`owned`).
 */
export async function localChecks(
  t: Target,
  ref: Ref,
  report: Report,
  seen: Seen,
  owned: ReadonlySet<string>,
): Promise<void> {
  for (const command of ref.commands.filter((c) => c.type === 'local')) {
    const id = `local.keeps_write_state:${command.path}`
    if (owned.size === 0) {
      report.add(id, 'local', 'skip', 'no write landed while populating: there is no write-owned state to keep')
      continue
    }
    const argv = needsInput(command) ? runnableExample(command, ref.tool, seen) : words(command.path)
    if (!argv) {
      report.add(id, 'local', 'skip', 'needs input that no example fills from the populated state')
      continue
    }
    const before = await stateBefore(t)
    const out = await call(t, `local:${command.path}`, argv)
    const over = localOverreach(changes(before, snapshot(t.home, t.env.XDG_CACHE_HOME!)), before, owned).map((p) =>
      p.replace(t.home, '~'),
    )
    report.add(
      id,
      'local',
      over.length === 0,
      over.length
        ? `${argv.join(' ')} (local, no token) changed what a write owns: ${over.join(', ').slice(0, 300)}`
        : `${argv.join(' ')} (exit ${out.code}): the ${owned.size} path(s) the writes made are unchanged`,
    )
  }
}
