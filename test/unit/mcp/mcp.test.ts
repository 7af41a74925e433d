import { AjvJsonSchemaValidator } from '@modelcontextprotocol/client/validators/ajv'
import { describe, expect, it } from 'vitest'
import type { CommandDescription } from '../../../src/describe/command.js'
import type { Param } from '../../../src/describe/params.js'
import { checkpointRequest, resumeArgv, shellWords } from '../../../src/mcp/_flows.js'
import { toolAnnotations } from '../../../src/mcp/annotations.js'
import { MAX_ARGV_BYTES, toArgv } from '../../../src/mcp/argv.js'
import { describeTool } from '../../../src/mcp/discovery.js'
import {
  DEFAULT_MAX_LIST_BYTES,
  inputSchemaOf,
  listedTools,
  listingBytes,
  maxListBytesOf,
  outputSchemaOf,
  type ToolDef,
  toolDefs,
} from '../../../src/mcp/tools.js'
import type { ToolConfig } from '../../../src/runtime/tool-config.js'

const param = (over: Partial<Param> & Pick<Param, 'name' | 'kind' | 'type'>): Param => ({
  required: false,
  multiple: false,
  default: null,
  options: null,
  description: '',
  env: null,
  char: null,
  ...over,
})

const edit: Pick<CommandDescription, 'path' | 'params'> = {
  path: 'task edit',
  params: [
    param({ name: 'ids', kind: 'arg', type: 'string', multiple: true, required: true }),
    param({ name: 'title', kind: 'flag', type: 'string' }),
    param({ name: 'dry-run', kind: 'flag', type: 'boolean', default: false }),
    param({ name: 'limit', kind: 'flag', type: 'integer', minimum: 1, maximum: 10, default: 5 }),
    param({ name: 'tag', kind: 'flag', type: 'string', multiple: true }),
  ],
}

describe('arguments → argv: the CLI call an MCP call is', () => {
  it('maps snake_case names to flags, arrays to repeats, true to a switch and false to nothing', () => {
    expect(toArgv(edit, { ids: ['1', '2'], title: 'x', dry_run: true, limit: 3, tag: ['a', 'b'] })).toEqual([
      'task',
      'edit',
      '1',
      '2',
      '--title',
      'x',
      '--dry-run',
      '--limit',
      '3',
      '--tag',
      'a',
      '--tag',
      'b',
    ])
    expect(toArgv(edit, { ids: ['1'], dry_run: false })).toEqual(['task', 'edit', '1'])
  })

  it('keeps a value that starts with - a value, and a positional that does one a positional', () => {
    expect(toArgv(edit, { ids: ['1'], title: '--confirm' })).toEqual(['task', 'edit', '1', '--title=--confirm'])
    expect(toArgv(edit, { ids: ['-1'], title: 't' })).toEqual(['task', 'edit', '--title', 't', '--', '-1'])
  })

  it('refuses a name the input schema does not list with E_USAGE: got, and allowed = the schema properties', () => {
    const allowed = Object.keys(inputSchemaOf({ ...edit, stream: false }).properties as object)
    for (const key of ['colour', 'help', 'dry-run', '__proto__', 'format=text', 'title --confirm', '-x', 'a.b'])
      expect(() => toArgv(edit, { ids: ['1'], [key]: true }), key).toThrow(
        expect.objectContaining({ code: 'E_USAGE', details: { got: key, allowed } }),
      )
  })

  it("takes max_items as the server's on a stream only; elsewhere it is an unknown argument", () => {
    expect(toArgv({ ...edit, stream: true }, { ids: ['1'], max_items: 5 })).toEqual(['task', 'edit', '1'])
    expect(() => toArgv(edit, { ids: ['1'], max_items: 5 })).toThrow(expect.objectContaining({ code: 'E_USAGE' }))
    const streamed = { ...edit, stream: true }
    expect(() => toArgv(streamed, { ids: ['1'], colour: 'red' })).toThrow(
      expect.objectContaining({
        details: expect.objectContaining({ allowed: Object.keys(inputSchemaOf(streamed).properties as object) }),
      }),
    )
  })

  it('bounds the bytes of the command line: E_VALIDATION naming the largest argument, at the bound exactly', () => {
    // `task edit 1 --title <t>`: the title's words take `--title` + NUL, the value + NUL; the id 1 + NUL.
    const fixed = '--title'.length + 1 + 2
    const value = MAX_ARGV_BYTES - fixed - 1
    const at = 'a'.repeat(value % 2) + 'é'.repeat(Math.floor(value / 2))
    expect(Buffer.byteLength(at) + 1 + fixed).toBe(MAX_ARGV_BYTES)
    expect(toArgv(edit, { ids: ['1'], title: at })).toHaveLength(5)
    expect(() => toArgv(edit, { ids: ['1'], title: `${at}x` })).toThrow(
      expect.objectContaining({
        code: 'E_VALIDATION',
        details: { param: 'title', max_bytes: MAX_ARGV_BYTES, got_bytes: MAX_ARGV_BYTES + 1 },
      }),
    )
    // Many small values count together.
    const many = Array.from({ length: MAX_ARGV_BYTES / 8 + 1 }, () => 'abcdefg')
    expect(() => toArgv(edit, { ids: many })).toThrow(
      expect.objectContaining({ details: expect.objectContaining({ param: 'ids' }) }),
    )
  })

  it('refuses a value no CLI call can express with E_VALIDATION naming the argument', () => {
    expect(() => toArgv(edit, { ids: ['1'], title: { a: 1 } })).toThrow(
      expect.objectContaining({ code: 'E_VALIDATION' }),
    )
    expect(() => toArgv(edit, { ids: [['1']] })).toThrow(expect.objectContaining({ code: 'E_VALIDATION' }))
  })
})

