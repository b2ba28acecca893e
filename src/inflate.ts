// One-shot inflation: a small compressed body, read off the wire first, inflated in one synchronous zlib call.
import zlib from 'zlib'
import * as errors from './errors'

/**
 * How one Content-Encoding is inflated in one zlib call (a variant's data): `sync` on the event loop when
 * `onLoop` says its work is bounded for this input, else `async` (the same call, on zlib's thread pool).
 */
export interface InflaterAtOnce {
  readonly sync: (input: Buffer, options: Options) => Buffer
  readonly async: (input: Buffer, options: Options, callback: (err: Error | null, body: Buffer) => void) => void
  readonly onLoop: (input: Buffer, limit: number) => boolean
  /**
   * The `finishFlush` that inflates a prefix of a body as far as it goes without calling its end an error
   * (`Z_SYNC_FLUSH`, brotli's flush operation): `inflateUntilDamage` uses it.
   */
  readonly flushAsFarAsItGoes: number
}

/** gzip and deflate: zlib writes its output as it goes, so `maxOutputLength` bounds the work. */
function always (): boolean {
  return true
}

/** zlib's zstd functions and constants, present from Node 22.15 (the types of Node 20 do not declare them). */
const zstd = zlib as unknown as {
  zstdDecompressSync?: InflaterAtOnce['sync']
  zstdDecompress?: InflaterAtOnce['async']
  constants: { ZSTD_e_flush?: number }
}

const { Z_SYNC_FLUSH, BROTLI_OPERATION_FLUSH } = zlib.constants

/**
 * The one-shot inflaters of gzip and deflate (both entries), br and, where Node has it, zstd (the default
 * entry). zstd writes its output as it goes, as gzip does: `maxOutputLength` bounds its work too (a 64 MiB
 * bomb stops in under 1 ms on the bench machine, Node 24).
 */
