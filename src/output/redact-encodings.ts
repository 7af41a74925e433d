/**
 * The forms a registered secret takes when an upstream carries it encoded, computed once when it is registered:
 * base64 (standard and URL-safe, with and without padding, and at each of the three byte alignments inside a
 * larger blob such as a Basic `user:secret` credential), percent-encoding (URI component, form and path style,
 * upper- and lower-case hex) and hex. Each form comes with the literal run the prefilter looks for.
 */

/**
 * One encoded form and the literal run every text holding it contains: undefined when it has none long enough
 * (every text is then searched in full), null when another form's needle already implies it.
 */
export type EncodedForm = { form: string; needle: string | null | undefined }

/** Characters JSON may escape (a quote, backslash, slash, control character or surrogate) split a run. */
const JSON_UNSAFE = /["\\/\u0000-\u001f\ud800-\udfff]+/

function longest(pieces: string[], min: number): string | undefined {
  let best = ''
  for (const piece of pieces) if (piece.length > best.length) best = piece
  return best.length >= min ? best : undefined
}

/** The longest run of `text` that survives JSON escaping, when it is at least `min` long. */
export function jsonRun(text: string, min: number): string | undefined {
  return longest(text.split(JSON_UNSAFE), min)
}

const urlSafe = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_')

/**
 * The base64 characters that depend only on the secret's bytes when it starts `shift` bytes into a blob: the
 * leading ones mix in the bytes before it (2 characters at shift 1, 3 at shift 2), a trailing partial group
 * mixes in the byte after it.
 */
function base64Core(bytes: Buffer, shift: number): string {
  const text = Buffer.concat([Buffer.alloc(shift), bytes])
    .toString('base64')
    .replace(/=+$/, '')
  const tail = (bytes.length + shift) % 3 === 0 ? 0 : 1
  return text.slice([0, 2, 3][shift], text.length - tail)
}

function base64Forms(bytes: Buffer, min: number): EncodedForm[] {
  const padded = bytes.toString('base64')
  const whole = [padded, padded.replace(/=+$/, '')]
  // The needle ignores the characters in which the two alphabets differ, so one needle serves both.
  const needleOf = (core: string) => longest(core.split(/[+/=_-]+/), 4)
  const out: EncodedForm[] = []
  for (const shift of [0, 1, 2]) {
    const core = base64Core(bytes, shift)
    if (core.length < min) continue
    out.push({ form: core, needle: needleOf(core) }, { form: urlSafe(core), needle: needleOf(core) })
  }
  // A text holding a whole form holds the shift-0 core, so only the cores need needles (listed first: a whole
  // form equal to a core is the core, needle kept).
  for (const form of whole) out.push({ form, needle: null }, { form: urlSafe(form), needle: null })
  return out
}

const lowerHex = (s: string) => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())

function percentForms(secret: string): EncodedForm[] {
  let component: string
  try {
    component = encodeURIComponent(secret)
  } catch {
    // A lone surrogate has no UTF-8, so no upstream can have percent-encoded it.
    return []
  }
  // Form bodies (`+` for a space, `*` kept, `~` encoded) and path-style encoders that keep `/` (Python's quote).
  const form = new URLSearchParams({ v: secret }).toString().slice(2)
  const path = component.replace(/%2F/g, '/')
  return [component, form, path].flatMap((f) => {
    // Escapes and what JSON may escape split the run. A form without a long literal part is looked for by `%`:
    // it has one, since a form differing from the secret by `+` for a space alone is one long literal run.
    const needle = jsonRun(f.replace(/%[0-9A-Fa-f]{2}/g, '"'), 4) ?? '%'
    return [
      { form: f, needle },
      { form: lowerHex(f), needle },
    ]
  })
}

/** Every encoded form of `secret` other than itself, at least `min` characters long. */
export function encodedForms(secret: string, min: number): EncodedForm[] {
  const bytes = Buffer.from(secret)
  const hex = bytes.toString('hex')
  const all = [
    ...base64Forms(bytes, min),
    ...percentForms(secret),
    { form: hex, needle: hex },
    { form: hex.toUpperCase(), needle: hex.toUpperCase() },
  ]
  const seen = new Set([secret])
  return all.filter(({ form }) => form.length >= min && !seen.has(form) && seen.add(form))
}
