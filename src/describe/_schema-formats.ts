import { mapSchema } from './_schema-defs.js'

/*
 * A shorthand of the compact `reference` inside its schemas: zod writes a 256-byte regular expression beside every
 * `"format": "date-time"` (UTC, `z.iso.datetime()`), the same one each time. The compact form drops exactly that
 * pattern; expansion puts it back on every `date-time` schema without a pattern. The document says
 * `implied_formats: false` when that would not give some schema back exactly (a date-time schema with another
 * pattern or none), and no schema is shortened.
 */

/** zod 4's pattern for `z.iso.datetime()` (UTC, `Z` only), written beside `format: "date-time"`. */
const DATE_TIME_PATTERN =
  '^(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$'

/** Drop the pattern a `date-time` format implies. */
export function unpatternFormats(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (node.format !== 'date-time' || node.pattern !== DATE_TIME_PATTERN) return node
    const { pattern: _, ...rest } = node
    return rest
  })
}

/** Put back the pattern {@link unpatternFormats} dropped. */
export function repatternFormats(schema: unknown): unknown {
  return mapSchema(schema, (node) =>
    node.format === 'date-time' && !('pattern' in node) ? { ...node, pattern: DATE_TIME_PATTERN } : node,
  )
}