describe('the input schema and the annotations', () => {
  it('keeps bounds, defaults and arrays, in snake_case, closed to other names', () => {
    const schema = inputSchemaOf({ ...edit, stream: false }) as {
      properties: Record<string, unknown>
      required: string[]
    }
    expect(schema.properties.dry_run).toEqual({ type: 'boolean', default: false })
    expect(schema.properties.limit).toEqual({ type: 'integer', minimum: 1, maximum: 10, default: 5 })
    expect(schema.properties.ids).toEqual({ type: 'array', items: { type: 'string' }, minItems: 1 })
    expect(schema.required).toEqual(['ids'])
    // No $schema: 2020-12 is MCP's default dialect, and the key would ride along every tool of every listing.
    expect(schema).toMatchObject({ additionalProperties: false })
    expect(schema).not.toHaveProperty('$schema')
  })

  const hints = (destructive: boolean, idempotent = false, open_world = false) => ({
    destructive,
    idempotent,
    open_world,
  })
  const of = (type: string, h = hints(true), params: Param[] = []) =>
    toolAnnotations({ type: type as CommandDescription['type'], params, hints: h })

  it('derives them from the kind (read, local, write) and what the author declared', () => {
    expect(of('read', hints(false))).toEqual({
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    })
    expect(of('local', hints(false))).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: false,
    })
    expect(of('write')).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: false,
      openWorldHint: false,
    })
    expect(of('write', hints(false))).toMatchObject({ destructiveHint: false })
    expect(of('write', hints(true, true))).toMatchObject({ idempotentHint: true })
    expect(of('write', hints(true), [param({ name: 'idempotency-key', kind: 'flag', type: 'string' })])).toMatchObject({
      idempotentHint: true,
    })
    expect(of('read', hints(false, false, true))).toMatchObject({ openWorldHint: true })
    // A description baked by an older agentcli has no hints: a write is then destructive, nothing open-world.
    expect(toolAnnotations({ type: 'write', params: [] })).toMatchObject({
      destructiveHint: true,
      openWorldHint: false,
    })
  })
})

