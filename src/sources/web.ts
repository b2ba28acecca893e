// A Web-standard `Request` as a request source: its headers as a Node request's, its body a stream made only when it is read and cancelled when it is refused.
import type { IncomingHttpHeaders } from 'http'
import { Readable } from 'stream'
import * as errors from '../errors'
import type { WebBodyStream, WebRequest } from '../types'

/** Where a request view keeps its Request and, once made, the body stream read from it. */
const SOURCE = Symbol('bodykit.webRequest')

interface WebSource { readonly request: WebRequest, body: Readable | null }

/** What the pipeline reads of a Request: a Node request's fields, and the Request itself. */
export interface WebRequestView {
  readonly method: string
  readonly url: string
  readonly headers: IncomingHttpHeaders
  readonly httpVersionMajor: 1
  readonly httpVersionMinor: 1
  readonly [SOURCE]: WebSource
}

/** Whether a value is a Fetch Request (and not a Node request, which has no `bodyUsed`). */
export function isWebRequest (value: unknown): value is WebRequest {
  if (value === null || typeof value !== 'object') return false
  const candidate = value as Partial<WebRequest>
  return typeof candidate.bodyUsed === 'boolean' && typeof candidate.headers?.get === 'function' && 'body' in candidate
}

/** A Request as the pipeline reads a request: lower-case headers in a plain object; its body untouched until read. */
export function viewOfWebRequest (request: WebRequest): WebRequestView {
  const headers: IncomingHttpHeaders = {}
  request.headers.forEach((value, name) => { headers[name.toLowerCase()] = value })
  return { method: request.method, url: request.url, headers, httpVersionMajor: 1, httpVersionMinor: 1, [SOURCE]: { request, body: null } }
}

function sourceOf (req: object): WebSource | undefined {
  return (req as Partial<WebRequestView>)[SOURCE]
}

/** Whether the request came from a Request. */
export function isWebRequestView (req: object): boolean {
  return sourceOf(req) !== undefined
}

/**
 * Whether a Request view has a body to read: the Request's own answer (a Request built in code declares no
 * length), or null for a request that is no view.
 */
export function webRequestHasBody (req: object): boolean | null {
  const source = sourceOf(req)
  return source === undefined ? null : source.request.body !== null
}

/** Whether a Request's body was read (or is being read) by something else: null for a request that is no view. */
export function isWebBodyUsed (req: object): boolean | null {
  const source = sourceOf(req)
  if (source === undefined) return null
  return source.body === null && (source.request.bodyUsed || source.request.body?.locked === true)
}

/**
 * The Request's body as a Node stream of Buffers, made once, when the pipeline first reads it (a request it skips
 * keeps an unread body). Destroying the stream cancels the Request's body: a refused upload is not read on.
 */
export function webBodyStream (req: object): Readable | null {
  const source = sourceOf(req)
  if (source === undefined) return null
  if (source.body === null) source.body = streamOfWebBody(source.request.body)
  return source.body
}

function streamOfWebBody (body: WebBodyStream | null): Readable {
  if (body === null) return Readable.from([])
  // The reader is taken at the first read: until then the body may still be read whole (readWholeWebBody).
  let reader: ReturnType<WebBodyStream['getReader']> | null = null
  return new Readable({
    read () {
      reader ??= body.getReader()
      reader.read().then(({ done, value }) => {
        if (done) this.push(null)
        // push() makes a Buffer of a Uint8Array without a copy (the pipeline and busboy search Buffers); anything
        // else is an error of the stream.
        else this.push(value as Uint8Array)
      }).catch((err: unknown) => { this.destroy(err instanceof Error ? err : new Error(String(err))) })
    },
    destroy (err, callback) {
      // A body read whole holds its own reader, which cancels it on a refusal.
      if (reader !== null) reader.cancel(err ?? undefined).catch(ignore)
      else if (!body.locked) body.getReader().cancel(err ?? undefined).catch(ignore)
      callback(err)
    }
  })
}

/**
 * Reads a Request's whole body with its own reader, as raw-body reads a stream with `limit` and the declared
 * `length`: 413 at once for a declared length over the limit, 413 as soon as the bytes pass it, 400 when they
 * differ from the declared length, the stream's own error otherwise; cancelled on every refusal. It skips the
 * Node stream between the two (a third of the time of a small body). False for a request that is no view.
 * test/web/request.test.ts proves it against a Node stream read by raw-body, over drawn bodies.
 */
export function readWholeWebBody (req: object, limit: number, callback: (err: Error | null, bytes?: Buffer) => void): boolean {
  const source = sourceOf(req)
  if (source === undefined || source.request.body === null) return false
  const length = (req as WebRequestView).headers['content-length']
  // Lengths that are not digits were refused before reading.
  const declared = length === undefined ? null : Number(length)
  const reader = source.request.body.getReader()
  if (declared !== null && declared > limit) {
    reader.cancel().catch(ignore)
    process.nextTick(callback, errors.entityTooLarge(limit, 0, declared))
    return true
  }
  const chunks: Buffer[] = []
  let received = 0
  const refuse = (err: Error): void => {
    reader.cancel(err).catch(ignore)
    process.nextTick(callback, err)
  }
  const pump = (): void => {
    reader.read().then(({ done, value }) => {
      if (done) {
        if (declared !== null && received !== declared) refuse(errors.sizeMismatch(received, declared))
        else process.nextTick(callback, null, Buffer.concat(chunks, received))
        return
      }
      if (!(value instanceof Uint8Array)) throw new TypeError('a Request body chunk must be a Uint8Array')
      received += value.byteLength
      if (received > limit) {
        refuse(errors.entityTooLarge(limit, received))
        return
      }
      chunks.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
      pump()
    }).catch((err: unknown) => { refuse(err instanceof Error ? err : new Error(String(err))) })
  }
  pump()
  return true
}

function ignore (): void {}

/** The Content-Length of a Request when it is not digits (Node's HTTP parser refuses such a request before bodykit sees it). */
export function malformedWebLength (req: object): string | null {
  if (sourceOf(req) === undefined) return null
  const length = (req as WebRequestView).headers['content-length']
  return length === undefined || /^\d+$/.test(length) ? null : length
}
