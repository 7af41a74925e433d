import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'

/** A JSON Schema 2020-12 validator that checks formats (date-time, uri, …) instead of ignoring them. */
export function schemaValidator(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
  return ajv
}