describe("a checkpoint's resume command, as it comes back from the client", () => {
  const prefixes = ['tasks', "/opt/node 24/bin/node '/srv/my tools/run.js'", 'node /srv/run.js']

  it('is recognised after the bin name or the words that start the tool off PATH', () => {
    expect(resumeArgv(prefixes, 'tasks login resume --id cp_1')).toEqual(['login', 'resume', '--id', 'cp_1'])
    expect(resumeArgv(prefixes, 'node /srv/run.js login resume --id cp_1')).toEqual(['login', 'resume', '--id', 'cp_1'])
    expect(
      resumeArgv(prefixes, "/opt/node 24/bin/node '/srv/my tools/run.js' login resume --store '/a b/it'\\''s'"),
    ).toEqual(['login', 'resume', '--store', "/a b/it's"])
  })

  it('is refused when it starts with anything else, or holds what a shell would read specially', () => {
    for (const text of [
      'rm -rf /',
      'tasksx login resume',
      'tasks',
      'node /elsewhere/run.js login resume',
      'tasks login resume; rm -rf ~',
      'tasks login resume $(id)',
      'tasks login resume `id`',
      'tasks login resume "quoted"',
      "tasks login resume 'open",
      'tasks login | sh',
    ])
      expect(resumeArgv(prefixes, text), text).toBeUndefined()
  })

  it('splits only plain and single-quoted words', () => {
    expect(shellWords("  a  'b c'd  ")).toEqual(['a', 'b cd'])
    expect(shellWords('a > b')).toBeUndefined()
    expect(shellWords('a\\ b')).toBeUndefined()
  })

  it('asks the person through its page (URL mode) when it has one the client opens, else a form, else nothing', async () => {
    const { inputRequired } = await import('@modelcontextprotocol/server')
    const page = { message: 'Open the page', url: 'https://example.test/device' }
    const both = { form: true, url: true }
    expect(checkpointRequest(inputRequired, page, both)).toEqual({
      method: 'elicitation/create',
      params: { mode: 'url', message: 'Open the page', url: 'https://example.test/device' },
    })
    const form = checkpointRequest(inputRequired, page, { form: true, url: false })
    expect(form).toMatchObject({ method: 'elicitation/create', params: { mode: 'form' } })
    expect(form?.params).toMatchObject({ message: 'Open the page. Accept once done.' })
    expect(checkpointRequest(inputRequired, { message: 'Run it', url: undefined }, both)?.params).toMatchObject({
      mode: 'form',
    })
    expect(checkpointRequest(inputRequired, page, { form: false, url: false })).toBeUndefined()
    expect(checkpointRequest(inputRequired, { message: 'Run it', url: undefined }, { form: false, url: true })).toBe(
      undefined,
    )
  })
})

describe("a tool's output schema, as the official client validates structured content", () => {
  const task = {
    type: 'object',
    properties: {
      id: { type: 'string', description: 'Task id.' },
      created_at: { type: 'string', format: 'date-time', pattern: '^(?:\\d{4})-.*$' },
      version: { type: 'integer', minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER },
      required: { type: 'boolean' },
    },
    required: ['id', 'created_at', 'version'],
    additionalProperties: false,
  }
  const validate = (schema: Record<string, unknown>, value: unknown) =>
    new AjvJsonSchemaValidator().getValidator(schema as never)(value).valid
  const ok = (data: unknown) => ({ ok: true, schema_version: '1.0', data, meta: {} })
  const failed = (code: string) => ({
    ok: false,
    schema_version: '1.0',
    error: { code, message: 'm', retryable: false, details: {} },
    meta: {},
  })

  it("constrains data to the command's schema: a wrong type or an unknown member fails", () => {
    const schema = outputSchemaOf({ output_schema: task, stream: false })
    expect(validate(schema, ok({ id: '1', created_at: '2026-01-01T00:00:00Z', version: 3 }))).toBe(true)
    expect(validate(schema, ok({ id: 1 }))).toBe(false)
    expect(validate(schema, ok({ id: '1', surprise: true }))).toBe(false)
    expect(validate(schema, ok({ id: '1', created_at: 'yesterday' }))).toBe(false)
    expect(validate(schema, { ok: true, schema_version: '1.0', meta: {} })).toBe(false)
  })

  it('accepts a fields projection, and an error envelope through the one $defs branch', () => {
    const schema = outputSchemaOf({ output_schema: task, stream: false })
    expect(validate(schema, ok({ id: '1' }))).toBe(true)
    expect(validate(schema, failed('E_NOT_FOUND'))).toBe(true)
    expect(validate(schema, failed('not-a-code'))).toBe(false)
    expect(validate(schema, { ...failed('E_NOT_FOUND'), ok: true })).toBe(false)
    // The error branch is written once: under $defs, referenced from the envelope.
    expect(JSON.stringify(schema).match(/"retryable"/g)).toHaveLength(2)
    expect((schema.properties as { error: unknown }).error).toEqual({ $ref: '#/$defs/error' })
  })

  it("drops only what tells a client nothing: the pattern beside a format, ±2^53 bounds; a member named 'required' stays", () => {
    const schema = outputSchemaOf({ output_schema: task, stream: true }) as {
      properties: { data: { properties: { items: { items: { properties: Record<string, unknown> } } } } }
    }
    const item = schema.properties.data.properties.items.items.properties
    expect(item.created_at).toEqual({ type: 'string', format: 'date-time' })
    expect(item.version).toEqual({ type: 'integer' })
    expect(item.required).toEqual({ type: 'boolean' })
    expect(JSON.stringify(schema)).not.toContain('$schema')
  })
})

