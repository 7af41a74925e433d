import { mapSchema } from './_schema-defs.js'

/*
 * A shorthand of the compact `reference` inside its schemas: `{"type": "string", "enum": [...]}` and
 * `{"type": "boolean", "const": true}` drop `type`, which the literal values imply (every value a string, or
 * every value a boolean; never for numbers, where `integer` and `number` cannot be told apart). Expansion puts
 * `type` back, first, on any schema with `const` or `enum` and no `type`; the document says
 * `implied_literal_types: false` when that would not give some schema back exactly, and no schema is shortened.
 */

type Schema = Record<string, unknown>

/** The type every literal of `node` has, when it is `string` or `boolean` for all of them. */
function literalType(node: Schema): 'string' | 'boolean' | undefined {
  const values = 'const' in node ? [node.const] : Array.isArray(node.enum) ? node.enum : undefined
  if (!values || values.length === 0) return undefined
  const type = typeof values[0]
  if (type !== 'string' && type !== 'boolean') return undefined
  return values.every((v) => typeof v === type) ? type : undefined
}

/** Drop a `type` (written first) that the schema's `const` or `enum` implies. */
export function untypeLiterals(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (Object.keys(node)[0] !== 'type' || literalType(node) !== node.type) return node
    const { type: _, ...rest } = node
    return rest
  })
}

/** Put back, first, the `type` {@link untypeLiterals} dropped. */
export function retypeLiterals(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if ('type' in node) return node
    const type = literalType(node)
    return type ? { type, ...node } : node
  })
}
