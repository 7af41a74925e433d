import type { Interfaces } from '@oclif/core'
import * as OclifFlags from '@oclif/core/flags'
import { validationError } from './errors/agent-error.js'

/** Options of {@link integer}. */
export type IntegerFlagOptions = {
  min?: number
  max?: number
  description?: string
  summary?: string
  env?: string
  helpGroup?: string
  hidden?: boolean
  required?: boolean
}

function integerParser(min: number | undefined, max: number | undefined) {
  const allowed = { type: 'integer', ...(min === undefined ? {} : { min }), ...(max === undefined ? {} : { max }) }
  const range = [min === undefined ? '' : `>= ${min}`, max === undefined ? '' : `<= ${max}`]
    .filter(Boolean)
    .join(' and ')
  return async (input: string): Promise<number> => {
    const value = Number(input)
    const ok = /^-?\d+$/.test(input.trim()) && Number.isSafeInteger(value)
    if (!ok || (min !== undefined && value < min) || (max !== undefined && value > max)) {
      throw validationError(`expected an integer${range ? ` ${range}` : ''} (got: '${input}')`, allowed, input)
    }
    return value
  }
}

/**
 * An integer flag whose bad values are `E_VALIDATION` with `allowed: {type, min, max}` and `got`, so an agent can
 * correct the next call without reading help.
 */
function integer(options: IntegerFlagOptions & { default: number }): Interfaces.OptionFlag<number>
function integer(options?: IntegerFlagOptions): Interfaces.OptionFlag<number | undefined>
function integer(
  options: IntegerFlagOptions & { default?: number } = {},
): Interfaces.OptionFlag<number> | Interfaces.OptionFlag<number | undefined> {
  const { min, max, ...rest } = options
  const flag = OclifFlags.custom<number>({ parse: integerParser(min, max) })(rest as Record<string, unknown>)
  // Read by `reference`, which would otherwise see a string-valued option flag.
  return Object.assign(flag, { valueType: 'integer', min, max }) as Interfaces.OptionFlag<number | undefined>
}

/** oclif's flag builders, with `integer` replaced by one that reports `allowed` and `got`. */
export const Flags = { ...OclifFlags, integer } as Omit<typeof OclifFlags, 'integer'> & { integer: typeof integer }
