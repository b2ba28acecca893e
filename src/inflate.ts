// One-shot inflation: a small compressed body, read off the wire first, inflated in one synchronous zlib call.
import type { Transform } from 'stream'
import zlib from 'zlib'
import getRawBody from 'raw-body'
import * as errors from './errors'

interface Options { maxOutputLength: number }

/**
 * How one Content-Encoding is inflated in one zlib call (a variant's data): `sync` on the event loop when
 * `onLoop` says its work is bounded for this input, else `async` (the same call, on zlib's thread pool; `inflateExactly` streams such br bodies instead).
 */
export interface InflaterAtOnce {
  readonly sync: (input: Buffer, options: Options) => Buffer
  readonly async: (input: Buffer, options: Options, callback: (err: Error | null, body: Buffer) => void) => void
  readonly onLoop: (input: Buffer, limit: number) => boolean
  /**
   * Whether a stream hands raw-body, however the body is split, all that the call inflated before it stopped
   * past `limit`: so a 413 from the call is the stream's. True of gzip, deflate and zstd, which write their output
   * as they read; brotli may hold back its output until more input comes, how much depending on the pieces.
   */
  readonly outputsAsItGoes: boolean
  /**
   * Whether the call's body is the stream's however the body was split. Not so for zstd: after a frame, its
   * stream starts another only if it begins a piece (`zstd(a)` then `zstd(b)` in two pieces gives a + b, in one
   * piece a), so a zstd body in several pieces is inflated as a stream from the start.
   */
  readonly sameInPieces: boolean
}

/** gzip and deflate: zlib writes its output as it goes, so `maxOutputLength` bounds the work. */
function always (): boolean {
  return true
}

/** zlib's zstd functions, present from Node 22.15 (the types of Node 20 do not declare them). */
const zstd = zlib as unknown as {
  zstdDecompressSync?: InflaterAtOnce['sync']
  zstdDecompress?: InflaterAtOnce['async']
}

/**
 * The one-shot inflaters of gzip and deflate (both entries), br and, where Node has it, zstd (the default
 * entry). zstd writes its output as it goes, as gzip does: `maxOutputLength` bounds its work too (a 64 MiB
 * bomb stops in under 1 ms on the bench machine, Node 24).
 */
export const atOnce: Readonly<{ gzip: InflaterAtOnce, deflate: InflaterAtOnce, br: InflaterAtOnce, zstd?: InflaterAtOnce }> = {
  gzip: { sync: zlib.gunzipSync, async: zlib.gunzip, onLoop: always, outputsAsItGoes: true, sameInPieces: true },
  deflate: { sync: zlib.inflateSync, async: zlib.inflate, onLoop: always, outputsAsItGoes: true, sameInPieces: true },
  br: { sync: zlib.brotliDecompressSync, async: zlib.brotliDecompress, onLoop: isSmallBrotli, outputsAsItGoes: false, sameInPieces: true },
  ...(zstd.zstdDecompressSync && zstd.zstdDecompress ? { zstd: { sync: zstd.zstdDecompressSync, async: zstd.zstdDecompress, onLoop: always, outputsAsItGoes: true, sameInPieces: false } } : {})
}

/**
 * The largest `limit` (in bytes) for which a compressed body is read first and then inflated in one call on
 * the event loop; a larger `limit` keeps the streaming path, where zlib works on the thread pool. At most
 * this many compressed bytes are read and at most one 16 KiB chunk more than this is inflated, so one
 * request blocks the loop for a bounded time (measured by `npm run bench`, docs/performance.md).
 */
export const AT_ONCE_MAX_LIMIT = 256 * 1024

/** zlib's output chunk (16 KiB): the streaming path hands raw-body the inflated bytes in chunks of this size. */
const CHUNK = zlib.constants.Z_DEFAULT_CHUNK

/** What a failed synchronous call leaves (no body). */
const EMPTY = Buffer.alloc(0)

/**
 * Inflates a whole compressed body in one zlib call, stopping once the output is past `limit`, and calls
 * back (synchronously when on the loop) with the body, or with the error the streaming path gives: zlib's
 * own (message, `code`, `errno`), or a 413 whose `received` is what body-parser reports when the body
 * arrives in one piece: the inflated size at the end of the first 16 KiB output chunk past `limit` (or the
 * whole inflated size, if smaller). `stopped` says the call stopped there, before the end of the input.
 */
