import { createHmac } from 'node:crypto'
import type { KeyRing } from '../confirm/secret.js'
import type { PolicyFlow } from './policy-flow.js'

// The state of an input-required round (2026-07-28) goes to the client and comes back with the retry, possibly to
// another server of the same tool (stateless HTTP behind a load balancer). So it is sealed with a key every such
// server derives from the tool's confirm key ring, not a key of one process, and names the principal it was minted
// for: echoed by anyone else it is refused exactly as a forged one is.

/** What an input-required round hands the client to echo back: which flow, for which tool, with what. */
export type FlowState = ({ kind: 'approve'; token: string } | { kind: 'resume'; resume: string } | PolicyFlow) & {
  tool: string
}

/** How long a sealed state stays good: the longest a person may take to answer the round. */
export const STATE_TTL_SECONDS = 3600

/** The label the state key is derived under, so it is never a key confirm tokens (or task ids) are MACed with. */
const PURPOSE = 'agentcli/mcp-request-state/v1'

/** Between a key id and the SDK's wire string: not in a key id (`[A-Za-z0-9_-]`) nor in the SDK's base64url. */
const KID_END = '~'

/**
 * The key one key of the ring seals state with, for one tool (`identity`: its bin and package name, so a tool
 * sharing a fleet's ring with another cannot replay that one's state).
 */
export function stateKey(secret: Buffer, identity: string): Buffer {
  return createHmac('sha256', secret).update(`${PURPOSE}\0${identity}`).digest()
}

/** The SDK's `createRequestStateCodec` (only what is used of the SDK here, so a test can pass the real one). */
export type CodecFactory = (options: { key: Uint8Array; ttlSeconds: number }) => {
  mint(payload: unknown): Promise<string>
  verify(state: string, ctx: never): Promise<unknown>
}

/** What the SDK's codec seals: the flow and who it was minted for. */
type Sealed = { flow: FlowState; principal: string }

/** Seals flow state for a principal; `verify` throws on anything it would not have minted for that principal. */
export type StateSealer = {
  mint(flow: FlowState, principal: string): Promise<string>
  verify(state: string, principal: string): Promise<FlowState>
}

/**
 * The SDK's HMAC codec under keys derived from the ring (loaded on first use): a state is minted with the current
 * key, its id ahead of the SDK's wire string, and verified with whichever key of the ring it names, so states
 * minted before a rotation stay good while their key is in the ring. Its payload carries the principal (`who`:
 * `principalKey()`); `verify` refuses (throws, which the SDK's seam answers as `-32602` "Invalid or expired
 * requestState") a state that is malformed, forged, altered, expired, under a key not in the ring, of another
 * tool or of another principal.
 */
export function stateSealer(
  create: CodecFactory,
  ring: () => Promise<KeyRing>,
  identity: string,
  ttlSeconds = STATE_TTL_SECONDS,
): StateSealer {
  const codecs = new Map<string | null, ReturnType<CodecFactory>>()
  const codecOf = (id: string | null, secret: Buffer) => {
    let codec = codecs.get(id)
    if (!codec) {
      codec = create({ key: stateKey(secret, identity), ttlSeconds })
      codecs.set(id, codec)
    }
    return codec
  }
  return {
    async mint(flow, principal) {
      const { current } = await ring()
      const sealed = await codecOf(current.id, current.key).mint({ flow, principal } satisfies Sealed)
      return current.id === null ? sealed : `${current.id}${KID_END}${sealed}`
    },
    async verify(state, principal) {
      const { keys } = await ring()
      const end = state.indexOf(KID_END)
      const id = end === -1 ? null : state.slice(0, end)
      const secret = keys.get(id)
      if (!secret) throw new Error('key')
      // No bind callback: the SDK's codec ignores its context.
      const sealed = (await codecOf(id, secret).verify(state.slice(end + 1), undefined as never)) as Sealed
      // Its MAC holds: minted by `mint` above, so of this shape.
      if (sealed.principal !== principal) throw new Error('principal')
      return sealed.flow
    },
  }
}

/**
 * The flow state of a retried call of `tool`, from what the seam verified: a state minted for another tool of
 * this server (a genuine one, echoed on the wrong call) is no state at all, so that call runs as if fresh.
 */
export function flowStateOf(value: unknown, tool: string): FlowState | undefined {
  const state = value as Partial<FlowState> | undefined
  if (!state || typeof state !== 'object' || state.tool !== tool) return undefined
  if (state.kind === 'approve' && typeof state.token === 'string') return state as FlowState
  if (state.kind === 'resume' && typeof state.resume === 'string') return state as FlowState
  if (state.kind === 'policy' && typeof state.request === 'string' && typeof state.resume === 'string')
    return state as FlowState
  return undefined
}
