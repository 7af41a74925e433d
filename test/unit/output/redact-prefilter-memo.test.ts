import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  addSensitiveKeys,
  mayNeedRedaction,
  prefilterMemo,
  registerSecret,
  rememberPrefilter,
  resetRedaction,
} from '../../../src/output/redact.js'

// Other files of the tier share this module's state: each test starts, and leaves, with no secret and no declared
// key, and declares key words no other test uses (a key's word is its longest `_` part) (a remembered prefilter stays for the process, by its words).
beforeEach(() => resetRedaction())
afterEach(() => resetRedaction())

/**
 * Store, for the words of `key`, a prefilter that also matches "hello" (which expression a run took then shows),
 * and start a new run that declares `key`.
 */
function storeMatchingHello(key: string): void {
  addSensitiveKeys([key])
  const memo = prefilterMemo()!
  rememberPrefilter({ words: memo.words, source: `${memo.source}|hello` })
  resetRedaction()
  addSensitiveKeys([key])
}

describe('the prefilter the build stores', () => {
  it('is the one a run builds for the same key words', () => {
    addSensitiveKeys(['prefiltermemoalpha'])
    const memo = prefilterMemo()
    expect(memo?.words.split('\n')).toContain('prefiltermemoalpha')
    expect(mayNeedRedaction('{"prefiltermemoalpha":1}')).toBe(true)
    expect(new RegExp(memo!.source, 'iu').test('{"prefiltermemoalpha":1}')).toBe(true)
    expect(new RegExp(memo!.source, 'iu').test('{"id":"1","title":"task 1"}')).toBe(false)
  })

  it('is used by a run whose key words are the same, and only by it', () => {
    storeMatchingHello('prefiltermemobeta')
    expect(mayNeedRedaction('hello')).toBe(true)
    resetRedaction()
    addSensitiveKeys(['prefiltermemogamma'])
    expect(mayNeedRedaction('hello')).toBe(false)
  })

  it('is neither made nor used while a secret is known', () => {
    storeMatchingHello('prefiltermemodelta')
    registerSecret('s3cr3t-value-for-the-prefilter-test')
    expect(prefilterMemo()).toBeUndefined()
    expect(mayNeedRedaction('hello')).toBe(false)
    expect(mayNeedRedaction('x s3cr3t-value-for-the-prefilter-test x')).toBe(true)
  })
})
