import type { z as Z, ZodType } from 'zod'

/** The zod namespace, handed to schema thunks so command modules never import zod at start-up. */
export type ZodNamespace = typeof Z

/**
 * A command's output schema, written as a function of `z`. zod costs as much to load as @oclif/core itself, so
 * schemas are built only when something needs them: `reference`, `--fields`, or output validation in tests.
 */
export type OutputSchema<T extends ZodType = ZodType> = (z: ZodNamespace) => T

/** Declare an output schema with its type kept: `static output = output((z) => z.object({ … }))`. */
export function output<T extends ZodType>(build: (z: ZodNamespace) => T): OutputSchema<T> {
  return build
}

/** The data type an output schema describes. */
export type OutputOf<S> = S extends OutputSchema<infer T> ? Z.infer<T> : never

let loaded: Promise<ZodNamespace> | undefined

/** Load zod once, on first need. */
export function loadZod(): Promise<ZodNamespace> {
  loaded ??= import('zod').then((m) => m.z)
  return loaded
}
