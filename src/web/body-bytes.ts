// A Request body's bytes in the Web build: counted on the wire against `limit` and the declared length, inflated by DecompressionStream and counted again.
import * as errors from '../errors'
import type { WebBodyStream } from '../types'

/** A body's reader, as the pipeline took it. */
export type BodyReader = ReturnType<WebBodyStream['getReader']>

/**
 * Where the body's bytes go, in order: each piece once (inflated when the body is compressed). It may refuse a piece
 * (a multipart form's error): the body's answer then, since every byte before it was taken.
 */
export type TakeBytes = (chunk: Uint8Array) => Error | null

/** What reading the body ends with: nothing (every byte taken) or the body's first error in byte order. */
export type BodyVerdict = Error | null

/**
 * Reads the body to `take`, with raw-body's rules as the Node build applies them: 413 once the bytes pass `limit`
 * (those within it taken first, so an error in them comes first), 400 when the bytes differ from the declared
 * length, the stream's own error as a reading failure. The reader is cancelled on any refusal. A declared length
 * over `limit` is refused before this is called.
 */
export async function readBodyBytes (reader: BodyReader, declared: number | null, limit: number, take: TakeBytes): Promise<BodyVerdict> {
  let received = 0
  for (;;) {
    const chunk = await nextChunk(reader)
    if (chunk instanceof Error) return refuse(reader, chunk)
    if (chunk === null) break
    received += chunk.byteLength
    if (received > limit) {
      // The bytes within the limit first: a form's error in them is the answer, not the 413.
      return refuse(reader, take(chunk.subarray(0, chunk.byteLength - (received - limit))) ?? errors.entityTooLarge(limit, received))
    }
    const refusal = take(chunk)
    if (refusal !== null) return refuse(reader, refusal)
  }
  return declared !== null && received !== declared ? errors.sizeMismatch(received, declared) : null
}

/**
 * Reads a compressed body: the wire bytes are counted as readBodyBytes counts them and written to a DecompressionStream
 * of `format`, whose output is counted against `limit` too (a bomb is refused once its inflated bytes pass it) and
 * taken. The first error in byte order is the answer: what the output gives (the inflated 413, a form's error), a
 * damage the decompressor finds, the wire's 413 (once the bytes within it were inflated and judged: a damage in them
 * comes first), a wrong length, then the decompressor's complaint that the stream ended early. `wireFirst`: the wire's
 * 413 before the inflated one when both are passed by the same piece (a body read whole, as the Node build reads it).
 */
export async function readInflatedBytes (reader: BodyReader, declared: number | null, limit: number, format: string, take: TakeBytes,
  wireFirst: boolean): Promise<BodyVerdict> {
  const decompressor = new DecompressionStream(format as 'gzip')
  const writer = decompressor.writable.getWriter()
  const output = decompressor.readable.getReader()
  // The first error the output gives (the inflated 413, or what `take` refused): it comes before anything written later.
  let outputVerdict: Error | null = null
  // The decompressor's own error, as its output reports it (some runtimes reject the write, others only the read, and
  // a write after it is refused with an error of the stream's state, not the data's).
  let damage: Error | null = null
  let inflated = 0
  let inflatedPastLimit = false
  const drained = (async (): Promise<void> => {
    for (;;) {
      const { done, value } = await output.read()
      if (done) return
      inflated += value.byteLength
      if (inflated > limit) {
        outputVerdict = take(value.subarray(0, value.byteLength - (inflated - limit)))
        inflatedPastLimit = outputVerdict === null
        outputVerdict ??= errors.entityTooLarge(limit, inflated)
        return
      }
      outputVerdict = take(value)
      if (outputVerdict !== null) return
    }
  })().then(() => {
    // Stopped on a verdict: the rest of the output is not wanted, and the decompressor must not wait for it to be read.
    if (outputVerdict !== null) output.cancel(outputVerdict).catch(ignore)
  }, (err: unknown) => { damage ??= asError(err) })
  /** The decompressor's error once a write or the end failed: its output's, which says what was wrong with the data. */
  const failed = async (inputError: Error | null): Promise<Error | null> => {
    if (inputError === null) return null
    await drained
    return damage ?? inputError
  }
  const stop = (verdict: Error): Error => {
    writer.abort(verdict).catch(ignore)
    output.cancel(verdict).catch(ignore)
    return refuse(reader, verdict)
  }
  let received = 0
  for (;;) {
    const chunk = await nextChunk(reader)
    if (chunk instanceof Error) return stop(outputVerdict ?? chunk)
    if (chunk === null) break
    received += chunk.byteLength
    const pastLimit = received > limit
    damage ??= await failed(await writeOrFail(writer, pastLimit ? chunk.subarray(0, chunk.byteLength - (received - limit)) : chunk))
    if (outputVerdict !== null) return stop(outputVerdict)
    if (pastLimit) {
      // What the bytes within the limit inflate to is taken before the wire's 413 stands: the decompressor is closed
      // on them, and a complaint that the stream ended early is where the body was cut, not a damage.
      damage ??= await failed(await closeOrFail(writer, drained))
      await drained
      // Past both limits at once: the wire's 413 for a body read whole (the Node build counts the wire first), the
      // inflated one for a stream (the Node build's stage is given the inflated bytes first).
      if (outputVerdict !== null && !(inflatedPastLimit && wireFirst)) return stop(outputVerdict)
      const cutShort = damage !== null && damage.message === await endedEarlyMessage(format)
      return stop(damage !== null && !cutShort && !inflatedPastLimit ? errors.readFailed(damage) : errors.entityTooLarge(limit, received))
    }
    if (damage !== null) return stop(errors.readFailed(damage))
  }
  damage ??= await failed(await closeOrFail(writer, drained))
  await drained
  if (outputVerdict !== null) return stop(outputVerdict)
  // A damage in the bytes comes before their count; a stream that merely ended early may be so because the length was wrong.
  const cutShort = damage !== null && damage.message === await endedEarlyMessage(format)
  if (damage !== null && !cutShort) return errors.readFailed(damage)
  if (declared !== null && received !== declared) return errors.sizeMismatch(received, declared)
  return damage === null ? null : errors.readFailed(damage)
}

