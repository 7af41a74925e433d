import { describe, expect, it } from 'vitest'
import { parseFields, projectObject } from '../../../src/output/fields.js'

describe('fields', () => {
  it('projects nested paths and array elements', () => {
    const data = { a: { b: 1, c: 2 }, list: [{ x: 1, y: 2 }], z: 3 }
    expect(projectObject(data, parseFields('a.b,list.x'))).toEqual({ a: { b: 1 }, list: [{ x: 1 }] })
  })
  it('keeps _untrusted entries under the kept paths', () => {
    const data = { title: 't', body: 'b', _untrusted: ['title', 'body'] }
    expect(projectObject(data, parseFields('title'))).toEqual({ title: 't', _untrusted: ['title'] })
  })
  it('rejects an empty list', () => {
    expect(() => parseFields(' , ')).toThrow(/at least one/)
  })
})
