import { rmSync } from 'node:fs'
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills'
import { beforeEach, describe, expect, it } from 'vitest'
import { useColdTasks } from '../../support/cold-tasks.js'
import { env, seed, storeBytes, storePath, tasks, useSandbox } from '../../support/helpers.js'
import { openSession, sc, useSharedSession, withoutDuration } from '../../support/mcp-session.js'

// Not about the warm pool: the servers start none (cold-tasks.ts).
useColdTasks()

type Tool = { name: string; inputSchema: { properties?: Record<string, Record<string, unknown>>; required?: string[] } }

// The listing and the read-only calls need no fresh server: they share one, over a sandbox seeded once with five
// tasks (task 1 is "one"), and none of them changes what another reads. The writes keep their own state.
const reads = useSharedSession({
  setup: (b) =>
    seed(
      b,
      Array.from({ length: 5 }, (_, i) => ({ id: String(i + 1), title: i === 0 ? 'one' : `t${i + 1}` })),
    ),
})

describe('tool mcp: the listing', () => {
  const box = () => reads().box

  it('lists one tool per command of reference (mcp itself excepted), sorted, names with _; then describe_tool', async () => {
    const ref = env(await tasks(box(), ['reference']))
    const { s } = reads()
    // The client's default: the 2025-11-25 initialize handshake, which the server still serves.
    expect(s.client.getProtocolEra()).toBe('legacy')
    const { tools } = await s.client.listTools()
    const expected = (ref.data.commands as Array<{ path: string }>)
      .map((c) => c.path)
      .filter((p) => p !== 'mcp')
      .map((p) => p.replaceAll(' ', '_'))
      // The example's listing is past its budget: describe_tool returns the output schemas it leaves out.
      .concat('describe_tool')
    expect(tools.map((t) => t.name)).toEqual(expected)
    expect((await s.client.listTools()).tools.map((t) => t.name)).toEqual(expected)
    const get = tools.find((t) => t.name === 'get')!
    expect(get.title).toBe('Show one task')
    expect(get.description).toContain('')
  })

  it('gives arguments in snake_case with enums, bounds, defaults and required kept; outputSchema is the envelope', async () => {
    const { s } = reads()
    const { tools } = await s.client.listTools()
    const byName = (n: string) => tools.find((t) => t.name === n) as unknown as Tool
    const create = byName('create')
    // `name` is create's deprecated alias of `title`: still accepted, so still an argument
    expect(Object.keys(create.inputSchema.properties!).sort()).toEqual(
      ['confirm', 'dry_run', 'fields', 'idempotency_key', 'name', 'title'].sort(),
    )
    // create asks for its title on a terminal, so nothing is required up front
    expect(create.inputSchema.required ?? []).toEqual([])
    const list = byName('list').inputSchema.properties!
    expect(list.limit).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 20 })
    expect(list.status).toMatchObject({ type: 'string', enum: ['open', 'done'] })
    expect(byName('delete').inputSchema.properties!.ids).toMatchObject({ type: 'array', items: { type: 'string' } })
    const out = sc(await s.client.callTool({ name: 'describe_tool', arguments: { name: 'get' } })).outputSchema as {
      properties: Record<string, unknown>
      $defs: Record<string, unknown>
    }
    // data is get's own task shape, with its members' descriptions; the error envelope is under $defs.
    expect(JSON.stringify(out.properties.data)).toContain('Task id')
    expect(out.properties.data).toMatchObject({ additionalProperties: false })
    expect(JSON.stringify(out.$defs.error)).toContain('E_[A-Z0-9_]+')
  })

  it('annotates from what commands declare: reads read-only, writes destructive unless declared not, upstream open-world', async () => {
    const { s } = reads()
    const { tools } = await s.client.listTools()
    const a = (n: string) => tools.find((t) => t.name === n)!.annotations
    for (const read of ['get', 'list', 'reference', 'context', 'doctor', 'changelog', 'job_status'])
      expect(a(read), read).toMatchObject({ readOnlyHint: true, destructiveHint: false, idempotentHint: true })
    // delete takes an idempotency key (a batch resumes under it), so it is idempotent too
    expect(a('delete')).toMatchObject({ readOnlyHint: false, destructiveHint: true, idempotentHint: true })
    expect(a('edit')).toMatchObject({ idempotentHint: false })
    expect(a('edit')).toMatchObject({ readOnlyHint: false, destructiveHint: true })
    // create only adds, and takes an idempotency key
    expect(a('create')).toMatchObject({ readOnlyHint: false, destructiveHint: false, idempotentHint: true })
    expect(a('sync')).toMatchObject({ openWorldHint: true })
    expect(a('get')).toMatchObject({ openWorldHint: false })
    // The declarations behind them are in reference, per command.
    const ref = env(await tasks(box(), ['reference'])).data.commands as Array<{ path: string; hints: unknown }>
    const hints = (p: string) => ref.find((c) => c.path === p)!.hints
    expect(hints('create')).toEqual({ destructive: false, idempotent: false, open_world: false })
    expect(hints('delete')).toEqual({ destructive: true, idempotent: false, open_world: false })
    expect(hints('sync')).toMatchObject({ open_world: true })
    expect(hints('get')).toMatchObject({ destructive: false })
  })
})

