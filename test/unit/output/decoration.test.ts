// Machine output carries no decoration: ANSI escapes, control characters and emoji an author puts in an error's
// message, hint or fix, or in a notice, are taken out where the envelope is built; a command's data is untouched.
import { describe, expect, it } from 'vitest'
import { AgentError } from '../../../src/errors/agent-error.js'
import { dataEmoji, isDecorated, plainMembers, plainText } from '../../../src/output/decoration.js'
import { dataOutcome, streamOutcome } from '../../../src/output/outcome.js'
import { renderErrorInProcess, renderInProcess } from '../../support/render.js'

const ESC = '\u001b'

describe('plainText', () => {
  it('takes out CSI, OSC (BEL or ST, or cut short), DCS/APC strings, 8-bit CSI and lone escapes', () => {
    for (const [decorated, plain] of [
      [`${ESC}[31mfailed${ESC}[0m to sync`, 'failed to sync'],
      [`${ESC}[1;38;5;196mbold red${ESC}[m`, 'bold red'],
      [`see ${ESC}]8;;https://x.example/docs${ESC}\\the docs${ESC}]8;;${ESC}\\`, 'see the docs'],
      [`title${ESC}]0;pwned\u0007 here`, 'title here'],
      [`cut ${ESC}]8;;https://x.example`, 'cut '.trimEnd()],
      [`a${ESC}P1$r0m${ESC}\\b`, 'ab'],
      [`a${ESC}_apc payload${ESC}\\b`, 'ab'],
      ['a\u009b31mb', 'ab'],
      [`cursor${ESC}[2J${ESC}[H moved`, 'cursor moved'],
      [`lone ${ESC}7saved${ESC}8`, 'lone saved'],
      [`trailing ${ESC}`, 'trailing'],
      [`${ESC}[`, ''],
    ])
      expect([decorated, plainText(decorated!)]).toEqual([decorated, plain])
  })

  it('takes out C0 and C1 controls but keeps tab and line feed', () => {
    expect(plainText('line one\nline two\tcol\r\u0000\u0007\u0008\u007f\u0085x')).toBe('line one\nline two\tcolx')
  })

  it('takes out emoji with their modifiers, joiners, keycaps, flags and tag sequences', () => {
    for (const [decorated, plain] of [
      ['❌ Sync failed', 'Sync failed'],
      ['✅ done', 'done'],
      ['⚠️ token expires soon', 'token expires soon'],
      ['Deploy 🚀', 'Deploy'],
      ['ok 👍🏽 thanks', 'ok thanks'],
      ['family 👨‍👩‍👧 here', 'family here'],
      ['from 🇺🇸 region', 'from region'],
      ['step 1️⃣ first', 'step 1 first'],
      ['🏴󠁧󠁢󠁳󠁣󠁴󠁿 flag', 'flag'],
      ['stray\ufe0f selector', 'stray selector'],
    ])
      expect([decorated, plainText(decorated!)]).toEqual([decorated, plain])
  })

  it('keeps text: ©, ®, ™, arrows, punctuation, accents, CJK, and ZWJ inside Indic script', () => {
    for (const text of [
      'Acme® Cloud™ © 2026',
      'dry-run → confirm … done',
      'café naïve résumé',
      '任务未找到',
      'क्‍ष and ന്‍',
      'plain ascii, with `code` and "quotes"',
      'two  spaces  kept ',
      '',
    ]) {
      expect(plainText(text)).toBe(text)
      expect(isDecorated(text)).toBe(false)
    }
    expect(isDecorated(`${ESC}[1mx`)).toBe(true)
    expect(isDecorated('🚀')).toBe(true)
  })

  it('keeps an emoji the data holds: a message that echoes an id or a rejected value is not decorated', () => {
    const details = { id: '🦄', results: [{ id: 'x', error: { got: '👍🏽' } }], hint: '💡 not data', fix: '🔧' }
    const keep = dataEmoji(details, ['hint', 'fix'])
    expect([...keep].sort()).toEqual(['👍🏽', '🦄'].sort())
    expect(plainText('❌ task 🦄 not found 👍🏽', keep)).toBe('task 🦄 not found 👍🏽')
    expect(plainText('💡 hint', keep)).toBe('hint')
    expect(isDecorated('task 🦄 not found', keep)).toBe(false)
    expect(isDecorated('task 🦄 not found')).toBe(true)
    // Bounded: past its depth the walk stops (the emoji is then decoration, which is the safe side).
    let deep: unknown = '🐉'
    for (let i = 0; i < 12; i++) deep = [deep]
    expect(dataEmoji({ deep }, []).size).toBe(0)
    expect(dataEmoji({ wide: Array.from({ length: 2000 }, () => 'plain') }, []).size).toBe(0)
  })

  it('plainMembers copies only when a named string member changes', () => {
    const clean = { message: 'ok', hint: 'run x', n: 1 }
    expect(plainMembers(clean, ['message', 'hint'])).toBe(clean)
    const dirty = { message: '🚀 ok', hint: 3, other: '✨ kept' }
    expect(plainMembers(dirty, ['message', 'hint'])).toEqual({ message: 'ok', hint: 3, other: '✨ kept' })
    expect(dirty.message).toBe('🚀 ok')
  })
})

