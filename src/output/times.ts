// An ISO 8601 date-time with an explicit UTC offset other than `Z`: `2026-01-02T03:04:05+02:00` (also `+0200`,
// `+02`, a fraction, no seconds). Without an offset a time is local and ambiguous; those are left as they are.
const OFFSET_TIME = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:[.,]\d{1,9})?)?)([+-])(\d{2})(?::?(\d{2}))?$/

/**
 * A time string with an offset, as the same instant in UTC with `Z` (`toISOString`, millisecond precision);
 * anything else unchanged. The contract is that every time leaves the process in UTC.
 */
export function utcTime(value: string): string {
  // Cheap rejection first: this runs on every string of every envelope and stream item.
  const n = value.length
  if (n < 17 || n > 40 || value.charCodeAt(10) !== 84 /* T */ || value.charCodeAt(4) !== 45 /* - */) return value
  // Already UTC (`…Z`), as nearly every time is: no regex.
  if (value.charCodeAt(n - 1) === 90) return value
  const m = OFFSET_TIME.exec(value)
  if (!m || !realClock(m[1]!, Number(m[3]), Number(m[4] ?? 0))) return value
  const ms = Date.parse(`${m[1]!.replace(',', '.')}${m[2]}${m[3]}:${m[4] ?? '00'}`)
  return Number.isNaN(ms) ? value : new Date(ms).toISOString()
}

/** Date.parse rolls `02-30` over into March: only a real calendar date and clock reading is a time. */
function realClock(local: string, offsetHours: number, offsetMinutes: number): boolean {
  const [y, mo, d, h, mi, s] = local.split(/[-T:.,]/).map(Number) as number[]
  const day = new Date(Date.UTC(y!, mo! - 1, d!))
  return (
    day.getUTCMonth() === mo! - 1 &&
    day.getUTCDate() === d &&
    h! <= 23 &&
    mi! <= 59 &&
    (s === undefined || s <= 59) &&
    offsetHours <= 23 &&
    offsetMinutes <= 59
  )
}

/**
 * `value` with every time string under it in UTC (see {@link utcTime}). Copies only along a path that changed,
 * so the common case (nothing to change) allocates nothing.
 */
export function utcTimes<T>(value: T): T {
  if (typeof value === 'string') return utcTime(value) as T
  if (value === null || typeof value !== 'object') return value
  if (Array.isArray(value)) {
    let out: unknown[] | undefined
    for (let i = 0; i < value.length; i++) {
      const next = utcTimes(value[i])
      if (next === value[i]) continue
      out ??= value.slice()
      out[i] = next
    }
    return (out ?? value) as T
  }
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return value
  let out: Record<string, unknown> | undefined
  // for…in instead of Object.keys: no array per object (this runs on every item of a stream). It also visits
  // enumerable keys inherited from Object.prototype, if anything put one there; those are skipped where they
  // would matter, on a change.
  for (const key in value) {
    const current = (value as Record<string, unknown>)[key]
    const next = utcTimes(current)
    if (next === current || !Object.hasOwn(value, key)) continue
    out ??= { ...(value as Record<string, unknown>) }
    out[key] = next
  }
  return (out ?? value) as T
}
