import { builtin } from '../boot/builtin.js'

// fs is loaded by every run anyway; node:tty is not (see isTerminal).
const { fstatSync, statSync } = builtin<typeof import('node:fs')>('node:fs')

type DeviceStat = { isCharacterDevice(): boolean; rdev: number }
/** How {@link isTerminal} looks at a descriptor and at the null device; tests pass their own. */
export type TerminalProbe = {
  fstat(fd: number): DeviceStat
  stat(path: string): DeviceStat
  isatty(fd: number): boolean
  platform: NodeJS.Platform
}

const probe: TerminalProbe = {
  fstat: (fd) => fstatSync(fd),
  stat: (path) => statSync(path),
  // Loaded only when asked: node:tty loads net and the whole stream stack at once (≈ 2–4 ms of a start). A Node
  // too old for getBuiltinModule only ever renders the E_CONFIG envelope that says so: on one line is fine there.
  isatty: (fd) => builtin<Partial<typeof import('node:tty')>>('node:tty').isatty?.(fd) ?? false,
  platform: process.platform,
}

/**
 * `tty.isatty(fd)`, without loading node:tty when the descriptor cannot be a terminal: a terminal is a character
 * device, so a pipe, a file or a socket is not one, and neither is the null device (a character device that
 * never is a terminal; `> /dev/null`). Anything else (a character device that may be a terminal, a descriptor
 * fstat cannot read, Windows, where consoles are not told apart this way) is asked of `isatty` itself.
 */
export function isTerminal(fd: number, io: TerminalProbe = probe): boolean {
  if (io.platform !== 'win32') {
    try {
      const stat = io.fstat(fd)
      if (!stat.isCharacterDevice()) return false
      const nul = io.stat('/dev/null')
      if (nul.isCharacterDevice() && nul.rdev === stat.rdev) return false
    } catch {
      // Whatever fstat could not say, isatty answers.
    }
  }
  return io.isatty(fd)
}
