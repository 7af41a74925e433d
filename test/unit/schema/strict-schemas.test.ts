import { expandReference } from 'agentcli'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { describe, expect, it } from 'vitest'
import { REFERENCE_OUTPUT_SCHEMA } from '../../../src/describe/_reference-schema.js'
import { inputSchemaOf, outputSchemaOf } from '../../../src/mcp/tools.js'
import { env, TASKS_BIN } from '../../support/helpers.js'
import { runBinInProcess as runTool } from '../../support/in-process.js'

// In-process (test/support/in-process.ts): moved from the spawn tier, every assertion kept.
// Every JSON Schema the example publishes — in `reference` (full and compact), as MCP tool schemas, and the
// reference document's own — compiles under Ajv's strict mode, which refuses unknown keywords: a validator or
// agent handed one of them never has to be told to look away (issue 22: `x-deprecation` did not compile).
const strict = (strictTypes = true) => {
  const ajv = new Ajv2020({ strict: true, strictTypes, allErrors: true })
  ;(addFormats as unknown as (a: Ajv2020) => void)(ajv)
  return ajv
}
type Command = {
  path: string
  output_schema: Record<string, unknown>
  result_schema: Record<string, unknown> | null
  params: never
  stream: boolean
}
const compiles = (name: string, schema: unknown, strictTypes = true) => {
  try {
    strict(strictTypes).compile(schema as object)
    return [name, 'ok']
  } catch (error) {
    return [name, (error as Error).message]
  }
}

describe('published schemas compile under strict Ajv', () => {
  it('reference: every output and result schema, and the reference document schema itself', async () => {
    const ref = env(await runTool(TASKS_BIN, ['reference'])).data as { commands: Command[] }
    const schemas = ref.commands.flatMap((c) => [
      [`${c.path} output`, c.output_schema],
      ...(c.result_schema ? [[`${c.path} result`, c.result_schema]] : []),
    ]) as Array<[string, unknown]>
    schemas.push(['reference document', REFERENCE_OUTPUT_SCHEMA])
    expect(schemas.map(([n, s]) => compiles(n, s))).toEqual(schemas.map(([n]) => [n, 'ok']))
    // The deprecated field is still marked, in the standard way, and its details stay in deprecated_fields.
    const context = ref.commands.find((c) => c.path === 'context')!
    const environment = (context.output_schema.properties as Record<string, Record<string, unknown>>).environment
    expect(environment).toMatchObject({ deprecated: true, description: 'Deprecated: goes away in 2.0; use env.' })
    expect(JSON.stringify(ref)).not.toContain('x-deprecation')
    expect((context as unknown as { deprecated_fields: unknown }).deprecated_fields).toEqual([
      {
        path: 'environment',
        message: 'field environment is deprecated and goes away in 2.0; use env',
        replaced_by: 'env',
        removed_in: '2.0',
      },
    ])
  })

  it('compact reference: no unknown keyword in its schemas, and its expansion compiles in full strictness', async () => {
    const doc = env(await runTool(TASKS_BIN, ['reference', '--compact'])).data
    const schemas = (doc.commands as Array<{ path: string; output_schema?: Record<string, unknown> }>)
      .filter((c) => c.output_schema && !String(c.output_schema.$ref ?? '').startsWith('agentcli:'))
      .map((c) => [c.path, { ...c.output_schema, ...(doc.$defs ? { $defs: doc.$defs } : {}) }] as [string, unknown])
    expect(schemas.length).toBeGreaterThan(5)
    // Its one shorthand drops the `type` a closed object or a literal implies (expansion puts it back): valid JSON
    // Schema that Ajv's strictTypes lint would flag, so the compact form is held to strictSchema (no unknown
    // keyword), and what `expandReference()` gives back to full strict mode.
    expect(schemas.map(([n, s]) => compiles(n, s, false))).toEqual(schemas.map(([n]) => [n, 'ok']))
    const expanded = expandReference(doc) as unknown as { commands: Command[] }
    const full = expanded.commands.map((c) => [c.path, c.output_schema] as [string, unknown])
    expect(full.map(([n, s]) => compiles(n, s))).toEqual(full.map(([n]) => [n, 'ok']))
  })

  it('MCP: every tool input and output schema', async () => {
    const ref = env(await runTool(TASKS_BIN, ['reference'])).data as { commands: Command[] }
    const schemas = ref.commands.flatMap((c) => [
      [`${c.path} input`, inputSchemaOf(c)],
      [`${c.path} output`, outputSchemaOf(c)],
    ]) as Array<[string, unknown]>
    expect(schemas.map(([n, s]) => compiles(n, s))).toEqual(schemas.map(([n]) => [n, 'ok']))
  })
})
