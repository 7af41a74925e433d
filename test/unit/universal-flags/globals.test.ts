import { describe, expect, it } from 'vitest'
import { normalizeArgv, scanGlobals } from '../../../src/universal-flags/globals.js'

describe('globals', () => {
  it('moves leading universal flags behind the command, before --', () => {
    expect(normalizeArgv(['--format', 'text', 'list', '--', 'x'])).toEqual(['list', '--format', 'text', '--', 'x'])
    expect(normalizeArgv(['--json', 'get', '1'])).toEqual(['get', '1', '--json'])
    expect(normalizeArgv(['get', '1'])).toEqual(['get', '1'])
  })
  it('reads flags after -- as arguments', () => {
    expect(scanGlobals(['get', '--', '--format', 'text']).format).toBe('json')
  })
  it('accepts --format=value', () => {
    expect(scanGlobals(['list', '--format=text']).format).toBe('text')
  })
})
