import { Args, Flags } from '@oclif/core'
import { parse } from '@oclif/core/parser'
import { describe, expect, it } from 'vitest'
import { type Parser, parseWith } from '../../../src/run/parse.js'

// The prepared definitions of a source are kept while its declarations are the same objects (a server that runs
// many calls in its process wraps them once): each call still gets its own values, and a new declaration is seen.
describe('parseWith keeps the prepared definitions of a source', () => {
  const seen: unknown[] = []
  const parser: Parser = async (input, argv) => {
    seen.push(input.flags)
    return (await parse(argv, input as never)) as never
  }

  it('parses each call on its own, with the same wrapped definitions', async () => {
    const source = {
      flags: { status: Flags.string({ options: ['open', 'done'] }) },
      args: { id: Args.string({ required: true }) },
    }
    const first = await parseWith(source, ['1', '--status', 'open'], parser)
    const second = await parseWith(source, ['2', '--status', 'done'], parser)
    expect(first.args.id).toBe('1')
    expect(first.flags.status).toBe('open')
    expect(second.args.id).toBe('2')
    expect(second.flags.status).toBe('done')
    expect(seen.at(-1)).toBe(seen.at(-2))
    // The enum check taken over from oclif still answers E_VALIDATION on a kept definition.
    await expect(parseWith(source, ['3', '--status', 'gone'], parser)).rejects.toMatchObject({ code: 'E_VALIDATION' })
  })

  it('prepares again when a declaration is replaced', async () => {
    const source: { flags: Record<string, unknown> } = { flags: { a: Flags.string() } }
    await parseWith(source, ['--a', 'x'], parser)
    await expect(parseWith(source, ['--b', 'y'], parser)).rejects.toMatchObject({ code: 'E_USAGE' })
    source.flags = { b: Flags.string() }
    const parsed = await parseWith(source, ['--b', 'y'], parser)
    expect(parsed.flags.b).toBe('y')
  })
})