export const atOnce: Readonly<{ gzip: InflaterAtOnce, deflate: InflaterAtOnce, br: InflaterAtOnce, zstd?: InflaterAtOnce }> = {
  gzip: { sync: zlib.gunzipSync, async: zlib.gunzip, onLoop: always, flushAsFarAsItGoes: Z_SYNC_FLUSH },
  deflate: { sync: zlib.inflateSync, async: zlib.inflate, onLoop: always, flushAsFarAsItGoes: Z_SYNC_FLUSH },
  br: { sync: zlib.brotliDecompressSync, async: zlib.brotliDecompress, onLoop: isSmallBrotli, flushAsFarAsItGoes: BROTLI_OPERATION_FLUSH },
  ...(zstd.zstdDecompressSync && zstd.zstdDecompress
    ? { zstd: { sync: zstd.zstdDecompressSync, async: zstd.zstdDecompress, onLoop: always, flushAsFarAsItGoes: zstd.constants.ZSTD_e_flush ?? 1 } }
    : {})
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

/** The end of the first 16 KiB output chunk past `limit`: body-parser's stream is stopped there, so no call inflates further. */
function chunkPast (limit: number): number {
  return (Math.floor(limit / CHUNK) + 1) * CHUNK
}

/** What a failed synchronous call leaves (no body). */
const EMPTY: Buffer = Buffer.alloc(0)

/**
 * Inflates a whole compressed body in one zlib call, stopping once the output is past `limit`, and calls
 * back (synchronously when on the loop) with the body, or with the error the streaming path gives: zlib's
 * own (message, `code`, `errno`), or a 413 whose `received` is what body-parser reports when the body
 * arrives in one piece: the inflated size at the end of the first 16 KiB output chunk past `limit` (or the
 * whole inflated size, if smaller).
 */
export function inflateAtOnce (inflater: InflaterAtOnce, input: Buffer, limit: number,
  callback: (err: Error | null, body?: Buffer) => void): void {
  const options = { maxOutputLength: chunkPast(limit) }
  const settle = (err: Error | null, body: Buffer): void => {
    if (err !== null && isPastMaxOutput(err)) callback(errors.entityTooLarge(limit, options.maxOutputLength))
    else if (err !== null) callback(err)
    else if (body.length > limit) callback(errors.entityTooLarge(limit, body.length))
    else callback(null, body)
  }
  callOf(inflater, input, limit)(input, options, (result) => {
    if (Buffer.isBuffer(result)) settle(null, result)
    else settle(result, EMPTY)
  })
}

/**
 * Inflates a whole compressed body and calls back with its answer, the same however the body arrived (issue 45:
 * a body's answer is its first error in byte order). An intact body gets it from one call: its inflated bytes,
 * or a 413 once they pass `limit`. A damaged one (zlib reports an error, "unexpected end of file" included) gets
 * a 413 if the longest prefix of it that inflates without error inflates past `limit` (`received`: that output,
 * up to the end of the first 16 KiB chunk past `limit`), else zlib's error (`inflateUntilDamage`). The search runs
 * only after zlib reported an error, on the loop or, for a br body too large for it (`isSmallBrotli`), on zlib's
 * thread pool, as the first call did.
 */
export function inflateExactly (inflater: InflaterAtOnce, bytes: Buffer, limit: number,
  callback: (err: Error | null, body?: Buffer) => void): void {
  inflateAtOnce(inflater, bytes, limit, function onInflated (err, body) {
    // The 413s of inflateAtOnce are http errors; zlib's own errors have no status.
    if (err === null || (err as { status?: unknown }).status !== undefined) {
      callback(err, body)
      return
    }
    const stop = chunkPast(limit)
    findCleanPrefix(callOf(inflater, bytes, limit), inflater.flushAsFarAsItGoes, bytes, stop, err, function onPrefix ({ inflated }) {
      // `received` as for an intact body, and as body-parser counts a body in one piece that it answers 413.
      callback(inflated.length > limit ? errors.entityTooLarge(limit, Math.min(inflated.length, stop)) : err)
    })
  })
}

/** What `inflateUntilDamage` finds. */
export interface InflatedUntilDamage {
  /** The output of the longest prefix of the body that inflates without error (see `inflateUntilDamage` for its bounds). */
  readonly inflated: Buffer
  /** zlib's error for the whole body; null if it inflates without one, or passes `maxOutput` before one. */
  readonly error: Error | null
}

/**
 * What a compressed body inflates to before its damage, in synchronous zlib calls on the loop: for a body that
 * zlib failed on, where Node's zlib drops the output of the write it fails in, so a stream cannot tell.
 *
 * `inflated` is the output of the longest prefix of `wire` that inflates without error (with `finishFlush` set
 * to `flushAsFarAsItGoes`, so a prefix cut anywhere is no error), when that output is at most `maxOutput` bytes.
 * Past that, it is the output of the shortest prefix that inflates past `maxOutput` without error: more than
 * `maxOutput` bytes, at most `maxOutput` + 16 KiB (one byte of gzip or deflate inflates to at most 1,032 bytes).
 * A byte of br or zstd can inflate to megabytes: one whose output would go past `maxOutput` + 16 KiB is not
 * inflated and ends the prefix, as a damage does. An empty prefix inflates to nothing.
 *
 * Cost: one call for an intact body within `maxOutput`; else about log2(`wire.length`) + 2 calls, each stopped
 * past `maxOutput` (+ 16 KiB for the last), by `maxOutputLength`.
 */
export function inflateUntilDamage (inflater: InflaterAtOnce, wire: Buffer, maxOutput: number): InflatedUntilDamage {
  let found: InflatedUntilDamage = { inflated: EMPTY, error: null }
  const call = callSync(inflater)
  call(wire, { maxOutputLength: Math.max(1, maxOutput) }, function onWhole (whole) {
    if (Buffer.isBuffer(whole) && whole.length <= maxOutput) found = { inflated: whole, error: null }
    else findCleanPrefix(call, inflater.flushAsFarAsItGoes, wire, maxOutput, Buffer.isBuffer(whole) || isPastMaxOutput(whole) ? null : whole, (result) => { found = result })
  })
  return found
}

/** Options of one zlib call. */
interface Options { maxOutputLength: number, finishFlush?: number }

/** One zlib call that calls back with its output, or its error (zlib's, or `ERR_BUFFER_TOO_LARGE` past `maxOutputLength`). */
type Call = (input: Buffer, options: Options, done: (result: Buffer | Error) => void) => void

/** The call on the loop when its work is bounded for this body (see `onLoop`), else on zlib's thread pool. */
function callOf (inflater: InflaterAtOnce, wire: Buffer, limit: number): Call {
  if (inflater.onLoop(wire, limit)) return callSync(inflater)
  return (input, options, done) => { inflater.async(input, options, (err, body) => { done(err ?? body) }) }
}

function callSync (inflater: InflaterAtOnce): Call {
  return function inflateSync (input, options, done) {
    let output: Buffer
    try {
      output = inflater.sync(input, options)
    } catch (err) {
      done(err as Error)
      return
    }
    done(output)
  }
}

/**
 * Whether a call stopped because its output passed `maxOutputLength` (no damage seen): Node's `ERR_BUFFER_TOO_LARGE`,
 * or workerd's RangeError "Memory limit exceeded" (its one-shot calls' errors carry no `code`).
 */
function isPastMaxOutput (err: Error): boolean {
  const { code } = err as { code?: unknown }
  return code === 'ERR_BUFFER_TOO_LARGE' || (code === undefined && err.name === 'RangeError' && err.message === 'Memory limit exceeded')
}

/**
 * Whether zlib's error says only that the input ended before the compressed stream did (`Z_BUF_ERROR`, "unexpected
 * end of file"; workerd's one-shot calls give the message without the code): where a body was cut, not a damage.
 */
export function isEndedEarly (err: Error): boolean {
  const { code } = err as { code?: unknown }
  return code === 'Z_BUF_ERROR' || (code === undefined && err.message.toLowerCase() === 'unexpected end of file')
}

/**
 * The search of `inflateUntilDamage`, by bisection over prefix lengths, through `call` (on the loop or not). A
 * prefix "fits" when it inflates without error to at most `maxOutput` bytes: true of every prefix up to the last
 * that fits (a longer prefix has more output, and its damage too), so the longest is found in log2(n) calls.
 * The byte after it is either damaged or takes the output past `maxOutput`; one call tells which.
 */
function findCleanPrefix (call: Call, flush: number, wire: Buffer, maxOutput: number, error: Error | null,
  done: (result: InflatedUntilDamage) => void): void {
  const options = { maxOutputLength: Math.max(1, maxOutput), finishFlush: flush }
  // wire[0, fits) fits and inflates to `inflated`; wire[0, fails) does not (wire.length + 1: no such prefix).
  let fits = 0
  let inflated = EMPTY
  let fails = wire.length + 1
  let past: Buffer | Error | null = null // why wire[0, fails) does not fit, when it was past maxOutput
  const bisect = (): void => {
    if (fails - fits > 1) {
      const middle = (fits + fails) >>> 1
      call(wire.subarray(0, middle), options, function onPrefix (result) {
        if (Buffer.isBuffer(result) && result.length <= maxOutput) {
          fits = middle
          inflated = result
        } else {
          fails = middle
          past = Buffer.isBuffer(result) || isPastMaxOutput(result) ? result : null
        }
        bisect()
      })
      return
    }
    if (past === null) done({ inflated, error }) // the whole fits, or the next byte is damaged
    else if (Buffer.isBuffer(past)) done({ inflated: past, error })
    else {
      call(wire.subarray(0, fails), { maxOutputLength: maxOutput + CHUNK, finishFlush: flush }, function onNextByte (result) {
        done({ inflated: Buffer.isBuffer(result) ? result : inflated, error })
      })
    }
  }
  bisect()
}

/**
 * Whether a br body is inflated at once within bounds. `maxOutputLength` alone does not bound brotli's work:
 * the decoder fills its ring buffer (up to the 16 MiB window) before it outputs anything, so a bomb
 * could block the loop for tens of milliseconds. It sizes that buffer to the meta-block length, though, so
 * a body whose first meta-block is its last and holds at most `limit` bytes is safe (RFC 7932 §9.1, §9.2):
 * what encoders send for a small body. Any other br body is inflated on zlib's thread pool (`inflateExactly`).
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
