import type { IncomingMessage } from 'node:http'
import type { TaskListenRequest } from './task-listen.js'

/** A refusal of the standard MCP headers: the HTTP status and the JSON-RPC error. */
export type HeaderRefusal = { httpStatus: number; error: { code: number; message: string; data?: unknown } }

/**
 * The SDK's checks of the standard request headers, for a listen it does not route: its own classifier for the
 * header/body cross-checks (`MCP-Protocol-Version`, `Mcp-Method`; `-32020`), then the presence of both, which the
 * SDK checks only on what it dispatches. `legacy`: not a modern request, so the SDK answers it as any other.
 */
export function listenHeaderRefusal(
  sdk: typeof import('@modelcontextprotocol/server'),
  req: IncomingMessage,
  message: TaskListenRequest,
): HeaderRefusal | 'legacy' | undefined {
  const header = (name: string) => {
    const value = req.headers[name]
    return Array.isArray(value) ? value.join(', ') : value
  }
  const headers = {
    protocolVersionHeader: header('mcp-protocol-version'),
    mcpMethodHeader: header('mcp-method'),
    mcpNameHeader: header('mcp-name'),
  }
  const present = Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined))
  const verdict = sdk.classifyInboundRequest({ httpMethod: 'POST', body: message, ...present })
  if (verdict.kind === 'reject')
    return {
      httpStatus: verdict.httpStatus,
      error: {
        code: verdict.code,
        message: verdict.message,
        ...(verdict.data !== undefined ? { data: verdict.data } : {}),
      },
    }
  if (verdict.kind === 'legacy') return 'legacy'
  const missing =
    headers.protocolVersionHeader === undefined
      ? 'MCP-Protocol-Version'
      : headers.mcpMethodHeader === undefined
        ? 'Mcp-Method'
        : undefined
  if (missing === undefined) return undefined
  return {
    httpStatus: 400,
    error: {
      code: HEADER_MISMATCH,
      message: `Bad Request: the request headers and body disagree: the body names method ${message.method} but the required ${missing} header is absent`,
      data: { mismatch: { header: '(missing)', body: message.method } },
    },
  }
}

/** The standard headers disagreeing with the body (SEP-2243 `HeaderMismatch`), as the SDK answers it. */
const HEADER_MISMATCH = -32020
