import { builtin } from './builtin.js'

// Built-ins through process.getBuiltinModule, as everywhere in the boot (./index.ts says why).
const { closeSync, fstatSync, openSync, readFileSync, readSync } = builtin<typeof import('node:fs')>('node:fs')
const { isAscii } = builtin<typeof import('node:buffer')>('node:buffer')
const Module = builtin<typeof import('node:module')>('node:module')

/**
 * A CommonJS file's text inside Node's module wrapper (`Module.wrap`), read straight into one buffer between the
 * wrapper's two halves and decoded once. `Module.wrap(text)` would make a cons string of three that V8 flattens
 * before it compiles: a second copy of a 1 MB bundle, allocated in the young generation, which then holds a
 * scavenge's worth of it. An ASCII file (agentcli-build writes ASCII bundles) is decoded as latin1: a one-byte
 * string, no UTF-8 decoding; any other as UTF-8.
 */
export function readWrapped(file: string): string {
  const [head = '', tail = ''] = Module.wrap('\0').split('\0')
  const start = Buffer.byteLength(head)
  const fd = openSync(file, 'r')
  let bytes: Buffer
  try {
    const size = fstatSync(fd).size
    bytes = Buffer.allocUnsafe(start + size + Buffer.byteLength(tail))
    bytes.write(head, 0)
    let read = 0
    for (let n = -1; read < size && n !== 0; read += n) n = readSync(fd, bytes, start + read, size - read, null)
    // A file that changed size while it was read: read it again as a whole, as readFileSync does.
    if (read !== size || readSync(fd, Buffer.alloc(1), 0, 1, null) !== 0) return Module.wrap(decode(readFileSync(file)))
    bytes.write(tail, start + size)
  } finally {
    closeSync(fd)
  }
  return decode(bytes)
}

function decode(bytes: Buffer): string {
  return isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8')
}