describe('tools/list within its byte budget', () => {
  const command = (path: string, members: number) =>
    ({
      path,
      summary: `Do ${path}`,
      description: `Do ${path}.`,
      type: 'read',
      stream: false,
      params: [param({ name: 'id', kind: 'arg', type: 'string', required: true })],
      output_schema: {
        type: 'object',
        properties: Object.fromEntries(Array.from({ length: members }, (_, i) => [`m${i}`, { type: 'string' }])),
        additionalProperties: false,
      },
      hints: { destructive: false, idempotent: true, open_world: false },
    }) as unknown as CommandDescription
  const defs: ToolDef[] = toolDefs([command('get', 3), command('report', 400)])

  it("a write's declared risk is a line of its description, in the words of --help and SKILL.md", () => {
    const risk = { action: 'delete', blast_radius: 'set', reversible: false, undo: null, cost: null }
    const [plain, risky] = toolDefs([command('get', 1), { ...command('purge', 1), type: 'write', risk } as never])
    expect(plain!.description).toBe('Do get.')
    expect(risky!.description).toBe('Do purge.\n\nRisk: delete; a set of records; cannot be undone.')
  })

  it('lists every definition in full while the listing fits', () => {
    const { tools, compact } = listedTools(defs, 1_000_000)
    expect(compact).toBe(false)
    expect(tools.map((t) => t.outputSchema)).toEqual(defs.map((d) => d.outputSchema))
    expect(tools.every((t) => t._meta === undefined && !('command' in t))).toBe(true)
    expect(listingBytes(tools)).toBeGreaterThan(listingBytes(listedTools(defs, 0).tools))
  })

  it('past the budget drops each output schema for a pointer at describe_tool, and keeps all a call needs', () => {
    const full = listingBytes(listedTools(defs, 1_000_000).tools)
    const { tools, compact } = listedTools(defs, full - 1)
    expect(compact).toBe(true)
    for (const [i, t] of tools.entries()) {
      expect(t.outputSchema).toBeUndefined()
      expect(t._meta).toEqual({ 'agentcli/output_schema': 'describe_tool' })
      const { command: _, outputSchema: __, ...kept } = defs[i]!
      expect(t).toMatchObject(kept)
    }
    // Exactly at the budget it still lists in full.
    expect(listedTools(defs, full).compact).toBe(false)
  })

  it('describe_tool returns the full definition, output schema included; an unknown name is a tool error', async () => {
    const describe = describeTool(defs)
    expect(describe.def.inputSchema.properties).toEqual({ name: { type: 'string', enum: ['get', 'report'] } })
    const r = (await describe.handler({ name: 'report' }, {})) as { structuredContent: Record<string, unknown> }
    const { command: _, ...want } = defs[1]!
    expect(r.structuredContent).toEqual(want)
    expect(((await describe.handler({ name: 'nope' }, {})) as { isError: boolean }).isError).toBe(true)
  })

  it("reads the author's budget from package.json, 25 kB by default; anything but a count of bytes is E_CONFIG", () => {
    const config = (mcp?: unknown) =>
      ({ pjson: { agentcli: mcp === undefined ? {} : { mcp } } }) as unknown as ToolConfig
    expect(DEFAULT_MAX_LIST_BYTES).toBe(25_000)
    expect(maxListBytesOf(config())).toBe(25_000)
    expect(maxListBytesOf(config({ max_list_bytes: 0 }))).toBe(0)
    expect(maxListBytesOf(config({ max_list_bytes: 100_000 }))).toBe(100_000)
    for (const bad of [-1, 1.5, '25000', null])
      expect(() => maxListBytesOf(config({ max_list_bytes: bad }))).toThrow(
        expect.objectContaining({ code: 'E_CONFIG' }),
      )
  })
})

describe('the fuzzer never starts an HTTP server', () => {
  it('drops --http from an mcp invocation after the draw: other commands and the draw itself are unchanged', async () => {
    const { invocation, prng } = await import('../../../src/verify/fuzz.js')
    const boolean = { name: 'http', kind: 'flag', type: 'boolean', required: false, multiple: false }
    const ref = {
      commands: [
        { path: 'mcp', params: [boolean] },
        { path: 'serve', params: [boolean] },
      ],
    } as never
    const r = prng(7)
    const seen = { mcp: 0, serve: 0, serveHttp: 0 }
    for (let i = 0; i < 300; i++) {
      const { args } = invocation(r, ref)
      if (args[0] === 'mcp') {
        seen.mcp++
        expect(args).not.toContain('--http')
      }
      if (args[0] === 'serve') {
        seen.serve++
        if (args.includes('--http')) seen.serveHttp++
      }
    }
    expect(seen.mcp).toBeGreaterThan(50)
    expect(seen.serveHttp).toBeGreaterThan(10)
  })
})
