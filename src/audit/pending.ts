import { type AuditDraft, type AuditFacts, withFacts } from './record.js'

/*
 * The record of this run's non-read call, pending until the outcome is known (the session appends it). Steps
 * never change a draft: each hands what it learnt to `noteAudit`, which keeps a new one.
 */
let pending: AuditDraft | undefined

/**
 * Open (or replace) the run's record: the entry's, as soon as the command is known; a write command's own, richer
 * one once its flags are parsed (which keeps the entry's `kind`).
 */
export function openAudit(draft: AuditDraft): AuditDraft {
  pending = draft.kind === undefined && pending?.kind !== undefined ? withFacts(draft, { kind: pending.kind }) : draft
  return pending
}

/** Record what a step learnt (a token's id, a refusal, a replay); nothing when no call is being audited. */
export function noteAudit(facts: AuditFacts): void {
  if (pending) pending = withFacts(pending, facts)
}

/** The pending record of this run: every call of a non-read command has one. */
export function pendingAudit(): AuditDraft | undefined {
  return pending
}

/** Drop the pending record: a session opening for another run in this process starts with none. */
export function clearAudit(): void {
  pending = undefined
}
