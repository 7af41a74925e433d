import { closeSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isatty } from 'node:tty'
import { describe, expect, it } from 'vitest'
import { isTerminal, type TerminalProbe } from '../../../src/output/is-terminal.js'

const NUL_RDEV = 0x103
const charDevice = (rdev: number) => ({ isCharacterDevice: () => true, rdev })
const other = { isCharacterDevice: () => false, rdev: 0 }

/** A probe whose fstat answers `fd1` and which records whether isatty was asked. */
function probe(fd1: ReturnType<typeof charDevice> | typeof other | Error, over: Partial<TerminalProbe> = {}) {
  const asked: number[] = []
  const io: TerminalProbe = {
    fstat: () => {
      if (fd1 instanceof Error) throw fd1
      return fd1
    },
    stat: () => charDevice(NUL_RDEV),
    isatty: (fd) => {
      asked.push(fd)
      return true
    },
    platform: 'linux',
    ...over,
  }
  return { io, asked }
}

describe('isTerminal', () => {
  it('answers false for a pipe, a file or a socket without asking isatty (node:tty stays unloaded)', () => {
    const { io, asked } = probe(other)
    expect(isTerminal(1, io)).toBe(false)
    expect(asked).toEqual([])
  })

  it('answers false for the null device, a character device that is never a terminal', () => {
    const { io, asked } = probe(charDevice(NUL_RDEV))
    expect(isTerminal(1, io)).toBe(false)
    expect(asked).toEqual([])
  })

  it('asks isatty for any other character device, and returns its answer', () => {
    const { io, asked } = probe(charDevice(0x8800))
    expect(isTerminal(1, io)).toBe(true)
    expect(asked).toEqual([1])
    expect(isTerminal(2, { ...io, isatty: () => false })).toBe(false)
  })

  it('asks isatty when /dev/null is not the null device (a file in its place proves nothing)', () => {
    const { io, asked } = probe(charDevice(NUL_RDEV), { stat: () => other })
    expect(isTerminal(1, io)).toBe(true)
    expect(asked).toEqual([1])
  })

  it('asks isatty when fstat or stat fails, and on Windows without looking at all', () => {
    const failing = probe(new Error('EBADF'))
    expect(isTerminal(1, failing.io)).toBe(true)
    expect(failing.asked).toEqual([1])
    const noNull = probe(charDevice(NUL_RDEV), {
      stat: () => {
        throw new Error('ENOENT')
      },
    })
    expect(isTerminal(1, noNull.io)).toBe(true)
    const windows = probe(other, { platform: 'win32' })
    expect(isTerminal(1, windows.io)).toBe(true)
    expect(windows.asked).toEqual([1])
  })

  it('agrees with tty.isatty on real descriptors: a file, the null device', () => {
    const file = join(tmpdir(), `agentcli-is-terminal-${process.pid}`)
    writeFileSync(file, '')
    for (const path of [file, '/dev/null']) {
      const fd = openSync(path, 'r')
      try {
        expect(isTerminal(fd), path).toBe(false)
        expect(isatty(fd), path).toBe(false)
      } finally {
        closeSync(fd)
      }
    }
    rmSync(file)
  })
})