/**
 * Ends the decompressor's input: null once it finished, or its error (a body cut short, or damaged at its end). An
 * error at the end drops the output still queued, so the output of the writes is taken first where the runtime lets
 * it be: Deno's, Bun's and workerd's decompressors have inflated a piece when its write resolves, and one turn of the
 * event loop lets the reading loop (on microtasks) take it all. Node's resolves a write before its thread pool has
 * inflated it; a last piece still in the pool is inflated with the end and its output dropped with the error, so a
 * cut or damaged body whose last bytes pass the limit can be answered with the damage rather than the 413 (docs/web.md).
 */
async function closeOrFail (writer: WritableStreamDefaultWriter<Uint8Array>, drained: Promise<void>): Promise<Error | null> {
  await Promise.race([drained, new Promise((resolve) => { setTimeout(resolve, 0) })])
  return await writer.close().then(() => null, (err: unknown) => asError(err))
}

/** What this runtime's decompressor of a format says of a stream that ends early, asked once (runtimes word it differently). */
const endedEarlyMessages = new Map<string, Promise<string | null>>()

function endedEarlyMessage (format: string): Promise<string | null> {
  let message = endedEarlyMessages.get(format)
  if (message === undefined) {
    const decompressor = new DecompressionStream(format as 'gzip')
    const writer = decompressor.writable.getWriter()
    const read = new Response(decompressor.readable).arrayBuffer().then(() => null, (err: unknown) => asError(err).message)
    writer.close().catch(ignore)
    message = read
    endedEarlyMessages.set(format, message)
  }
  return message
}

/** Writes one piece to the decompressor: null once it took it, or the error it failed with (a damage in the data). */
function writeOrFail (writer: WritableStreamDefaultWriter<Uint8Array>, chunk: Uint8Array): Promise<Error | null> {
  if (chunk.byteLength === 0) return Promise.resolve(null)
  return writer.write(chunk).then(() => null, (err: unknown) => asError(err))
}

/** The next piece of the body, null at its end, or the reason it could not be read (as a reading failure). */
function nextChunk (reader: BodyReader): Promise<Uint8Array | null | Error> {
  return reader.read().then(chunkOf, failedRead)
}

function chunkOf (step: { done: boolean, value?: unknown }): Uint8Array | null | Error {
  if (step.done) return null
  if (!isUint8Array(step.value)) return errors.readFailed(new TypeError('a Request body chunk must be a Uint8Array'))
  return step.value
}

function failedRead (err: unknown): Error {
  return errors.readFailed(asError(err))
}

/** A Uint8Array of any realm (a Request made in another context, as a test's or an edge sandbox's, brings its own). */
function isUint8Array (value: unknown): value is Uint8Array {
  return value instanceof Uint8Array || (ArrayBuffer.isView(value) && Object.prototype.toString.call(value) === '[object Uint8Array]')
}

/** Cancels the rest of a refused body (the runtime stops reading the upload) and gives the verdict back. */
function refuse (reader: BodyReader, verdict: Error): Error {
  reader.cancel(verdict).catch(ignore)
  return verdict
}

function asError (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown))
}

function ignore (): void {}
