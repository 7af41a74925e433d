/** A chunk is written once it holds this many bytes. */
const CHUNK = 64 * 1024
/** Room past {@link CHUNK}, so that an ordinary line never needs a bigger buffer. */
const SLACK = 16 * 1024

/**
 * Collects the lines of a stream as UTF-8 bytes in a reused buffer and writes them to its sink a chunk at a time,
 * with backpressure: each chunk's write is awaited, so memory stays flat however long the stream and however slow
 * the reader. Encoding a line right away (instead of holding its string until the chunk is full) lets the string
 * die young: the garbage collector copies almost nothing, and V8 keeps its young generation small (peak RSS).
 * Callers hand it text that has already passed the redactor.
 */
export class ChunkWriter {
  private buffer: Buffer = Buffer.allocUnsafe(CHUNK + SLACK)
  /** A buffer whose write has completed, ready for reuse. */
  private spare: Buffer | undefined
  private used = 0

  /** `write`: where chunks go (the render's stdout sink). */
  constructor(private readonly write: (chunk: Uint8Array) => Promise<void>) {}

  /**
   * Append `head`, `text` and `tail` as one line's bytes (`head`/`tail` pre-encoded). Returns a promise only when
   * a chunk was written (await it), else undefined: the common line costs no promise. The bytes are in the
   * buffer before anything is awaited, so a line pushed before the stream's end is decided is never lost.
   */
  push(text: string, head?: Uint8Array, tail?: Uint8Array): Promise<void> | undefined {
    // At most three bytes per UTF-16 unit; a long line is measured exactly rather than over-allocated.
    let most = (head?.length ?? 0) + text.length * 3 + (tail?.length ?? 0)
    if (most > SLACK) most = (head?.length ?? 0) + Buffer.byteLength(text) + (tail?.length ?? 0)
    if (this.used + most > this.buffer.length) this.grow(this.used + most)
    if (head) {
      this.buffer.set(head, this.used)
      this.used += head.length
    }
    this.used += this.buffer.write(text, this.used)
    if (tail) {
      this.buffer.set(tail, this.used)
      this.used += tail.length
    }
    return this.used >= CHUNK ? this.flush() : undefined
  }

  /** Write what is buffered, then yield one turn of the event loop. */
  async flush(): Promise<void> {
    if (this.used === 0) return
    const full = this.buffer
    const chunk = full.subarray(0, this.used)
    // Lines pushed while this chunk is in flight (an error line after a signal) go to another buffer.
    this.buffer = this.spare ?? Buffer.allocUnsafe(CHUNK + SLACK)
    this.spare = undefined
    this.used = 0
    await this.write(chunk)
    if (full.length === CHUNK + SLACK) this.spare = full
    // Writes to a file or /dev/null finish synchronously; without a turn of the event loop a long stream would
    // starve signal handlers (Ctrl-C) and timers until the end.
    await new Promise((resolve) => setImmediate(resolve))
  }

  /** A line longer than the slack: this chunk gets a buffer big enough for it (and is written next). */
  private grow(size: number): void {
    const bigger = Buffer.allocUnsafe(size)
    this.buffer.copy(bigger, 0, 0, this.used)
    if (this.buffer.length === CHUNK + SLACK) this.spare ??= this.buffer
    this.buffer = bigger
  }
}
