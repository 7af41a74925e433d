import { AgentError } from '../errors/agent-error.js'

const EXCERPT = 512

/**
 * The data of a successful response. When the request asked for JSON (its `accept` names json, the client's
 * default) or the response says it is JSON, a non-empty body must parse: an HTML error page, a truncated body or
 * a proxy's login page behind a 200 is the upstream's fault, `E_SERVER` with `details.reason: "malformed_body"`
 * and a message that says what to check, never a crash in the tool's code.
 */
export function parseBody(
  method: string,
  url: URL,
  status: number,
  contentType: string,
  accept: string,
  text: string,
): unknown {
  const saysJson = /\bjson\b/i.test(contentType)
  const wantsJson = /\bjson\b/i.test(accept)
  if (!text || (!saysJson && !wantsJson)) return text
  try {
    return JSON.parse(text)
  } catch {
    const got = contentType || 'no content-type'
    throw new AgentError(
      'E_SERVER',
      `${method} ${url.pathname} answered HTTP ${status} with a body that is not valid JSON (${got}): the upstream ` +
        `at ${url.origin} is not answering as its API does; check that the configured URL points at the API, then retry`,
      {
        details: {
          reason: 'malformed_body',
          upstream: {
            method,
            url: `${url.origin}${url.pathname}`,
            status,
            content_type: got,
            body: text.slice(0, EXCERPT),
          },
          _untrusted: ['upstream.body'],
        },
      },
    )
  }
}
