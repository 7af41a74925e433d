import { isDeepStrictEqual } from 'node:util'
import { mapSchema } from './_schema-defs.js'

/*
 * The one shorthand of the compact `reference` inside its schemas: an object schema whose `properties` are all
 * `required` (in their order) and that allows nothing else (`additionalProperties: false`), the shape of every
 * plain zod object, drops these two keys and `type: "object"`. Expansion puts them back on any schema with
 * `properties` and none of the three;
 * compaction is checked to give back every schema exactly, and the document says `closed_objects: false` when
 * one would not (an open object with no `required`, say), in which case no schema is shortened.
 */

type Schema = Record<string, unknown>

function isClosed(node: Schema): boolean {
  if (typeof node.properties !== 'object' || node.properties === null || node.type !== 'object') return false
  return node.additionalProperties === false && isDeepStrictEqual(node.required, Object.keys(node.properties as Schema))
}

/** Drop `type`, `required` and `additionalProperties` of every closed, all-required object schema. */
export function closeObjects(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (!isClosed(node)) return node
    const { type: _, required: __, additionalProperties: ___, ...rest } = node
    return rest
  })
}

/**
 * Put back `type: "object"`, `required` (every property) and `additionalProperties: false` where
 * {@link closeObjects} dropped them: on a schema with `properties` and none of the three.
 */
export function openObjects(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (typeof node.properties !== 'object' || node.properties === null) return node
    if ('type' in node || 'required' in node || 'additionalProperties' in node) return node
    return { type: 'object', ...node, required: Object.keys(node.properties as Schema), additionalProperties: false }
  })
}
