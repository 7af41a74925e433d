import { describe, expect, it } from 'vitest'
import { env, seed, useSandbox } from '../../support/helpers.js'
import { tasksInProcess as tasks } from '../../support/in-process.js'

/*
 * --fields, in-process (test/support/in-process.ts); on what a job worker prints: test/cli/output/fields.test.ts.
 */
const box = useSandbox()

const two = () =>
  seed(box(), [
    { id: '1', title: 'a' },
    { id: '2', title: 'b', status: 'done' },
  ])

describe('--fields on a list: dotted paths of the page', () => {
  it('items.id, next_cursor and count keep exactly those paths', async () => {
    two()
    const run = await tasks(box(), ['list', '--limit', '1', '--fields', 'items.id,next_cursor,count'])
    expect(run.code).toBe(0)
    expect(env(run).data).toEqual({ items: [{ id: '1' }], next_cursor: expect.any(String), count: 1 })
  })

  it('items.title alone is a page of titles, without the page keys', async () => {
    two()
    const run = await tasks(box(), ['list', '--fields', 'items.title'])
    expect(env(run).data).toEqual({ items: [{ title: 'a' }, { title: 'b' }] })
  })

  it('count alone projects the page to its count', async () => {
    two()
    expect(env(await tasks(box(), ['list', '--fields', 'count'])).data).toEqual({ count: 2 })
  })

  it('the per-item shorthand (id,title) still projects each item and keeps the page keys', async () => {
    two()
    const run = await tasks(box(), ['list', '--fields', 'id,title'])
    expect(env(run).data).toEqual({
      items: [
        { id: '1', title: 'a' },
        { id: '2', title: 'b' },
      ],
      count: 2,
      next_cursor: null,
      has_more: false,
    })
  })

  it('shorthand and page paths mix: id,next_cursor', async () => {
    two()
    const run = await tasks(box(), ['list', '--fields', 'id,next_cursor'])
    expect(env(run).data).toEqual({ items: [{ id: '1' }, { id: '2' }], next_cursor: null })
  })

  it('an unknown path is E_VALIDATION naming both forms among the valid ones', async () => {
    const run = await tasks(box(), ['list', '--fields', 'items.colour'])
    expect(run.code).toBe(2)
    const error = env(run).error
    expect(error.code).toBe('E_VALIDATION')
    expect(error.details.got).toBe('items.colour')
    expect(error.details.allowed).toEqual(expect.arrayContaining(['items.id', 'next_cursor', 'count', 'id', 'title']))
  })
})

describe('--fields on union and untyped outputs', () => {
  it('a write accepts the paths of its dry-run preview and of its result', async () => {
    const dry = await tasks(box(), ['create', '--title', 'x', '--dry-run', '--fields', 'confirm_token,expires_at'])
    expect(dry.code).toBe(0)
    expect(Object.keys(env(dry).data).sort()).toEqual(['confirm_token', 'expires_at'])
    const token = env(dry).data.confirm_token
    const done = await tasks(box(), ['create', '--title', 'x', '--confirm', token, '--fields', 'id,title'])
    expect(done.code).toBe(0)
    expect(env(done).data).toEqual({ id: '1', title: 'x' })
  })

  it('a batch write projects results.id and summary', async () => {
    two()
    const dry = env(await tasks(box(), ['delete', '1', '2', '--dry-run', '--fields', 'confirm_token'])).data
    const run = await tasks(box(), [
      'delete',
      '1',
      '2',
      '--confirm',
      dry.confirm_token,
      '--fields',
      'results.id,summary',
    ])
    expect(run.code).toBe(0)
    expect(env(run).data).toEqual({
      results: [{ id: '1' }, { id: '2' }],
      summary: expect.objectContaining({ ok_count: 2, error_count: 0 }),
    })
  })

  it('a write still refuses a path none of its outputs has', async () => {
    const run = await tasks(box(), ['create', '--title', 'x', '--dry-run', '--fields', 'nope'])
    expect(env(run).error).toMatchObject({ code: 'E_VALIDATION', details: { param: '--fields', got: 'nope' } })
  })

  it('update --check (a union of two shapes) accepts a field of either shape', async () => {
    const dead = { TASKS_UPDATE_API_URL: 'http://127.0.0.1:9/' }
    const ok = await tasks(box(), ['update', '--check', '--fields', 'current_version,update_available'], {
      env: dead,
    })
    // Accepted: whatever the unreachable server does, it is not a --fields refusal.
    expect(env(ok).error?.details?.param).not.toBe('--fields')
    const bad = await tasks(box(), ['update', '--check', '--fields', 'no_such'], { env: dead })
    expect(env(bad).error).toMatchObject({ code: 'E_VALIDATION', details: { param: '--fields' } })
  })
})