export function inflateAtOnce (inflater: InflaterAtOnce, input: Buffer, limit: number,
  callback: (err: Error | null, body?: Buffer, stopped?: boolean) => void): void {
  // The stream is stopped at the first chunk boundary past `limit`: inflate no further.
  const options = { maxOutputLength: (Math.floor(limit / CHUNK) + 1) * CHUNK }
  const settle = (err: Error | null, body: Buffer): void => {
    if (err !== null && (err as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') callback(errors.entityTooLarge(limit, options.maxOutputLength), undefined, true)
    else if (err !== null) callback(err)
    else if (body.length > limit) callback(errors.entityTooLarge(limit, body.length))
    else callback(null, body)
  }
  if (!inflater.onLoop(input, limit)) {
    inflater.async(input, options, settle)
    return
  }
  let body: Buffer
  try {
    body = inflater.sync(input, options)
  } catch (err) {
    settle(err as Error, EMPTY)
    return
  }
  settle(null, body)
}

/** A compressed body read off the wire in full: its bytes, and the length of each piece as it arrived. */
export interface WireBody {
  readonly bytes: Buffer
  readonly pieces: readonly number[]
}

/**
 * Inflates a whole compressed body in one zlib call and gives the streaming path's verdict (body-parser's).
 * An intact body gets it from the one call. A damaged one (zlib reports an error) is inflated again as a
 * stream, `createStream()`, the way body-parser does: in that case the answer depends on how much output
 * reached raw-body before zlib saw the damage (413 if that is past `limit`, else zlib's error), which depends
 * on zlib's 16 KiB output chunks and on the pieces the body arrived in. So the stream itself is run rather than
 * modelled; damaged bodies are rare, and the stream stops past `limit` as always. So is a br body the call
 * stopped past `limit` (see `outputsAsItGoes`): the rest of it, unseen, may be damaged.
 */
export function inflateExactly (inflater: InflaterAtOnce, createStream: () => Transform, wire: WireBody, limit: number,
  callback: (err: Error | null, body?: Buffer) => void): void {
  // The stream from the start where one call cannot give its answer: zstd in pieces, and a br body too large to
  // inflate on the loop (a call stopped past `limit` would prove nothing, and inflating it twice doubles the
  // work on a bomb: the stream alone stops where body-parser's does).
  if ((!inflater.sameInPieces && wire.pieces.length > 1) || (!inflater.outputsAsItGoes && !inflater.onLoop(wire.bytes, limit))) {
    inflateAsStream(createStream, wire, limit, callback)
    return
  }
  inflateAtOnce(inflater, wire.bytes, limit, function onInflated (err, body, stopped) {
    // The 413s of inflateAtOnce are http errors; zlib's own errors have no status.
    const damaged = err !== null && (err as { status?: unknown }).status === undefined
    if (damaged || (stopped === true && !inflater.outputsAsItGoes)) inflateAsStream(createStream, wire, limit, callback)
    else callback(err, body)
  })
}

/** Writes the body's pieces into a decompression stream and reads its output with raw-body and `limit`, as body-parser does. */
export function inflateAsStream (createStream: () => Transform, wire: WireBody, limit: number,
  callback: (err: Error | null, body?: Buffer) => void): void {
  const stream = createStream()
  // raw-body stops listening once it has answered: a later zlib error must not go unhandled.
  stream.on('error', ignore)
  getRawBody(stream, { limit, encoding: null } as getRawBody.Options, function onInflated (err: getRawBody.RawBodyError | null, body: Buffer) {
    stream.destroy()
    callback(err ?? null, body)
  })
  let at = 0
  for (const piece of wire.pieces) stream.write(wire.bytes.subarray(at, at += piece))
  stream.end()
}

function ignore (): void {}

/**
 * Whether a br body is inflated at once within bounds. `maxOutputLength` alone does not bound brotli's work:
 * the decoder fills its ring buffer (up to the 16 MiB window) before it outputs anything, so a bomb
 * could block the loop for tens of milliseconds. It sizes that buffer to the meta-block length, though, so
 * a body whose first meta-block is its last and holds at most `limit` bytes is safe (RFC 7932 §9.1, §9.2):
 * what encoders send for a small body. Any other br body is inflated as a stream (`inflateExactly`), as body-parser does.
 */
export function isSmallBrotli (input: Buffer, limit: number): boolean {
  let at = 0
  const bits = (count: number): number => {
    let value = 0
    for (let i = 0; i < count; i++, at++) value |= ((input[at >> 3] >> (at & 7)) & 1) << i
    return value
  }
  // WBITS takes 1, 4 or 7 bits; 0b0010001 announces a large window, which the decoder refuses (and says so).
  if (bits(1) === 1 && bits(3) === 0 && bits(3) === 1) return false
  if (bits(1) === 0) return false // ISLAST
  if (bits(1) === 1) return true // ISLASTEMPTY: nothing to inflate
  const nibbles = bits(2)
  if (nibbles === 3) return false // a metadata block cannot be last: the decoder reports the error
  return bits((nibbles + 4) * 4) + 1 <= limit
}
