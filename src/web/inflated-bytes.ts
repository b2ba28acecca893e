// A compressed Request body's bytes in the Web build: counted on the wire as wire-bytes.ts counts them, inflated by DecompressionStream and counted again.
import * as errors from '../errors'
import { asError, ignore, nextChunk, refuse, type BodyReader, type BodyVerdict, type TakeBytes } from './wire-bytes'

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
