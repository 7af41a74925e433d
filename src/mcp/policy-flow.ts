import type { CommandDescription } from '../describe/command.js'
import { AgentError } from '../errors/agent-error.js'
import type { Catalogue } from '../errors/catalogue.js'
import type { ToolConfig } from '../runtime/tool-config.js'
import type { Risk } from '../write/risk.js'
import { resumeArgv } from './_flows.js'
import { errorEnvelopeOf, toolResult } from './result.js'
import type { Launcher } from './run-call.js'
import { toolKeyRing } from './tool-ring.js'
import type { ToolDef } from './tools.js'

// The third way a held change is approved (besides ssh signatures, filed by `approve` here or on the fleet): a
// person answers the MCP host's form. The server cannot prove a person, not the model, answered; so the channel is
// the operator's explicit choice in the system policy ("trust the host"), and what it files counts as one approver.

/** The sealed state of a policy approval round: the request the person is asked about, and the call that applies it. */
export type PolicyFlow = { kind: 'policy'; request: string; resume: string }

type Sdk = typeof import('@modelcontextprotocol/server')

/** What the flow needs of the server: the SDK, its request-state codec, the launcher, who the calls act for. */
export type PolicyFlowDeps = {
  sdk: Sdk
  server: InstanceType<Sdk['McpServer']>
  codec: { mint(payload: PolicyFlow & { tool: string }): Promise<string> }
  launcher: Pick<Launcher, 'prefixes'>
  catalogue: Catalogue
  principal: { subject: string; issuer: string } | undefined
  config: ToolConfig | undefined
}

/**
 * The elicitation channel of approvals over MCP. `held` tells a held change's envelope; `ask` turns it into a form
 * for the person when the system policy allows (else undefined: the plain `E_HUMAN_REQUIRED`); `answered` files a
 * person's yes for exactly the sealed request and runs the sealed `--confirm` again (which counts it), or refuses.
 */
export function policyFlow(deps: PolicyFlowDeps) {
  const { sdk, catalogue, config } = deps
  // Who answered, as the audit names the approver: the authenticated subject, else the client the host declared.
  const who = () =>
    deps.principal
      ? `${deps.principal.issuer}#${deps.principal.subject}`
      : `client:${deps.server.server.getClientVersion()?.name ?? 'unknown'}`
  return {
    held: (envelope: Record<string, unknown>) => heldOf(envelope) !== undefined,

    async ask(def: ToolDef, desc: CommandDescription, envelope: Record<string, unknown>): Promise<unknown> {
      const held = heldOf(envelope)!
      if (!config || !(await elicitationEnabled(config.bin))) return undefined
      return sdk.inputRequired({
        inputRequests: {
          policy: sdk.inputRequired.elicit({
            message: await policyApprovalMessage(config.bin, held, desc.risk),
            requestedSchema: POLICY_APPROVAL_SCHEMA as never,
          }),
        },
        requestState: await deps.codec.mint({
          kind: 'policy',
          request: held.request,
          resume: held.resume,
          tool: def.name,
        }),
      })
    },

    async answered(
      state: PolicyFlow,
      responses: Record<string, unknown> | undefined,
      rerun: (argv: string[]) => Promise<unknown>,
    ): Promise<unknown> {
      const { decodeRequest } = await import('../approvals/request.js')
      const prepared = decodeRequest(state.request)
      const resume = resumeArgv(deps.launcher.prefixes, state.resume)
      // Both were sealed by this process from the call's own envelope: neither is the model's.
      if (!prepared || !resume || !config)
        return toolResult(
          errorEnvelopeOf(new AgentError('E_INTERNAL', 'an approval round this server cannot continue'), catalogue),
        )
      const view = sdk.inputResponse(responses as never, 'policy')
      const content = view.kind === 'elicit' && view.action === 'accept' ? (view.content ?? {}) : undefined
      if (content?.approve === true) {
        // Filed only for the request this round was sealed with, and only when the person named that request:
        // an answer a host mixed up with another round's files nothing. The channel is checked again (the
        // operator may have turned it off since the form was shown).
        // The id is typed by a person: spaces around it do not matter.
        const named = typeof content.request_id === 'string' ? content.request_id.trim() : undefined
        if (named === prepared.id && (await elicitationEnabled(config.bin)))
          await fileElicitation(config, state.request, who())
        return rerun(resume)
      }
      if (content || (view.kind === 'elicit' && view.action === 'decline'))
        return toolResult(
          errorEnvelopeOf(
            new AgentError('E_FORBIDDEN', `a person at the MCP host declined ${prepared.id}`, {
              details: {
                reason: 'approval_declined',
                request_id: prepared.id,
                fix: 'the change was not applied; do not retry it unless the person asks again',
              },
            }),
            catalogue,
          ),
        )
      // Cancelled (dismissed without an answer): the plain held answer, which another channel may still clear.
      return rerun(resume)
    },
  }
}

/**
 * A change the policy holds for a person's approval, from the `E_HUMAN_REQUIRED` a `--confirm` answered: the
 * request (id and the `ar1.` word) and the command that applies it once approved.
 */
