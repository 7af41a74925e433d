import { withoutLanded } from '../confirm/batch.js'
import { changeCount, clearBeforeChange, isBeforeChange } from '../errors/before-change.js'
import { stopIfInterrupted } from '../errors/interrupted.js'
import { lookupKey, replay, type WriteCall, type WriteSteps } from './call.js'
import { clock, onlyRejected, type Plan } from './plan.js'
import { driftError, goneOrRethrow, refuse } from './refusals.js'

/**
 * `--confirm`: everything the token binds that needs no state is checked before `plan()` reads any (so a
 * garbage, tampered, expired or foreign token learns nothing about the targets); then single use; then the
 * plan, its targets and versions; then the token is consumed and the change applied. The order is security
 * relevant (docs/contract.md, "What a token binds"): keep it.
 */
export async function confirmWrite<S>(steps: WriteSteps<S>, token: string, call: WriteCall): Promise<unknown> {
  const { binding, audit, idem } = call
  const ring = await steps.keyRing()
  const { tokenKeyId, verifyToken, verifyTargets } = await import('../confirm/token.js')
  // The token names its key; a key no longer in the ring verifies nothing (its tokens have expired).
  const kid = tokenKeyId(token)
  const secret = kid === undefined ? ring.current.key : ring.keys.get(kid)
  if (!secret) throw refuse(audit, 'unknown_key')
  const verdict = verifyToken(secret, token, binding, clock())
  const tokenId = verdict.claims?.id
  if (tokenId) audit({ token_id: tokenId })
  if (!verdict.ok) throw refuse(audit, verdict.reason, tokenId)
  const claims = verdict.claims
  const ledger = idem ? await steps.idempotencyLedger() : undefined
  if (idem && ledger) {
    const seen = await lookupKey(steps, ledger, idem, binding.args)
    if (seen.state === 'done') return replay(steps, audit, seen.data)
  }
  const used = await steps.tokenLedger()
  if (await used.isUsed(claims.id)) throw refuse(audit, 'already_used', claims.id)
  let plan: Plan<S>
  try {
    plan = withoutLanded(await steps.plan(), steps.state.landed)
  } catch (error) {
    audit({ mode: 'refused' })
    throw await goneOrRethrow(error, claims.targets, claims.id)
  }
  const targets = verifyTargets(secret, claims, plan.targets ?? [])
  if (!targets.ok) {
    audit({ mode: 'refused' })
    throw driftError(targets.reason, targets.drift, claims.id)
  }
  // The gate again, on the plan recomputed here: a held change goes no further without its approvals.
  if (call.gate) {
    const gate = await import('./gate.js')
    const verdict = gate.judge(call.gate, plan, audit)
    if (gate.needsApproval(verdict)) {
      const named = gate.checkExplicit(plan.targets, audit)
      await gate.requireApprovals(call.gate, verdict, { binding, targets: named, claims }, audit)
    }
  }
  // The plan may have taken a while: expiry is judged again, on the same clock, right before the commit point.
  const now = clock()
  if (now >= claims.expiresAt) throw refuse(audit, 'expired', claims.id)
  if (onlyRejected(plan)) return steps.rejectedBatch(plan)
  // A signal during the plan stops here: nothing consumed, nothing applied.
  stopIfInterrupted(steps.signal)
  // Consumed before apply: of N processes confirming one token, exactly one gets past this line.
  if (!(await used.consume(claims.id, claims.expiresAt, now))) throw refuse(audit, 'already_used', claims.id)
  // An async write's job carries what its worker needs to judge the change again as this confirm did.
  steps.state.confirmed = {
    token_id: claims.id,
    targets: plan.targets ?? [],
    ...(binding.policy !== undefined ? { policy: binding.policy } : {}),
    expires_at: new Date(claims.expiresAt).toISOString(),
    principal: binding.principal,
  }
  try {
    stopIfInterrupted(steps.signal)
    if (!idem || !ledger) return await guardedApply(steps, plan)
    const { data, replayed } = await ledger.run(
      idem.scope,
      steps.id,
      idem.key,
      binding.args,
      () => guardedApply(steps, plan),
      [...steps.state.landed.keys()],
    )
    if (replayed) {
      // Another process finished the same key meanwhile: this token did nothing, so give it back.
      await used.release(claims.id)
      return replay(steps, audit, data)
    }
    return data
  } catch (error) {
    // A failure known to precede any change gives the token back: a retry with it is honest.
    if (isBeforeChange(error)) await used.release(claims.id)
    throw error
  }
}

/** `apply()`, with the "nothing changed" mark of its failure kept only if the framework saw no change. */
async function guardedApply<S>(steps: WriteSteps<S>, plan: Plan<S>): Promise<unknown> {
  const before = changeCount()
  try {
    return await steps.apply(plan)
  } catch (error) {
    if (changeCount() !== before) clearBeforeChange(error)
    throw error
  }
}
