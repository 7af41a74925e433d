import { isSensitiveKey, REDACTED, redactString } from '../output/redact.js'

/** Flags whose value must never reach the audit log, whatever the command (a token is a bearer secret). */
const TOKEN_FLAGS = new Set(['--confirm'])

/** Confirm tokens replaced by `<token>` (the record keeps that one was given, never which). */
function withoutTokens(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!
    const eq = a.indexOf('=')
    if (TOKEN_FLAGS.has(a)) {
      out.push(a)
      if (i + 1 < argv.length) out.push('<token>')
      i++
    } else if (eq > 0 && TOKEN_FLAGS.has(a.slice(0, eq))) out.push(`${a.slice(0, eq)}=<token>`)
    else out.push(a)
  }
  return out
}

/**
 * The one argv scrubber, for the audit log and any other record of a command line: confirm tokens replaced,
 * the value of a flag that names a secret (`--password x`, `--api-key=x`) never written, the rest scrubbed like
 * any text. Idempotent, so a record scrubbed twice is the same record.
 */
export function scrubArgv(argv: readonly string[]): string[] {
  const tokenless = withoutTokens(argv)
  const out: string[] = []
  for (let i = 0; i < tokenless.length; i++) {
    const token = tokenless[i]!
    const eq = token.indexOf('=')
    const name = token.startsWith('--') ? token.slice(2, eq === -1 ? undefined : eq) : ''
    if (name && isSensitiveKey(name)) {
      if (eq !== -1) out.push(`--${name}=${REDACTED}`)
      else {
        out.push(token)
        if (i + 1 < tokenless.length && !tokenless[i + 1]!.startsWith('-')) {
          out.push(REDACTED)
          i++
        }
      }
    } else out.push(redactString(token))
  }
  return out
}
