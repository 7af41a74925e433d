import { validationError } from '../errors/agent-error.js'
import { registerSecret } from '../output/redact-secrets.js'

/** What `--url` allows, as its refusals say it. */
const ALLOWED =
  'an http:// or https:// URL of a Streamable HTTP MCP endpoint, without user:password (http://127.0.0.1:3000/mcp)'

/**
 * `--url`: the Streamable HTTP endpoint of any MCP server, for the official suite alone. Any host is taken: the
 * caller names the server, and verify adds nothing to reach it (no header, no credential). Only http(s), and no
 * `user:password@`: the suite has no way to send them, and the URL is the report's `target`, so a password there
 * would be printed (it is registered with the redactor and never echoed, not even in this refusal).
 */
export function conformanceUrl(raw: string): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    // Not a URL, but it may still hold a password (`//user:secret@host/mcp`): what precedes an `@` is not echoed.
    const shown = raw.includes('@') ? `…@${raw.slice(raw.lastIndexOf('@') + 1)}` : raw
    throw validationError(`not a URL: '${shown}'`, ALLOWED, shown)
  }
  if (url.username || url.password) {
    if (url.password) registerSecret(url.password)
    throw validationError(
      'a URL with credentials (user:password@) is not allowed: the suite cannot send them, and the URL is the report’s target',
      ALLOWED,
      `${url.protocol}//…@${url.host}${url.pathname}`,
    )
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw validationError(`${url.protocol} is not an MCP transport the suite speaks`, ALLOWED, url.protocol)
  // The fragment is never sent; dropped so the report names the URL the suite asked.
  url.hash = ''
  return url.href
}
