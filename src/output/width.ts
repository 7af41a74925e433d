/**
 * Terminal display width of text: East Asian Wide and Fullwidth characters and emoji take two columns, combining
 * marks, joiners and variation selectors none. Small on purpose (no grapheme segmenter): it is right for what
 * tables hold (words, CJK, emoji, flags, ZWJ sequences) and costs nothing at start-up.
 */

import { runEnv } from '../settings/run-env.js'

// East Asian Width W/F blocks (Unicode 16 EastAsianWidth.txt), emoji aside: those come from Emoji_Presentation.
const WIDE: ReadonlyArray<readonly [number, number]> = [
  [0x1100, 0x115f],
  [0x2329, 0x232a],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xa960, 0xa97f],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe10, 0xfe19],
  [0xfe30, 0xfe6f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x16fe0, 0x16fe4],
  [0x17000, 0x18cff],
  [0x1b000, 0x1b2ff],
  [0x1f200, 0x1f2ff],
  [0x20000, 0x2fffd],
  [0x30000, 0x3fffd],
]

// Built on first use: V8 builds a Unicode property class when the literal is evaluated (≈ 0.3 ms for the four),
// and most runs print JSON, never measuring a width.
let classes: { zero: RegExp; emoji: RegExp; pictographic: RegExp; modifier: RegExp } | undefined
const unicode = () =>
  (classes ??= {
    zero: /^[\p{Mn}\p{Me}\p{Cf}]$/u,
    emoji: /^\p{Emoji_Presentation}$/u,
    pictographic: /^\p{Extended_Pictographic}$/u,
    modifier: /^\p{Emoji_Modifier}$/u,
  })
const ZWJ = 0x200d
const VS16 = 0xfe0f

function isWide(cp: number): boolean {
  if (cp < 0x1100) return false
  for (const [lo, hi] of WIDE) {
    if (cp < lo) return false
    if (cp <= hi) return true
  }
  return false
}

function isRegional(cp: number): boolean {
  return cp >= 0x1f1e6 && cp <= 0x1f1ff
}

/** Split text into display clusters with their widths: a ZWJ sequence, a flag or a base with its marks is one. */
function clusters(text: string): Array<{ text: string; width: number }> {
  const out: Array<{ text: string; width: number }> = []
  let joined = false
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    const last = out[out.length - 1]
    if (last && (joined || cp === ZWJ || unicode().zero.test(ch) || (unicode().modifier.test(ch) && last.width > 0))) {
      last.text += ch
      // A text-style pictograph followed by VS16 is drawn as an emoji, two columns.
      if (
        cp === VS16 &&
        last.width === 1 &&
        unicode().pictographic.test(String.fromCodePoint(last.text.codePointAt(0)!))
      )
        last.width = 2
      joined = cp === ZWJ
      continue
    }
    joined = false
    if (last && isRegional(cp) && last.text.length === 2 && isRegional(last.text.codePointAt(0)!)) {
      last.text += ch
      continue
    }
    const width = cp < 0x20 || (cp >= 0x7f && cp < 0xa0) ? 0 : isWide(cp) || unicode().emoji.test(ch) ? 2 : 1
    out.push({ text: ch, width })
  }
  return out
}

/** Columns `text` takes on a terminal. */
export function displayWidth(text: string): number {
  // Fast path: printable ASCII is one column per character.
  if (/^[\x20-\x7e]*$/.test(text)) return text.length
  let width = 0
  for (const c of clusters(text)) width += c.width
  return width
}

/** Cut `text` to at most `width` columns, ending in `…` when something was cut. */
export function truncate(text: string, width: number): string {
  if (displayWidth(text) <= width) return text
  if (width <= 0) return ''
  let out = ''
  let used = 0
  for (const c of clusters(text)) {
    if (used + c.width > width - 1) break
    out += c.text
    used += c.width
  }
  return `${out}…`
}

/** Pad `text` with spaces to `width` columns. */
export function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - displayWidth(text)))
}

/**
 * Break `text` into lines of at most `width` columns at spaces. A word wider than the line (a token, a URL, a
 * path) stays whole on a line of its own: broken, it could not be copied.
 */
export function wrap(text: string, width: number): string[] {
  if (width <= 0 || displayWidth(text) <= width) return [text]
  const lines: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    const next = line ? `${line} ${word}` : word
    if (line && displayWidth(next) > width) {
      lines.push(line)
      line = word
    } else line = next
  }
  if (line) lines.push(line)
  return lines
}

/** The width to lay text out in: the terminal's columns, else `COLUMNS`, else 80. */
export function terminalColumns(stream: { isTTY?: boolean; columns?: number } = process.stdout): number {
  if (stream.isTTY && typeof stream.columns === 'number' && stream.columns > 0) return stream.columns
  const fromEnv = Number(runEnv().COLUMNS)
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv
  return 80
}
