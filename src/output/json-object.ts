/**
 * `text` parsed as one JSON object (an envelope, a JSON-RPC message), or undefined when it is not JSON or not an
 * object: what a caller reading another process's output asks before it looks at any key.
 */
export function parseJsonObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}
