import { describe, expect, it } from 'vitest'
import { renderText, table } from '../../../src/output/text.js'
import { errorText, nextCommand } from '../../../src/output/text-error.js'
import { summarize } from '../../../src/output/text-layout.js'
import { displayWidth, truncate, wrap } from '../../../src/output/width.js'

// Moved from text-format.test.ts (spawn tier): these never started the bin.

describe('display width', () => {
  it('counts East Asian Wide and emoji as two columns, marks and joiners as none', () => {
    expect(displayWidth('abc')).toBe(3)
    expect(displayWidth('写文档')).toBe(6)
    expect(displayWidth('ｆｕｌｌ')).toBe(8)
    expect(displayWidth('한국어')).toBe(6)
    expect(displayWidth('🎉')).toBe(2)
    expect(displayWidth('👍🏽')).toBe(2)
    expect(displayWidth('👨‍👩‍👧')).toBe(2)
    expect(displayWidth('🇯🇵')).toBe(2)
    expect(displayWidth('❤️')).toBe(2)
    expect(displayWidth('é')).toBe(1)
    expect(displayWidth('e\u0301')).toBe(1)
  })

  it('truncates to the width with an ellipsis and never splits a wide character', () => {
    expect(truncate('写文档并且', 5)).toBe('写文…')
    expect(displayWidth(truncate('写文档并且', 6))).toBeLessThanOrEqual(6)
    expect(truncate('abcdef', 6)).toBe('abcdef')
    expect(truncate('abcdefg', 6)).toBe('abcde…')
    expect(truncate('👨‍👩‍👧 family', 3)).toBe('👨‍👩‍👧…')
  })

  it('wraps at spaces and never breaks a word (a token or a URL must stay copyable)', () => {
    expect(wrap('one two three four', 9)).toEqual(['one two', 'three', 'four'])
    expect(wrap('see ct_1.abcdefghijklmnop now', 10)).toEqual(['see', 'ct_1.abcdefghijklmnop', 'now'])
    for (const line of wrap('写文档 并且检查 所有的例子', 10)) expect(displayWidth(line)).toBeLessThanOrEqual(10)
  })
})

describe('nested values', () => {
  it('are summarised, never dumped as JSON', () => {
    expect(summarize({ a: 1, b: 'x' })).toBe('{a: 1, b: x}')
    expect(summarize({ a: { deep: 1 }, b: 2, c: 3 })).toBe('{3 keys}')
    expect(summarize(['a', 'b'])).toBe('a, b')
    expect(summarize([{ id: 1 }, { id: 2 }, { id: 3 }, { id: 4 }, { id: 5 }])).toBe('[5 items]')
    expect(summarize(Array.from({ length: 30 }, (_, i) => `tag-${i}`))).toBe('[30 items]')
    expect(summarize([])).toBe('[]')
    expect(summarize({})).toBe('{}')
    const out = table([{ id: 1, meta: { labels: ['a', 'b'], owner: { name: 'x' } }, tags: [1, 2, 3] }])
    expect(out).toContain('{2 keys}')
    expect(out).toContain('1, 2, 3')
    expect(out).not.toMatch(/[{[]"/)
  })

  it('an object nests as indented blocks, an array of objects as a table, deeper levels as summaries', () => {
    const out = renderText(
      { id: 'x', owner: { name: 'ann', team: { name: 't', lead: { name: 'z', more: { a: 1, b: { c: 1 } } } } } },
      { width: 60 },
    )
    expect(out).toContain('owner:\n  name: ann\n  team:\n    name: t')
    expect(out).toMatch(/more: +\{2 keys\}/)
    expect(out).not.toContain('"')
  })

  it('escape sequences in data never reach the terminal', () => {
    const out = renderText([{ title: 'evil\u001b[2J\u001b]0;pwned\u0007 title' }], { width: 80 })
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/)
  })
})

describe('text errors', () => {
  it('next commands come from dry_run_command, resume, poll or reauth, in that order', () => {
    expect(nextCommand({ poll: 't job status --id j1' })).toBe('t job status --id j1')
    expect(nextCommand({ reauth: 't login', resume: 't login resume --id c' })).toBe('t login resume --id c')
    expect(nextCommand({ fix: 'chmod 600 x' })).toBeUndefined()
    expect(
      errorText({ code: 'E_CONFLICT', message: 'job j1 is still running', details: { poll: 't job status --id j1' } }),
    ).toBe('error E_CONFLICT: job j1 is still running\nnext: t job status --id j1\n')
  })
})
