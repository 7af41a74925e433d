import { createHash } from 'node:crypto'
import { mkdir, open, readdir, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'

/** Records which confirm tokens were used. Holds fingerprints only, never a token. */
export type TokenLedger = {
  /** True when the token was already consumed. */
  isUsed(tokenId: string): Promise<boolean>
  /** Mark the token used; true for exactly one caller however many race. */
  consume(tokenId: string, expiresAt: number): Promise<boolean>
}

function fingerprint(tokenId: string): string {
  return createHash('sha256').update(`agentcli-token\0${tokenId}`).digest('hex')
}

/**
 * A ledger of marker files in `<dataDir>/confirm-ledger/`. `consume` creates the marker with O_EXCL, so when N
 * processes confirm one token at once exactly one succeeds. A ledger that cannot be read or written degrades with
 * a warning: it must never block a legitimate write (the token's MAC and expiry still hold).
 */
export function fileTokenLedger(dataDir: string, warn: (message: string) => void): TokenLedger {
  const dir = join(dataDir, 'confirm-ledger')
  return {
    async isUsed(tokenId) {
      try {
        await stat(join(dir, fingerprint(tokenId)))
        return true
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code !== 'ENOENT')
          warn(`confirm ledger ${dir} is unreadable (${code}); single-use is not enforced for this call`)
        return false
      }
    },
    async consume(tokenId, expiresAt) {
      const degrade = (error: unknown) => {
        warn(
          `confirm ledger ${dir} is unusable (${(error as NodeJS.ErrnoException).code}); single-use is not enforced for this call`,
        )
        return true
      }
      try {
        await mkdir(dir, { recursive: true, mode: 0o700 })
      } catch (error) {
        return degrade(error)
      }
      try {
        const handle = await open(join(dir, fingerprint(tokenId)), 'wx', 0o600)
        await handle.writeFile(String(expiresAt))
        await handle.close()
      } catch (error) {
        // Only the marker's own O_EXCL create can say "someone consumed it first".
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
        return degrade(error)
      }
      if (Math.random() < 0.05) await prune(dir, Date.now())
      return true
    },
  }
}

/** Drop markers of tokens that expired (they can never verify again, so forgetting them is safe). */
export async function prune(dir: string, now: number): Promise<number> {
  let removed = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name)
    try {
      const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)])
      const exp = Number(text)
      // A marker with no readable expiry is kept a day past its last change, longer than any token lives.
      const stale = Number.isFinite(exp) ? exp < now : info.mtimeMs < now - 86_400_000
      if (stale) {
        await unlink(path)
        removed++
      }
    } catch {
      // Vanished (another process pruned it) or not a marker: leave it.
    }
  }
  return removed
}
