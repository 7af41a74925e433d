import { dataEmoji, isDecorated } from '../output/decoration.js'
import type { Call } from './call.js'
import type { Report } from './report.js'

type Doc = Record<string, unknown>

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v)

/** The JSON documents of one stdout: the whole of it (an indented envelope) or each NDJSON line. */
function documents(stdout: string): Doc[] {
  const parse = (text: string) => {
    try {
      const doc: unknown = JSON.parse(text)
      return isDoc(doc) ? [doc] : []
    } catch {
      return []
    }
  }
  const whole = parse(stdout)
  return whole.length ? whole : stdout.split('\n').flatMap(parse)
}

type Prose = { where: string; value: unknown; keep: ReadonlySet<string> }

/**
 * The prose an agent reads around the data, by where it sits: an error's message, hint and fix, each notice's;
 * with the emoji its data holds (an echoed id or value is data, not decoration).
 */
function prose(doc: Doc): Prose[] {
  const out: Prose[] = []
  if (isDoc(doc.error)) {
    const details = isDoc(doc.error.details) ? doc.error.details : {}
    const keep = dataEmoji(details, ['hint', 'fix'])
    out.push(
      { where: 'error.message', value: doc.error.message, keep },
      { where: 'details.hint', value: details.hint, keep },
      { where: 'details.fix', value: details.fix, keep },
    )
  }
  const notices = isDoc(doc.meta) && Array.isArray(doc.meta.notices) ? doc.meta.notices : []
  for (const n of notices.filter(isDoc)) {
    const keep = dataEmoji(n, ['message', 'hint', 'fix'])
    for (const key of ['message', 'hint', 'fix']) out.push({ where: `notice.${key}`, value: n[key], keep })
  }
  return out
}

/**
 * Machine output carries no decoration: an error's message, `details.hint` and `details.fix`, or a notice, that
 * holds an ANSI escape, a control character or an emoji (but one its data holds) fails `envelope.no_decoration`. JSON writes an escape
 * as `\u001b`, which `stdio.no_ansi` (reading the bytes) cannot see; this reads the parsed strings.
 */
export function decorationCheck(calls: Call[], report: Report): void {
  const found: string[] = []
  for (const c of calls)
    for (const doc of documents(c.stdout))
      for (const { where, value, keep } of prose(doc))
        if (typeof value === 'string' && isDecorated(value, keep))
          found.push(`${c.label}: ${where} ${JSON.stringify(value)}`)
  report.add(
    'envelope.no_decoration',
    'envelope',
    found.length === 0,
    found.length
      ? found.slice(0, 5).join('; ').slice(0, 400)
      : `${calls.length} calls, no ANSI escape, control character or emoji in an error's message, hint or fix, or a notice`,
  )
}
