// A body's stream written to zlib as `pipe` would, for both ways of reading a compressed body (read-whole.ts,
// read-streamed.ts): backpressure, the end once zlib has inflated every piece, and what its error dropped.
import type { Readable, Transform } from 'stream'
import type zlib from 'zlib'
import { inflateUntilDamage, type InflaterAtOnce } from './inflate'
import type { LimitedInput } from './stage-input'

/**
 * Writes a body cut at `limit` to zlib as `pipe` would (waiting while zlib's buffer is full), and ends zlib once it
 * has inflated every piece (see afterInflating). Returns the pieces written when `keepPieces` (no more than `limit`
 * bytes), to work out again what the bytes before a damage inflate to; else an empty list.
 */
export function writeTo (inflater: Transform, wireInput: LimitedInput, keepPieces: boolean): Buffer[] {
  const wirePieces: Buffer[] = []
  let ended = false
  const endInflater = (): void => {
    if (ended) return
    ended = true
    afterInflating(inflater, () => { if (!inflater.destroyed) inflater.end() })
  }
  wireInput.read(function toInflater (chunk: Buffer) {
    if (inflater.destroyed) return
    if (keepPieces) wirePieces.push(chunk)
    if (!inflater.write(chunk)) wireInput.pause()
  }, endInflater)
  inflater.on('drain', () => { wireInput.resume() })
  // A request whose stream was read before the parser ran ends zlib with nothing written, as `pipe` does.
  if (wireInput.readableEnded) process.nextTick(endInflater)
  return wirePieces
}

/**
 * What the wire bytes before a damage inflate to (up to `limit` + 1 bytes), when their inflation is bounded on the
 * loop, as `inflateExactly`'s is: a one-shot inflater (`limit` within AT_ONCE_MAX_LIMIT, so the wire kept and each
 * call's output are no more than that) and a body it inflates on the loop (`onLoop`: not a large br body). Else null,
 * and zlib's error is the answer without the output it dropped (body-parser's answer).
 */
export function inflatedBeforeDamage (salvager: InflaterAtOnce | undefined, wirePieces: readonly Buffer[], limit: number): Buffer | null {
  if (salvager === undefined) return null
  const wire = Buffer.concat(wirePieces)
  return salvager.onLoop(wire, limit) ? inflateUntilDamage(salvager, wire, limit + 1).inflated : null
}

/**
 * Calls `then` once zlib has inflated every piece written to it. When `end()` comes before zlib got to the last
 * piece, zlib inflates that piece with its finish flag, and drops what it inflated to if the body was cut short:
 * what a stage reads would depend on how fast zlib was. A flush written after the pieces is answered after them.
 */
export function afterInflating (inflater: Transform, then: () => void): void {
  const flush = (inflater as Partial<Pick<zlib.Zlib, 'flush'>>).flush
  if (typeof flush !== 'function' || inflater.destroyed || inflater.writableEnded) {
    then()
    return
  }
  flush.call(inflater, () => { then() })
}

/** Stops and frees a decompressor at once when reading ended, so late zlib errors cannot go unhandled. */
export function detachInflater (body: Readable, inflater: Transform): void {
  if (inflater.destroyed) return
  body.unpipe(inflater)
  inflater.on('error', ignore)
  inflater.destroy()
}

function ignore (): void {}
