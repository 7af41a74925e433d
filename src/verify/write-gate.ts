import { errorOf, NEEDS_STATE, stateReads, strip, words } from './_private.js'
import { type Call, call, json, type Target } from './call.js'
import { exampleArgv, fill, type Seen } from './examples.js'
import type { Ref, RefCommand } from './reference-types.js'
import type { Report } from './report.js'
import { changes, dryRunSideEffects, snapshot } from './side-effects.js'

/** The argv of a write command's `--dry-run` example, without the tool name and the flag, placeholders filled. */
export function dryRunArgv(command: RefCommand, tool: string, seen: Seen = new Map()): string[] | undefined {
  const example = command.examples.find((e) => e.includes('--dry-run'))
  if (!example) return undefined
  return fill(
    exampleArgv(example, tool).filter((w) => w !== '--dry-run'),
    seen,
  )
}

async function readState(t: Target, ref: Ref): Promise<string> {
  const outs = await Promise.all(stateReads(ref.commands).map((c) => call(t, `state:${c.path}`, words(c.path))))
  // Only successful reads describe state; a refusal (a login that needs a person) may differ on every call.
  return outs.map((o) => (o.code === 0 ? strip(json(o)) : `exit ${o.code}`)).join('\n')
}

/**
 * No write without a token: exit 5 and nothing visible changed; a dry-run token, and no side effect of the dry-run;
 * a tampered token refused.
 */
export async function writeGate(t: Target, ref: Ref, report: Report, seen: Seen): Promise<void> {
  const writes = ref.commands
    .filter((c) => c.type === 'write')
    .map((command) => ({ command, argv: dryRunArgv(command, ref.tool, seen) }))
  // Every refusal first, one after the other: the read state after one is the state before the next (no call in
  // between), read once for both. The refusal reads no state (it comes before the plan), so every write's example
  // can show it.
  const refusals = new Map<RefCommand, { refused: Call; unchanged: boolean }>()
  let state: string | undefined
  for (const { command, argv } of writes) {
    if (!argv) continue
    const before = state ?? (await readState(t, ref))
    const refused = await call(t, `write:${command.path}`, argv)
    state = await readState(t, ref)
    refusals.set(command, { refused, unchanged: before === state })
  }
  for (const { command, argv } of writes) {
    if (!argv) {
      report.add(
        `write.no_token:${command.path}`,
        'write',
        false,
        'no runnable example with --dry-run (or a placeholder no output filled)',
      )
      continue
    }
    const { refused, unchanged } = refusals.get(command)!
    report.add(
      `write.no_token:${command.path}`,
      'write',
      refused.code === 5 && errorOf(refused)?.code === 'E_CONFIRMATION_REQUIRED' && unchanged,
      `exit ${refused.code}; read state ${unchanged ? 'unchanged' : 'CHANGED'}`,
    )
    // A dry-run has no side effect but its audit line (and the token secret, made on first use): not in the config
    // or data dir, not in a dotfile, not in the working directory.
    const home = snapshot(t.home, t.env.XDG_CACHE_HOME!)
    const dry = await call(t, `write:${command.path} --dry-run`, [...argv, '--dry-run'])
    const extra = dryRunSideEffects(changes(home, snapshot(t.home, t.env.XDG_CACHE_HOME!)), home).map((p) =>
      p.replace(t.home, '~'),
    )
    report.add(
      `write.dry_run_no_side_effects:${command.path}`,
      'write',
      extra.length === 0,
      extra.length
        ? `${argv.join(' ')} --dry-run changed ${extra.join(', ').slice(0, 300)}`
        : `${argv.join(' ')} --dry-run: no side effect (its audit line aside)`,
    )
    if (NEEDS_STATE.has(dry.code ?? -1)) {
      report.add(
        `write.dry_run:${command.path}`,
        'write',
        'skip',
        `its example needs state verify could not create (exit ${dry.code}, ${errorOf(dry)?.code})`,
      )
      continue
    }
    const data = json(dry)?.data as { confirm_token?: string; expires_at?: string } | undefined
    const expires = Date.parse(data?.expires_at ?? '')
    const dryOk =
      dry.code === 0 &&
      /^ct_/.test(data?.confirm_token ?? '') &&
      /Z$/.test(data?.expires_at ?? '') &&
      expires > Date.now()
    report.add(
      `write.dry_run:${command.path}`,
      'write',
      dryOk,
      `token ${data?.confirm_token?.slice(0, 8) ?? 'none'}…, expires_at ${data?.expires_at ?? 'none'}`,
    )
    if (!data?.confirm_token) continue
    const token = data.confirm_token
    const at = Math.floor(token.length / 2)
    const tampered = token.slice(0, at) + (token[at] === 'A' ? 'B' : 'A') + token.slice(at + 1)
    const refusedTamper = await call(t, `write:${command.path} --confirm tampered`, [...argv, '--confirm', tampered])
    report.add(
      `write.tampered:${command.path}`,
      'write',
      refusedTamper.code === 6,
      `tampered token → exit ${refusedTamper.code}`,
    )
  }
}
