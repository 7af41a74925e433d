import { closeSync, fsyncSync, mkdirSync, openSync, statSync, unlinkSync, writeSync } from 'node:fs'
import { readdir, readFile, stat, unlink } from 'node:fs/promises'
import { join } from 'node:path'
import { AgentError } from '../errors/agent-error.js'
import { beforeChange } from '../errors/before-change.js'
import { sha256Hex } from './sha256.js'

/** Records which confirm tokens were used. Holds fingerprints only, never a token. */
export type TokenLedger = {
  /** True when the token was already consumed. */
  isUsed(tokenId: string): Promise<boolean>
  /** Mark the token used; true for exactly one caller however many race. `now` is the clock that checks expiry. */
  consume(tokenId: string, expiresAt: number, now: number): Promise<boolean>
  /** Give a consumed token back, when the write it allowed failed before changing anything. */
  release(tokenId: string): Promise<void>
}

/** Options of {@link fileTokenLedger}. */
export type TokenLedgerOptions = {
  /**
   * The documented degraded mode: when set, a ledger that cannot be read or written is reported through this
   * function and the write proceeds without single-use. Unset (the default), it is `E_IO` and nothing is applied.
   */
  degraded?: (message: string) => void
}

/** What a ledger stores for a token: a fingerprint, never the token or its id. */
export function tokenFingerprint(tokenId: string): string {
  return sha256Hex(`agentcli-token\0${tokenId}`)
}

function unusable(dir: string, error: unknown): AgentError {
  const code = (error as NodeJS.ErrnoException).code
  return beforeChange(
    new AgentError('E_IO', `the confirm-token ledger ${dir} cannot be used (${code}); nothing was changed`, {
      details: {
        path: dir,
        fix: `make ${dir} a writable directory with free space (remove it if it is a file), then confirm again with the same token`,
      },
      cause: error,
    }),
  )
}

/**
 * A ledger of marker files in `<dataDir>/confirm-ledger/`. `consume` creates the marker with O_EXCL, so when N
 * processes confirm one token at once exactly one succeeds. A ledger that cannot be read or written fails closed
 * (`E_IO`, the token not consumed) unless the tool opted into the degraded mode.
 */
export function fileTokenLedger(dataDir: string, options: TokenLedgerOptions = {}): TokenLedger {
  const dir = join(dataDir, 'confirm-ledger')
  const failed = (error: unknown, degradedAnswer: boolean): boolean => {
    if (!options.degraded) throw unusable(dir, error)
    options.degraded(
      `confirm ledger ${dir} is unusable (${(error as NodeJS.ErrnoException).code}); single-use is not enforced for this call`,
    )
    return degradedAnswer
  }
  // Synchronous system calls: a confirm makes a handful of tiny ones, each a thread-pool round trip if async.
  return {
    async isUsed(tokenId) {
      try {
        statSync(join(dir, tokenFingerprint(tokenId)))
        return true
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
        return failed(error, false)
      }
    },
    async consume(tokenId, expiresAt, now) {
      const marker = join(dir, tokenFingerprint(tokenId))
      let fd: number
      try {
        fd = openMarker(dir, marker)
      } catch (error) {
        // Only the marker's own O_EXCL create can say "someone consumed it first".
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
        return failed(error, true)
      }
      try {
        writeSync(fd, String(expiresAt))
        fsyncSync(fd)
        closeSync(fd)
      } catch (error) {
        // A marker without its expiry would outlive the token by a day; one that cannot be written means a
        // full or failing disk, where the write itself would fail next: give the token back and stop here.
        quietlySync(() => closeSync(fd))
        quietlySync(() => unlinkSync(marker))
        return failed(error, true)
      }
      if (Math.random() < 0.05) await prune(dir, now)
      return true
    },
    async release(tokenId) {
      quietlySync(() => unlinkSync(join(dir, tokenFingerprint(tokenId))))
    },
  }
}

/**
 * Create the marker with O_EXCL; the ledger directory (0700) is made only when it is missing. An EEXIST from
 * that mkdir (a file where the directory goes, put there in between) reads as "taken": refused, never applied.
 */
function openMarker(dir: string, marker: string): number {
  try {
    return openSync(marker, 'wx', 0o600)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  return openSync(marker, 'wx', 0o600)
}

function quietlySync(step: () => void): void {
  try {
    step()
  } catch {
    // Clean-up whose failure changes nothing about the answer.
  }
}

/**
 * Drop markers of tokens whose own expiry has passed on `now`, the clock that checks expiry: such a token can
 * never verify again, so forgetting it is safe.
 */
export async function prune(dir: string, now: number): Promise<number> {
  let removed = 0
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    const path = join(dir, name)
    try {
      const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)])
      const exp = Number(text)
      // A marker with no readable expiry is kept a day past its last change, longer than any token lives.
      const stale = text.trim() !== '' && Number.isFinite(exp) ? exp < now : info.mtimeMs < now - 86_400_000
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