describe('tool mcp: the size of the listing', () => {
  it('tools/list stays within 25 kB: past it, output schemas leave the listing and describe_tool returns each', async () => {
    const { s } = reads()
    const listing = await s.client.listTools()
    const text = JSON.stringify(listing)
    // 63 KB with every output schema in full (issue 25 asks for 25 KB): the example's data shapes were two
    // thirds of it. Each tool keeps its name, title, description, arguments and annotations.
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(25_000)
    expect(text).not.toContain(String(Number.MAX_SAFE_INTEGER))
    expect(text).not.toContain('$schema')
    expect(text).not.toContain('"required":[]')
    const commands = listing.tools.filter((t) => t.name !== 'describe_tool')
    expect(commands.length).toBeGreaterThan(20)
    const full: Record<string, { outputSchema: { $defs: { error: unknown }; properties: { data: unknown } } }> = {}
    for (const tool of commands) {
      expect(tool.outputSchema, tool.name).toBeUndefined()
      expect(tool._meta, tool.name).toEqual({ 'agentcli/output_schema': 'describe_tool' })
      expect(tool.inputSchema.type).toBe('object')
      const described = sc(await s.client.callTool({ name: 'describe_tool', arguments: { name: tool.name } }))
      // The listed definition is the full one minus its output schema.
      expect(described).toMatchObject({
        name: tool.name,
        inputSchema: tool.inputSchema,
        annotations: tool.annotations,
      })
      full[tool.name] = described
    }
    // Every full output schema: without what tells a client nothing, the error envelope once per tool by reference.
    const all = JSON.stringify(full)
    expect(all).not.toContain(String(Number.MAX_SAFE_INTEGER))
    expect(all).not.toContain('$schema')
    expect(all).not.toMatch(/"format":"date-time","pattern"|"pattern":"\^\(\?:\(\?:\\\\d/)
    for (const [name, { outputSchema }] of Object.entries(full)) {
      expect(Object.keys(outputSchema.$defs), name).toEqual(['error'])
      expect(outputSchema.$defs.error).toEqual(full.get!.outputSchema.$defs.error)
      expect(JSON.stringify(outputSchema)).toContain('"error":{"$ref":"#/$defs/error"}')
      // data is the command's own shape, not any object.
      expect(outputSchema.properties.data, name).not.toEqual({ type: 'object' })
    }
    // A tool without an advertised output schema still answers with structured content, unvalidated by the client.
    const r = await s.client.callTool({ name: 'list', arguments: {} })
    expect(sc(r).ok).toBe(true)
  })
})

describe('tool mcp: calls answer with the CLI envelope', () => {
  const box = () => reads().box

  it('a read returns the same envelope the CLI prints (all but duration_ms); isError false; the text is that envelope', async () => {
    const cli = env(await tasks(box(), ['get', '1']))
    const { s } = reads()
    const r = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
    expect(r.isError).toBe(false)
    expect(withoutDuration(sc(r))).toEqual(withoutDuration(cli))
    // The text content is the envelope alone: nothing before or after it.
    expect(r.content).toHaveLength(1)
    expect(JSON.parse((r.content as Array<{ text: string }>)[0]!.text)).toEqual(sc(r))
    const fields = await s.client.callTool({ name: 'get', arguments: { id: '1', fields: 'title' } })
    expect(sc(fields).data).toEqual({ title: 'one' })
  })

  it('every error class keeps its code, retryable and details; isError true; the text is the envelope', async () => {
    const { s } = reads()
    const cases: Array<[string, Record<string, unknown>, string[], string]> = [
      ['get', { id: '99' }, ['get', '99'], 'E_NOT_FOUND'],
      ['list', { limit: 1000 }, ['list', '--limit', '1000'], 'E_VALIDATION'],
      ['list', { status: 'nope' }, ['list', '--status', 'nope'], 'E_VALIDATION'],
      ['create', { title: 'x' }, ['create', '--title', 'x'], 'E_CONFIRMATION_REQUIRED'],
      [
        'edit',
        { id: '1', title: 'y', confirm: 'ct_2.forged.sig' },
        ['edit', '1', '--title', 'y', '--confirm', 'ct_2.forged.sig'],
        'E_CONFLICT',
      ],
      ['login', {}, ['login'], 'E_HUMAN_REQUIRED'],
      ['sync', { dry_run: true }, ['sync', '--dry-run'], 'E_CONFIG'],
      [
        'job_status',
        { id: 'job_00000000000000000000' },
        ['job', 'status', '--id', 'job_00000000000000000000'],
        'E_NOT_FOUND',
      ],
    ]
    for (const [tool, args, argv, code] of cases) {
      const r = await s.client.callTool({ name: tool, arguments: args })
      const cli = env(await tasks(box(), argv))
      expect(sc(r).error?.code, `${tool} ${JSON.stringify(args)}`).toBe(code)
      expect(r.isError).toBe(true)
      const envelope = withoutDuration(sc(r))
      // A checkpoint is new on each call: its id and expiry differ, everything else is the CLI's.
      if (code === 'E_HUMAN_REQUIRED') {
        expect(Object.keys(envelope.error.details).sort()).toEqual(Object.keys(cli.error.details).sort())
      } else expect(envelope, tool).toEqual(withoutDuration(cli))
      expect(JSON.parse((r.content as Array<{ text: string }>)[0]!.text)).toEqual(sc(r))
    }
  })

  it('a bad argument is a tool error with a code, and the server stays up', async () => {
    const { s } = reads()
    const bad = await s.client.callTool({ name: 'get', arguments: { id: { nested: true } } })
    expect(bad.isError).toBe(true)
    expect(sc(bad).error).toMatchObject({ code: 'E_VALIDATION', details: { param: 'id' } })
    const reserved = await s.client.callTool({ name: 'get', arguments: { id: '1', format: 'text' } })
    expect(sc(reserved).error.code).toBe('E_USAGE')
    const missing = await s.client.callTool({ name: 'get', arguments: {} })
    expect(sc(missing).error.code).toBe('E_USAGE')
    const after = await s.client.callTool({ name: 'get', arguments: { id: '1' } })
    expect(sc(after).ok).toBe(true)
  })

  it('reference, context, doctor and changelog are read tools returning their CLI data', async () => {
    const { s } = reads()
    for (const name of ['reference', 'context', 'doctor', 'changelog']) {
      const r = await s.client.callTool({ name, arguments: {} })
      expect(sc(r).ok, name).toBe(true)
    }
    const ref = await s.client.callTool({ name: 'reference', arguments: {} })
    expect(sc(ref).data.tool).toBe('tasks')
  })

  it('a stream returns its items up to max_items with the truncation hint, else every item and the summary', async () => {
    const { s } = reads()
    const all = sc(await s.client.callTool({ name: 'export', arguments: {} }))
    expect(all.ok).toBe(true)
    expect(all.data.items.map((t: { id: string }) => t.id)).toEqual(['1', '2', '3', '4', '5'])
    expect(all.data.summary).toMatchObject({ count: 5 })
    const cut = sc(await s.client.callTool({ name: 'export', arguments: { max_items: 2 } }))
    expect(cut.data.items).toHaveLength(2)
    expect(cut.meta).toMatchObject({ truncated: true })
    expect(cut.meta.truncation_hint).toContain('max_items')
  })

  it('offers the tool SKILL.md through the skills extension', async () => {
    const { s } = reads()
    const skills = new SkillsClient(s.client)
    expect(skills.supported).toBe(true)
    const listing = await skills.list()
    const skill = listing.skills.find((k) => k.frontmatter.name === 'tasks')!
    expect(skill).toBeDefined()
    const file = await skills.read(skill)
    expect(file.verified).toBe(true)
    const text = file.text ?? new TextDecoder().decode(file.bytes)
    expect(text).toContain('tasks reference')
    expect(text).toContain('requires.min_version')
  })
})

describe('tool mcp: writes keep the gate, one secret and one ledger with the CLI', () => {
  // A client without elicitation: one server for these writes, each test starting from an empty store (the ledger
  // keeps every token it saw, and no test reuses another's).
  const plain = useSharedSession()
  const box = () => plain().box
  beforeEach(() => rmSync(storePath(box()), { force: true }))
  const own = useSandbox()

  it('no token → E_CONFIRMATION_REQUIRED saying how to dry-run over MCP; nothing written', async () => {
    const { s } = plain()
    const before = storeBytes(box())
    const r = await s.client.callTool({ name: 'create', arguments: { title: 'x' } })
    expect(sc(r).error.code).toBe('E_CONFIRMATION_REQUIRED')
    // The envelope first, alone; how to go on over MCP in a block of its own.
    const [first, hint] = r.content as Array<{ text: string }>
    expect(JSON.parse(first!.text)).toEqual(sc(r))
    expect(hint!.text).toContain('dry_run: true')
    expect(storeBytes(box())).toBe(before)
  })

  it('a token minted over MCP confirms once on the CLI, and then not over MCP', async () => {
    const { s } = plain()
    const dry = sc(await s.client.callTool({ name: 'create', arguments: { title: 'mcp-made', dry_run: true } }))
    expect(dry.data.preview.changes[0].action).toBe('create')
    const token = dry.data.confirm_token as string
    const applied = await tasks(box(), ['create', '--title', 'mcp-made', '--confirm', token])
    expect(env(applied).ok, applied.stdout).toBe(true)
    const again = sc(await s.client.callTool({ name: 'create', arguments: { title: 'mcp-made', confirm: token } }))
    expect(again.ok).toBe(false)
    expect(again.error.code).toBe('E_CONFLICT')
    expect(env(await tasks(box(), ['list'])).data.items).toHaveLength(1)
  })

  it('a token minted on the CLI confirms once over MCP, and then not on the CLI', async () => {
    seed(box(), [{ id: '1', title: 'one' }])
    const { s } = plain()
    const token = env(await tasks(box(), ['delete', '1', '--dry-run'])).data.confirm_token as string
    const applied = sc(await s.client.callTool({ name: 'delete', arguments: { ids: ['1'], confirm: token } }))
    expect(applied.ok).toBe(true)
    const again = await tasks(box(), ['delete', '1', '--confirm', token])
    expect(env(again).ok).toBe(false)
    expect(env(again).error.code).toBe('E_CONFLICT')
    expect(env(await tasks(box(), ['list'])).data.items).toHaveLength(0)
  })

  it('a client that can show a form asks the person; only an explicit yes applies the change', async () => {
    const asked: string[] = []
    // One person at one client, answering yes, then each way of not saying yes.
    let answer: { action: 'accept' | 'decline' | 'cancel'; content?: Record<string, unknown> } = {
      action: 'accept',
      content: { approve: true },
    }
    const person = await openSession(own(), {
      elicit: (p) => {
        asked.push(p.message)
        return answer
      },
    })
    try {
      const r = sc(await person.client.callTool({ name: 'create', arguments: { title: 'approved' } }))
      expect(r.ok).toBe(true)
      expect(r.data.title).toBe('approved')
      expect(asked[0]).toContain('"action": "create"')
      for (const no of [
        { action: 'decline' as const },
        { action: 'cancel' as const },
        { action: 'accept' as const, content: { approve: false } },
      ]) {
        answer = no
        const r = sc(await person.client.callTool({ name: 'create', arguments: { title: 'refused' } }))
        expect(r.error.code, JSON.stringify(no)).toBe('E_CONFIRMATION_REQUIRED')
      }
    } finally {
      await person.close()
    }
    expect(env(await tasks(own(), ['list'])).data.items.map((t: { title: string }) => t.title)).toEqual(['approved'])
    const off = await openSession(own(), {
      args: ['--no-approval'],
      elicit: () => ({ action: 'accept', content: { approve: true } }),
    })
    try {
      const r = sc(await off.client.callTool({ name: 'create', arguments: { title: 'never asked' } }))
      expect(r.error.code).toBe('E_CONFIRMATION_REQUIRED')
    } finally {
      await off.close()
    }
  })
})
