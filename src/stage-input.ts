// The body as a streaming stage reads it: cut at `limit`, so that the stage judges every byte up to it however the body was split.
import type { Readable } from 'stream'

/** What a stage reads a body through: one reader, told of each piece and of the end. */
export interface StageInput {
  /** Hands the pieces to `onData` and the end to `onEnd` from now on (one reader). */
  read (onData: (chunk: Buffer) => void, onEnd: () => void): void
  pause (): void
  resume (): void
}

/**
 * A stream cut at `limit` (issue 45: a body's answer is its first error in byte order, and going past
 * `limit` is an error at the first byte beyond it). Its pieces are passed on as they come while within the limit; of
 * the piece that crosses it only the bytes up to it are, after which nothing more is (no end either), the source
 * is paused, and `onPastLimit` is called with the count. A stage reading this has been given every byte before the
 * limit, whether the body came whole, in pieces, or a byte at a time; the pipeline answers 413 once the stage has
 * judged them, unless it found an error in them first. It has one reader, called directly: no event emitter.
 */
export class LimitedInput implements StageInput {
  /** The bytes the source brought, the crossing piece's whole length included. */
  received = 0
  /** Whether the limit was passed. */
  cut = false
  private readonly source: Readable
  private readonly limit: number
  private readonly onPastLimit: (received: number) => void
  private onData: (chunk: Buffer) => void = ignore
  private onEnd: () => void = ignore

  constructor (source: Readable, limit: number, onPastLimit: (received: number) => void) {
    this.source = source
    this.limit = limit
    this.onPastLimit = onPastLimit
    source.on('data', this.pass)
    source.on('end', this.passEnd)
  }

  get readableEnded (): boolean {
    return !this.cut && this.source.readableEnded
  }

  read (onData: (chunk: Buffer) => void, onEnd: () => void): void {
    this.onData = onData
    this.onEnd = onEnd
  }

  pause (): void {
    this.source.pause()
  }

  resume (): void {
    if (!this.cut) this.source.resume()
  }

  /** Passes on bytes that come from elsewhere than the source (what zlib inflated before an error lost it), within the limit as any piece. */
  write (chunk: Buffer): void {
    if (!this.cut) this.pass(chunk)
  }

  /** Stops listening to the source; safe to call more than once. */
  stop (): void {
    this.source.removeListener('data', this.pass)
    this.source.removeListener('end', this.passEnd)
  }

  private readonly pass = (piece: Buffer | string): void => {
    // A stream with an encoding set (a developer error) emits strings: as `pipe` writes them to zlib, in UTF-8.
    const chunk = typeof piece === 'string' ? Buffer.from(piece) : piece
    const before = this.received
    this.received += chunk.length
    if (this.received <= this.limit) {
      this.onData(chunk)
      return
    }
    this.cut = true
    this.stop()
    this.source.pause()
    if (before < this.limit) this.onData(chunk.subarray(0, this.limit - before))
    this.onPastLimit(this.received)
  }

  private readonly passEnd = (): void => {
    this.onEnd()
  }
}

function ignore (): void {}
