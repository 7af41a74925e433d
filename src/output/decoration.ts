/**
 * Machine output carries no decoration. The strings the framework emits around a command's data (an error's
 * `message`, `details.hint` and `details.fix`, a notice's `message`, `hint` and `fix`) lose the ANSI escape
 * sequences, other control characters and emoji pictographs an author put in them. A command's `data` is the
 * user's and is never touched.
 */

/**
 * Escape sequences: CSI (`ESC [` or 8-bit CSI) with its parameters and final byte; OSC, DCS, SOS, PM and APC
 * strings up to their terminator (BEL or ST), or to the end when cut short; any other `ESC` with its
 * intermediates and final byte.
 */
const ESCAPES =
  /(?:\u001b\[|\u009b)[\u0030-\u003f]*[\u0020-\u002f]*[\u0040-\u007e]?|(?:\u001b[\]PX^_]|[\u009d\u0090\u0098\u009e\u009f])[^\u0007\u001b\u009c]*(?:\u0007|\u001b\\|\u009c)?|\u001b[\u0020-\u002f]*[\u0030-\u007e]?/g

/** C0 and C1 controls but tab and line feed (JSON escapes them all; these two still shape a message). */
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g

/**
 * An emoji with what joins or modifies it (variation selector, keycap, skin tone, ZWJ sequence, tag sequence),
 * and one space after it; or such a component left on its own (a keycap's digit stays). ©, ® and ™ are
 * pictographic too but are text. Kept as the pattern's text: a regular expression literal is built when the
 * module is evaluated, and from a code cache that means parsing its Unicode property classes on every start.
 */
const EMOJI = String.raw`(?:(?![\u00a9\u00ae\u2122])\p{Extended_Pictographic}|\p{Regional_Indicator})(?:\u{fe0f}|\u{20e3}|[\u{1f3fb}-\u{1f3ff}]|[\u{e0020}-\u{e007f}]|\u{200d}\p{Extended_Pictographic})*`
// Built on first use: parsing its Unicode property classes costs most of a millisecond, and most messages are plain.
let decoration: RegExp | undefined
const decorationPattern = () =>
  (decoration ??= new RegExp(`(${EMOJI})[ \\t]?|[\\u{fe0f}\\u{20e3}\\u{1f3fb}-\\u{1f3ff}\\u{e0020}-\\u{e007f}]`, 'gu'))

/** Printable ASCII, tab and line feed: nothing to take out (most messages). */
const PLAIN = /^[\t\n\u0020-\u007e]*$/

/**
 * `text` without escape sequences, control characters (but tab and line feed) or emoji. An emoji in `keep` stays:
 * it is data the message echoes (`task 🦄 not found` when the id is `🦄`), not decoration.
 */
export function plainText(text: string, keep: ReadonlySet<string> = NONE): string {
  if (PLAIN.test(text)) return text
  const out = text
    .replace(ESCAPES, '')
    .replace(CONTROLS, '')
    .replace(decorationPattern(), (match, emoji: string | undefined) =>
      emoji !== undefined && keep.has(emoji) ? match : '',
    )
  // A pictograph at the end leaves the space before it.
  return out === text ? text : out.replace(/[ \t]+$/, '')
}

const NONE: ReadonlySet<string> = new Set()

/** Whether `text` holds decoration that machine output must not carry (emoji in `keep` are data). */
export function isDecorated(text: string, keep?: ReadonlySet<string>): boolean {
  return plainText(text, keep) !== text
}

/**
 * The emoji the data of `record` holds: every string under it, at any depth up to a bound, but the members named
 * `prose`. A message that echoes them (an id, a rejected value) keeps them.
 */
export function dataEmoji(record: Record<string, unknown>, prose: readonly string[]): Set<string> {
  const found = new Set<string>()
  let budget = 1000
  const visit = (value: unknown, depth: number): void => {
    if (budget-- <= 0 || depth > 8) return
    if (typeof value === 'string') {
      if (!PLAIN.test(value)) for (const [emoji] of value.matchAll(new RegExp(EMOJI, 'gu'))) found.add(emoji)
    } else if (Array.isArray(value)) for (const v of value) visit(v, depth + 1)
    else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) visit(v, depth + 1)
  }
  for (const [key, value] of Object.entries(record)) if (!prose.includes(key)) visit(value, 0)
  return found
}

/**
 * A copy of `record` with the string members named by `keys` plain (keeping the emoji its other members hold);
 * the same object when none changes.
 */
export function plainMembers<T extends Record<string, unknown>>(
  record: T,
  keys: readonly string[],
  keep: ReadonlySet<string> = dataEmoji(record, keys),
): T {
  let out: Record<string, unknown> | undefined
  for (const key of keys) {
    const value = record[key]
    if (typeof value !== 'string') continue
    const plain = plainText(value, keep)
    if (plain === value) continue
    out ??= { ...record }
    out[key] = plain
  }
  return (out as T | undefined) ?? record
}
