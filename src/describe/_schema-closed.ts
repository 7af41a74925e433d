import { isDeepStrictEqual } from 'node:util'
import { mapSchema } from './_schema-defs.js'

/*
 * The one shorthand of the compact `reference` inside its schemas: an object schema that allows nothing but its
 * `properties` (`additionalProperties: false`, the shape of every zod object) drops that key and
 * `type: "object"`, and `required` too when every property is required (in their order). Expansion puts them
 * back on any schema with `properties` and neither `type` nor `additionalProperties`;
 * compaction is checked to give back every schema exactly, and the document says `closed_objects: false` when
 * one would not (an open object with no `required`, say), in which case no schema is shortened.
 */

type Schema = Record<string, unknown>

function isClosed(node: Schema): boolean {
  if (typeof node.properties !== 'object' || node.properties === null || node.type !== 'object') return false
  return node.additionalProperties === false && Array.isArray(node.required)
}

/**
 * Drop `type` and `additionalProperties` of every closed object schema, and its `required` too when that lists
 * every property in order.
 */
export function closeObjects(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (!isClosed(node)) return node
    const { type: _, additionalProperties: __, ...rest } = node
    if (isDeepStrictEqual(node.required, Object.keys(node.properties as Schema))) delete rest.required
    return rest
  })
}

/**
 * Put back `type: "object"`, `additionalProperties: false` and (when absent) `required` listing every property,
 * where {@link closeObjects} dropped them: on a schema with `properties` and neither `type` nor
 * `additionalProperties`.
 */
export function openObjects(schema: unknown): unknown {
  return mapSchema(schema, (node) => {
    if (typeof node.properties !== 'object' || node.properties === null) return node
    if ('type' in node || 'additionalProperties' in node) return node
    const required = node.required ?? Object.keys(node.properties as Schema)
    return { type: 'object', ...node, required, additionalProperties: false }
  })
}
