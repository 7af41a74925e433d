import { EventEmitter } from 'node:events'
import { describe, expect, it } from 'vitest'
import {
  applyCall,
  awaitCall,
  closeStdioAtExit,
  isWarmCall,
  isWarmProcess,
  WARM_FLAG,
  WARM_MESSAGE,
} from '../../../src/boot/warm.js'

/** The parts of `process` a warm process uses: its channel, argv and env. */
class Proc extends EventEmitter {
  sent: unknown[] = []
  connected = true
  channel: object | undefined = {}
  argv = ['/node', '/tool/bin/run.js', WARM_FLAG]
  env: Record<string, string> = { KEEP: 'yes' }
  send = (m: unknown) => {
    this.sent.push(m)
    return true
  }
  disconnect() {
    this.connected = false
    this.channel = undefined
    this.emit('disconnect')
  }
}
const asProcess = (p: Proc) => p as unknown as NodeJS.Process
const call = (argv: unknown, env: unknown = {}) => ({ type: WARM_MESSAGE.call, argv, env })

describe('which process waits for a call', () => {
  it('only one with the flag as its sole argument and a connected IPC channel', () => {
    const p = new Proc()
    expect(isWarmProcess(p.argv, p)).toBe(true)
    expect(isWarmProcess(['/node', '/bin', 'get', '1'], p)).toBe(false)
    expect(isWarmProcess(['/node', '/bin', WARM_FLAG, 'get'], p)).toBe(false)
    expect(isWarmProcess(['/node', '/bin', 'get', WARM_FLAG], p)).toBe(false)
    expect(isWarmProcess(p.argv, { ...p, send: undefined } as never)).toBe(false)
    expect(isWarmProcess(p.argv, { send: p.send, channel: undefined, connected: true })).toBe(false)
    expect(isWarmProcess(p.argv, { send: p.send, channel: {}, connected: false })).toBe(false)
  })

  it('by default, this process (the test runner has a channel, not the flag): no', () => {
    expect(isWarmProcess()).toBe(false)
  })
})

describe('what is a call', () => {
  it('its type, an argv of strings, an env of strings', () => {
    expect(isWarmCall(call(['get', '1'], { A: 'b' }))).toBe(true)
    expect(isWarmCall(call([]))).toBe(true)
    for (const bad of [
      null,
      'get 1',
      { type: 'other', argv: [], env: {} },
      call('get 1'),
      call(['get', 1]),
      call(['get'], null),
      call(['get'], ['A']),
      call(['get'], { A: 1 }),
      { type: WARM_MESSAGE.call, argv: ['get'] },
    ])
      expect(isWarmCall(bad), JSON.stringify(bad)).toBe(false)
  })
})

describe('waiting for the call', () => {
  it('says ready, takes the first message, closes the channel on the next turn; a second one is never heard', async () => {
    const p = new Proc()
    const got = awaitCall(asProcess(p))
    expect(p.sent).toEqual([{ type: WARM_MESSAGE.ready }])
    p.emit('message', call(['get', '1']))
    p.emit('message', call(['delete', '1']))
    expect(await got).toEqual(call(['get', '1']))
    expect(p.connected).toBe(true)
    await new Promise((r) => setImmediate(r))
    expect(p.connected).toBe(false)
    expect(p.listenerCount('message')).toBe(0)
    expect(p.listenerCount('disconnect')).toBe(0)
  })

  it('a first message that is not a call: nothing to run', async () => {
    const p = new Proc()
    const got = awaitCall(asProcess(p))
    p.emit('message', { type: WARM_MESSAGE.call, argv: 'rm -rf /', env: {} })
    expect(await got).toBeUndefined()
  })

  it('the channel closing (the pool stopped, the parent died): nothing to run', async () => {
    const p = new Proc()
    const got = awaitCall(asProcess(p))
    p.disconnect()
    expect(await got).toBeUndefined()
    expect(p.listenerCount('message')).toBe(0)
  })

  it('a channel closed before it waited: nothing to run, nothing sent', async () => {
    const p = new Proc()
    p.connected = false
    expect(await awaitCall(asProcess(p))).toBeUndefined()
    expect(p.sent).toEqual([])
  })

  it('a call becomes the process: its argv after node and the script, its env on top', () => {
    const p = new Proc()
    applyCall(
      call(['get', '1', '--fields', 'id'], { TASKS_MCP_SUBJECT: '{"iss":"i","sub":"s"}' }) as never,
      asProcess(p),
    )
    expect(p.argv).toEqual(['/node', '/tool/bin/run.js', 'get', '1', '--fields', 'id'])
    expect(p.env).toEqual({ KEEP: 'yes', TASKS_MCP_SUBJECT: '{"iss":"i","sub":"s"}' })
  })
})

describe('the end of a warm process: stdout and stderr close after every exit listener, however it ends', () => {
  it("the 'exit' emit runs every listener, then closes fds 1 and 2 once (one already closed is no matter)", () => {
    const order: string[] = []
    const proc = new EventEmitter()
    proc.on('exit', (code) => order.push(`listener ${code}`))
    closeStdioAtExit(proc, (fd) => {
      order.push(`close ${fd}`)
      if (fd === 1) throw Object.assign(new Error('EBADF'), { code: 'EBADF' })
    })
    // Registered after the hook (a lock taken during the call): still before the close.
    proc.on('exit', (code) => order.push(`late listener ${code}`))
    proc.emit('other')
    expect(order).toEqual([])
    expect(proc.emit('exit', 3)).toBe(true)
    proc.emit('exit', 3)
    expect(order).toEqual(['listener 3', 'late listener 3', 'close 1', 'close 2', 'listener 3', 'late listener 3'])
  })

  it('an object without emit: nothing changes', () => {
    const proc = {} as Record<string, unknown>
    closeStdioAtExit(proc as never, () => {
      throw new Error('never')
    })
    expect(proc).toEqual({})
  })
})