describe('--fields names what the call prints', () => {
  it('a deprecated output field asked for by name adds a notice naming its replacement', async () => {
    const run = await tasks(box(), ['context', '--fields', 'environment,tool'])
    expect(run.code, run.stdout).toBe(0)
    expect(Object.keys(env(run).data).sort()).toEqual(['environment', 'tool'])
    expect(env(run).meta.notices).toContainEqual({
      type: 'deprecated',
      what: 'field',
      name: 'environment',
      message: expect.stringContaining('env'),
      replaced_by: 'env',
      removed_in: '2.0',
    })
    const modern = await tasks(box(), ['context', '--fields', 'env'])
    expect(env(modern).meta.notices ?? []).not.toContainEqual(expect.objectContaining({ what: 'field' }))
  })
})

describe('reference declares the paths each command accepts', () => {
  it('lists page paths and item shorthand for list, open paths for job result, both branches for update', async () => {
    const commands = env(await tasks(box(), ['reference'])).data.commands as Array<{
      path: string
      fields: { paths: string[]; item_shorthand: string[] }
      pagination: unknown
    }>
    const of = (path: string) => commands.find((c) => c.path === path)!
    expect(of('list').fields.paths).toEqual(expect.arrayContaining(['items', 'items.id', 'next_cursor', 'count']))
    expect(of('list').fields.item_shorthand).toEqual(expect.arrayContaining(['id', 'title', 'status']))
    expect(of('list').fields.item_shorthand).not.toContain('count')
    expect(of('job result').fields.paths).toEqual(['*'])
    expect(of('update').fields.paths).toEqual(expect.arrayContaining(['current_version', 'preview', 'confirm_token']))
    expect(of('create').fields.paths).toEqual(expect.arrayContaining(['id', 'confirm_token', 'preview.changes']))
    expect(of('list').pagination).toEqual({ cursor_param: '--cursor', repeat_filters: true, order: 'keyset' })
    expect(of('get').pagination).toBeNull()
  })
})

describe('projection keeps the _untrusted promise', () => {
  it('a full items.title path keeps each item its own _untrusted entry', async () => {
    const { projectObject, selectFields } = await import('../../../src/output/fields.js')
    const { z } = await import('zod')
    const page = z.object({
      items: z.array(z.object({ id: z.string(), title: z.string(), _untrusted: z.array(z.string()).optional() })),
      count: z.number(),
      next_cursor: z.string().nullable(),
      has_more: z.boolean(),
    })
    const data = {
      items: [
        { id: '1', title: 'mine' },
        { id: '2', title: 'theirs', _untrusted: ['title'] },
      ],
      count: 2,
      next_cursor: null,
      has_more: false,
    }
    expect(projectObject(data, selectFields('items.title', page).paths)).toEqual({
      items: [{ title: 'mine' }, { title: 'theirs', _untrusted: ['title'] }],
    })
    expect(projectObject(data, selectFields('id', page).paths)).toEqual({
      items: [{ id: '1' }, { id: '2' }],
      count: 2,
      next_cursor: null,
      has_more: false,
    })
  })
})
