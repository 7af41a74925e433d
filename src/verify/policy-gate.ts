import { generateKeyPairSync } from 'node:crypto'
import { lstatSync, mkdirSync, rmdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { publicKeyLine } from '../approvals/sshsig.js'
import { POLICY_FILE } from '../policy/load.js'
import type { PolicyDocument } from '../policy/policy.js'
import { errorOf } from './_private.js'
import { call, json, type Target } from './call.js'
import type { Seen } from './examples.js'
import type { Ref } from './reference-types.js'
import type { Report } from './report.js'
import { changes, heldConfirmSideEffects, snapshot, stateBefore } from './side-effects.js'
import { dryRunArgv } from './write-gate.js'

/** The rule verify's policy holds every write with, named in the target's approval block. */
export const HELD_RULE = 'agentcli-verify-every-write'

/**
 * The operator policy verify puts in the sandbox: one approval for every write, by a throw-away key whose private
 * half is dropped at once (nobody, verify included, can approve, so a confirm that lands went around the gate).
 */
export function heldPolicy(): PolicyDocument {
  const key = publicKeyLine(generateKeyPairSync('ed25519').publicKey)
  return {
    approvers: [{ id: 'agentcli-verify', key }],
    rules: [{ id: HELD_RULE, when: { kind: ['write'] }, decision: 'approve', approvals: 1 }],
  }
}

/**
 * The tool's config dir in the sandbox: the one its `context` named (`paths.config_dir`, an agentcli tool's; the
 * checks read `context` once, before this), else `<XDG_CONFIG_HOME>/<tool>` (oclif's default). Undefined when it is
 * outside the sandbox home (an author's `--env` moved it): verify writes nothing outside its sandbox.
 */
export function sandboxConfigDir(t: Target, ref: Ref, named?: unknown): string | undefined {
  const dir = resolve(typeof named === 'string' ? named : join(t.env.XDG_CONFIG_HOME!, ref.tool))
  const inside = relative(t.home, dir)
  return inside && !inside.startsWith('..') && inside !== dir ? dir : undefined
}

/**
 * Put `policy` at `<dir>/policy.json` for the length of `body`, then take it away (and the directories made for
 * it, when they are still empty): the other checks run without it. Written owner-only and exclusively, so a file
 * or a link already there is never replaced nor followed.
 */
export async function withPolicy<T>(dir: string, policy: PolicyDocument, body: () => Promise<T>): Promise<T> {
  const made = mkdirSync(dir, { recursive: true, mode: 0o700 })
  const path = join(dir, POLICY_FILE)
  writeFileSync(path, `${JSON.stringify(policy)}\n`, { mode: 0o600, flag: 'wx' })
  try {
    return await body()
  } finally {
    rmSync(path, { force: true })
    for (let d = dir; made && d.length >= made.length; d = dirname(d))
      try {
        rmdirSync(d)
      } catch {
        break
      }
  }
}

/** What the target's dry-run answers when a held change reaches it: the approval block (`data.approval`). */
type Approval = { request_id?: unknown }

/**
 * `write.held`: under an operator policy that holds every write for one approval, the first write whose own
 * `--dry-run` example the policy holds (`data.approval`) cannot be confirmed without one: `E_HUMAN_REQUIRED` (exit
 * 9), and nothing under the sandbox home changed but its audit line. A write the gate refuses before any approval
 * (a change with no named targets, `implicit_targets`) or whose example needs state is passed over. `skip`, with
 * why, when no write is held: a tool that reads no agentcli policy, or none whose example names its targets.
 */
export async function policyGate(
  t: Target,
  ref: Ref,
  report: Report,
  seen: Seen,
  /** The config dir the target's `context` named, if it has one. */
  configDir?: unknown,
): Promise<void> {
  const writes = ref.commands.filter((c) => c.type === 'write')
  if (writes.length === 0) return
  const dir = sandboxConfigDir(t, ref, configDir)
  if (!dir) {
    report.add('write.held', 'write', 'skip', 'the tool’s config dir is outside the sandbox: no policy written')
    return
  }
  if (lstatSync(join(dir, POLICY_FILE), { throwIfNoEntry: false })) {
    report.add(
      'write.held',
      'write',
      'skip',
      `${join(dir, POLICY_FILE).replace(t.home, '~')} already exists: not replaced`,
    )
    return
  }
  // Why each write was passed over, for the skip's evidence.
  const notes: string[] = []
  await withPolicy(dir, heldPolicy(), async () => {
    for (const command of writes) {
      const argv = dryRunArgv(command, ref.tool, seen)
      if (!argv) {
        notes.push(`${command.path}: no runnable --dry-run example`)
        continue
      }
      const dry = await call(t, `held:${command.path} --dry-run`, [...argv, '--dry-run'])
      const data = json(dry)?.data as { confirm_token?: unknown; approval?: Approval } | undefined
      if (dry.code !== 0 || typeof data?.confirm_token !== 'string') {
        const error = errorOf(dry)
        const reason = (json(dry)?.error as { details?: { reason?: unknown } } | undefined)?.details?.reason
        notes.push(
          `${command.path}: exit ${dry.code}${error?.code ? ` ${error.code}` : ''}${reason ? ` ${reason}` : ''}`,
        )
        continue
      }
      if (!data.approval) {
        report.add(
          'write.held',
          'write',
          'skip',
          `${argv.join(' ')} --dry-run under a policy that holds every write answered no data.approval: the tool reads no agentcli policy`,
        )
        return
      }
      const before = await stateBefore(t)
      const held = await call(t, `held:${command.path} --confirm unapproved`, [
        ...argv,
        '--confirm',
        data.confirm_token,
      ])
      const extra = heldConfirmSideEffects(changes(before, snapshot(t.home, t.env.XDG_CACHE_HOME!)), before).map((p) =>
        p.replace(t.home, '~'),
      )
      const code = errorOf(held)?.code
      report.add(
        'write.held',
        'write',
        held.code === 9 && code === 'E_HUMAN_REQUIRED' && extra.length === 0,
        `${argv.join(' ')}: --dry-run held (${String(data.approval.request_id)}); --confirm without an approval → exit ${held.code} ${code ?? 'no error'}; ${extra.length ? `changed ${extra.join(', ').slice(0, 300)}` : 'nothing changed but its audit line'}`,
      )
      return
    }
    report.add(
      'write.held',
      'write',
      'skip',
      `no write’s --dry-run example was held: ${notes.join('; ').slice(0, 400)}`,
    )
  })
}