export type Held = {
  requestId: string
  request: string
  resume: string
  rule: string | null
  /** The approvals the rule asks for, and how many already count. */
  required: number
  valid: number
}

/** The approval form's answer: a yes, and the request id the person approved (it must be this request's). */
export const POLICY_APPROVAL_SCHEMA = {
  type: 'object',
  properties: {
    approve: { type: 'boolean', title: 'Approve this change', default: false },
    request_id: { type: 'string', title: 'Request id (as shown above)' },
  },
  required: ['approve', 'request_id'],
} as const

/** The held approval an envelope reports, if it is one (`details.action: approve` with its request). */
export function heldOf(envelope: Record<string, unknown>): Held | undefined {
  const error = envelope.error as { code?: string; details?: Record<string, unknown> } | undefined
  const d = error?.details
  if (error?.code !== 'E_HUMAN_REQUIRED' || d?.action !== 'approve') return undefined
  // Exactly the gate's shape (src/write/gate.ts): a checkpoint whose action is `approve` is not a held change.
  if (typeof d.request_id !== 'string' || !/^ar_[0-9a-f]{24}$/.test(d.request_id) || d.checkpoint_id !== undefined)
    return undefined
  if (typeof d.request !== 'string' || !d.request.startsWith('ar1.') || typeof d.resume !== 'string') return undefined
  return {
    requestId: d.request_id,
    request: d.request,
    resume: d.resume,
    rule: typeof d.rule === 'string' ? d.rule : null,
    required: Number(d.approvals_required) || 1,
    valid: Number(d.approvals_valid) || 0,
  }
}

/**
 * What the person reads before approving: the exact change as the request binds it (command, every target named
 * in it, arguments), the declared risk and what cannot be undone, the request id, policy and expiry. Built from
 * the request itself (decoded here), never from what the model passed.
 */
export async function policyApprovalMessage(bin: string, held: Held, risk: Risk | undefined): Promise<string> {
  const { decodeRequest } = await import('../approvals/request.js')
  const r = decodeRequest(held.request)?.request
  if (!r) return `${bin}: approval request ${held.requestId} (undecodable)`
  const shown = r.targets.map(([id]) => id).join(', ')
  const more = r.target_count > r.targets.length ? ` … and ${r.target_count - r.targets.length} more` : ''
  const lines = [
    `${bin} holds this change for a person's approval (policy rule ${held.rule}). Answer only if you are a person, not the model.`,
    `Command: ${bin} ${r.command.replaceAll(':', ' ')}`,
    `Targets (${r.target_count}): ${shown}${more}`,
    `Arguments: ${r.args === null ? `(long; SHA-256 ${r.args_digest})` : JSON.stringify(r.args)}`,
    risk
      ? `Risk: ${risk.action}, blast radius ${risk.blast_radius}; ${risk.reversible ? `reversible${risk.undo ? ` (undo: ${risk.undo})` : ''}` : 'CANNOT BE UNDONE'}${risk.cost ? `; cost: ${risk.cost}` : ''}`
      : 'Risk: not declared',
    `Request: ${held.requestId} (policy ${r.policy}, expires ${r.expires_at})`,
    `Approvals: ${held.valid} of ${held.required} so far; this answer counts as one.`,
    `To approve, set "approve" and type the request id ${held.requestId}.`,
  ]
  return lines.join('\n')
}

/**
 * Whether the operator turned the elicitation channel on: in the system policy (`/etc/<bin>/policy.json`) alone,
 * read afresh for every held call. Anything unreadable or unsafe is off (the call itself then refuses with the
 * reason); the tool's defaults and the user's file never turn it on.
 */
export async function elicitationEnabled(bin: string): Promise<boolean> {
  const { readSystemPolicy } = await import('../policy/load.js')
  try {
    return readSystemPolicy(bin)?.approval?.channels?.includes('mcp-elicitation') === true
  } catch {
    return false
  }
}

/**
 * File a person's yes for `request` where the call's `--confirm` reads approvals (the fleet's store when a state URL
 * is set, else this machine's), MAC'd with the confirm key ring as `WriteCommand` reads it by default
 * (`toolKeyRing`: a tool that overrides `secretSource` verifies with its own keys, so such an approval does not
 * count: it fails closed).
 */
export async function fileElicitation(config: ToolConfig, request: string, who: string): Promise<void> {
  const { decodeRequest } = await import('../approvals/request.js')
  const { mintElicitation } = await import('../approvals/elicitation.js')
  const prepared = decodeRequest(request)
  if (!prepared) return
  const ring = await toolKeyRing(config)
  const { fleetBackendOf } = await import('../run/checkpoints.js')
  const fleet = (await fleetBackendOf(config))?.primitives
  const store = fleet
    ? (await import('../fleet/ledgers.js')).sharedApprovalStore(fleet)
    : (await import('../approvals/store.js')).fileApprovalStore(config.dataDir)
  await store.add(prepared.id, mintElicitation(ring, prepared, who, Date.now()))
}
