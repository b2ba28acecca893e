// A Request body's bytes as they come: counted against `limit` and the declared length, the reader cancelled when refused (the Web build, and the Node build's Request read whole).
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

/** The next piece of the body, null at its end, or the reason it could not be read (as a reading failure). */
export function nextChunk (reader: BodyReader): Promise<Uint8Array | null | Error> {
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
export function refuse (reader: BodyReader, verdict: Error): Error {
  reader.cancel(verdict).catch(ignore)
  return verdict
}

export function asError (thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown))
}

export function ignore (): void {}
