import { randomBytes } from 'node:crypto'
import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/**
 * `n` bytes from the operating system's CSPRNG. Read from `/dev/urandom` (a character device; `node:fs` is loaded
 * already, node:crypto costs ≈ 5 ms to load), else, where there is no such device (Windows, a bare chroot) or it
 * cannot be read, from node:crypto's `randomBytes` (OpenSSL's generator, seeded by the same OS source). Never
 * anything weaker: every failure of the device goes to node:crypto, none to a fallback of its own.
 */
export function osRandomBytes(n: number, device = '/dev/urandom'): Buffer {
  const out = Buffer.alloc(n)
  let fd: number | undefined
  try {
    fd = openSync(device, 'r')
    // A regular file or a link to one planted at the path is not a random source.
    if (!fstatSync(fd).isCharacterDevice()) return randomBytes(n)
    for (let got = 0; got < n; ) {
      const read = readSync(fd, out, got, n - got, null)
      if (read <= 0) return randomBytes(n)
      got += read
    }
    return out
  } catch {
    return randomBytes(n)
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