describe('the envelope the framework emits', () => {
  const decorated = () =>
    new AgentError('E_NOT_FOUND', `❌ ${ESC}[31mno task 9${ESC}[0m`, {
      hint: `💡 run ${ESC}[1mtasks list${ESC}[0m`,
      details: { fix: '🔧 create it first', id: '🚀-9', title: `${ESC}[1mraw${ESC}[0m`, message: '✅ data' },
    })

  it('--json: message, details.hint and details.fix are plain; every other detail is data, as given', async () => {
    const run = await renderErrorInProcess(decorated())
    const { error } = JSON.parse(run.stdout)
    expect(error.message).toBe('no task 9')
    expect(error.details.hint).toBe('run tasks list')
    expect(error.details.fix).toBe('create it first')
    expect(error.details.id).toBe('🚀-9')
    expect(error.details.title).toBe(`${ESC}[1mraw${ESC}[0m`)
    expect(error.details.message).toBe('✅ data')
  })

  it('an id or value the error carries in its details stays in the message (a fuzzed `🦄`)', async () => {
    const run = await renderErrorInProcess(
      new AgentError('E_NOT_FOUND', '🔎 task 🦄 not found', { hint: 'run `tasks list`', details: { id: '🦄' } }),
    )
    expect(JSON.parse(run.stdout).error.message).toBe('task 🦄 not found')
  })

  it('an undeclared code, a stream error line and the text format get the same plain prose', async () => {
    const undeclared = await renderErrorInProcess(new AgentError('E_MADE_UP', '🔥 oops'))
    expect(JSON.parse(undeclared.stdout).error.message).toBe('undeclared error code E_MADE_UP: oops')
    const line = await renderErrorInProcess(decorated(), { stream: true })
    expect(JSON.parse(line.stdout).error.message).toBe('no task 9')
    const text = await renderErrorInProcess(decorated(), { format: 'text' })
    expect(text.stderr).toContain('error E_NOT_FOUND: no task 9\n')
    expect(text.stderr).toContain('hint: run tasks list')
    expect(text.stderr).not.toMatch(/[\u001b]|\p{Extended_Pictographic}/u)
  })

  it('notices are plain (message, hint, fix); the data of a success and of a stream item is untouched', async () => {
    const notices = [{ type: 'deprecated', message: `⚠️ ${ESC}[33mold flag${ESC}[0m`, hint: '👉 use --new', id: '🚀' }]
    const data = { title: `🚀 ${ESC}[1mlaunch${ESC}[0m`, note: 'ok\r\n' }
    const run = await renderInProcess(dataOutcome(data, '1.0'), { notices })
    const envelope = JSON.parse(run.stdout)
    expect(envelope.data).toEqual(data)
    expect(envelope.meta.notices).toEqual([{ type: 'deprecated', message: 'old flag', hint: 'use --new', id: '🚀' }])
    async function* items() {
      yield data
    }
    const streamed = await renderInProcess(streamOutcome({ items: items(), schemaVersion: '1.0', fields: undefined }))
    expect(JSON.parse(streamed.stdout.split('\n')[0]!).data).toEqual(data)
  })
})
