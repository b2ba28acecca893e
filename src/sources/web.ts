// A Web-standard `Request` as a request source: its headers as a Node request's, its body a stream made only when it is read and cancelled when it is refused.
import type { IncomingHttpHeaders } from 'http'
import { Readable } from 'stream'
import * as errors from '../errors'
import { LENGTH_DIGITS, webRequestDeclaresBody } from '../protocol'
import type { WebBodyStream, WebRequest } from '../types'
import { readBodyBytes } from '../web/wire-bytes'
import { VIEW_SOURCE, type RequestSource } from './request-source'

/** Where a request view keeps its Request and, once made, the body stream read from it. */
const SOURCE = Symbol('bodykit.webRequest')

type WebBodyReader = ReturnType<WebBodyStream['getReader']>

/** A Request, the reader the pipeline took of its body (claimWebBody) and the Node stream made of it, each once. */
interface WebSource { readonly request: WebRequest, reader: WebBodyReader | null, body: Readable | null }

/** Whether a value is a Fetch Request (and not a Node request, which has no `bodyUsed`). */
export function isWebRequest (value: unknown): value is WebRequest {
  if (value === null || typeof value !== 'object') return false
  // `in`, not the getter: undici's bodyUsed costs a microsecond, a tenth of reading a small body.
  const candidate = value as Partial<WebRequest>
  return 'bodyUsed' in candidate && 'body' in candidate && typeof candidate.headers?.get === 'function'
}

/** A Request as the pipeline reads a request: its headers as a Node request's; its body untouched until read. */
export function viewOfWebRequest (request: WebRequest): RequestView {
  return new RequestView(request)
}

/**
 * What the pipeline reads of a Request: a Node request's fields, each asked of the Request only when read, and the
 * Request itself (under a symbol, out of the way of functions given the view). The pipeline asks for the few
 * headers it needs (headerOf); `headers`, the plain object a `type` or `verify` function may read, is copied on
 * first use: copying every header costs a third of request.json()'s time for a small body on Bun and Deno, and
 * undici sorts them first.
 */
export class RequestView {
  readonly [VIEW_SOURCE]: RequestSource = webSource
  readonly httpVersionMajor = 1
  readonly httpVersionMinor = 1
  readonly [SOURCE]: WebSource
  private copied: IncomingHttpHeaders | null = null
  constructor (request: WebRequest) {
    this[SOURCE] = { request, reader: null, body: null }
  }

  get headers (): IncomingHttpHeaders {
    if (this.copied === null) {
      const headers: IncomingHttpHeaders = {}
      this[SOURCE].request.headers.forEach((value, name) => { headers[name.toLowerCase()] = value })
      this.copied = headers
    }
    return this.copied
  }

  // A function given the view may replace its headers, as it may a Node request's.
  set headers (headers: IncomingHttpHeaders) { this.copied = headers }

  /** One header: from the copy once there is one (a function may have changed it), else from the Request. */
  header (name: string): string | undefined {
    if (this.copied !== null) return this.copied[name] as string | undefined
    return this[SOURCE].request.headers.get(name) ?? undefined
  }

  get method (): string { return this[SOURCE].request.method }
  get url (): string { return this[SOURCE].request.url }
}

function sourceOf (req: object): WebSource | undefined {
  return req instanceof RequestView ? req[SOURCE] : undefined
}

/**
 * The source of a Request's view: its own headers, its `body` to say whether it has one, its body read with its own
 * reader (or as a stream of Buffers made from it), and a refused body cancelled. A Request has no connection to watch.
 */
export const webSource: RequestSource = {
  header: (req, name) => (req as unknown as RequestView).header(name),
  hasBody: (req) => webRequestHasBody(req) as boolean,
  malformedLength: malformedWebLength,
  claimBody: (req) => claimWebBody(req) !== false,
  bodyStream: (req) => webBodyStream(req) as Readable,
  readWhole: readWholeWebBody,
  watchRead: () => null,
  discardRest (_req, body, _res, _budget, onSettled) {
    // A Request has no connection to keep usable: its body is cancelled, and the runtime stops reading the upload.
    if (!body.readableEnded && !body.destroyed) body.destroy()
    if (onSettled) process.nextTick(onSettled)
  }
}

/**
 * Whether a Request view has a body to read, or null for a request that is no view: one it holds (a Request built
 * in code declares no length), or one its headers declare, as type-is says of a Node request: Bun hands a
 * `Content-Length: 0` request over with no body, which is an empty body to parse.
 */
export function webRequestHasBody (req: object): boolean | null {
  if (!(req instanceof RequestView)) return null
  return webRequestDeclaresBody(req[SOURCE].request.body !== null, (name) => req.header(name))
}

/**
 * Whether a Request's body was read by something else (`bodyUsed`): null for a request that is no view. A body that
 * another reader holds but has not read yet is found later, by claimWebBody.
 */
export function isWebBodyUsed (req: object): boolean | null {
  const source = sourceOf(req)
  if (source === undefined) return null
  return source.body === null && source.request.bodyUsed
}

/**
 * Takes the reader of a Request's body once the pipeline is set to read it: false when another reader holds the
 * body (it is theirs, as a body already read is), true when taken, null for a request that is no view. The lock
 * is learnt from getReader() itself: in Node 20 each getter of a Request's stream costs as much as a small body's
 * whole parse (every stream has its own hidden class), so `locked` is not asked first.
 */
export function claimWebBody (req: object): boolean | null {
  const source = sourceOf(req)
  if (source === undefined || source.request.body === null) return null
  if (source.reader !== null) return true
  try {
    source.reader = source.request.body.getReader()
    return true
  } catch {
    return false
  }
}

/**
 * The Request's body as a Node stream of Buffers, made once, when the pipeline first reads it (a request it skips
 * keeps an unread body). Destroying the stream cancels the Request's body: a refused upload is not read on.
 */
export function webBodyStream (req: object): Readable | null {
  const source = sourceOf(req)
  if (source === undefined) return null
  if (source.body === null) source.body = streamOfWebBody(source)
  return source.body
}

function streamOfWebBody (source: WebSource): Readable {
  const { body } = source.request
  if (body === null) return Readable.from([])
  return new Readable({
    read () {
      // Claimed before reading (claimWebBody); a stream made only to be refused takes its reader here.
      source.reader ??= body.getReader()
      source.reader.read().then(({ done, value }) => {
        if (done) this.push(null)
        // push() makes a Buffer of a Uint8Array without a copy (the pipeline and busboy search Buffers); anything
        // else is an error of the stream.
        else this.push(value as Uint8Array)
      }).catch((err: unknown) => { this.destroy(err instanceof Error ? err : new Error(String(err))) })
    },
    destroy (err, callback) {
      // A refused body is cancelled: through the pipeline's reader, or a new one when the body is still free (one
      // that another reader holds is theirs).
      if (source.reader !== null) source.reader.cancel(err ?? undefined).catch(ignore)
      else if (!body.locked) body.getReader().cancel(err ?? undefined).catch(ignore)
      callback(err)
    }
  })
}

/**
 * Reads a Request's whole body with its own reader, as raw-body reads a stream with `limit` and the declared
 * `length`: 413 at once for a declared length over the limit, 413 as soon as the bytes pass it, 400 when they
 * differ from the declared length, the stream's own error otherwise; cancelled on every refusal. It skips the
 * Node stream between the two (a third of the time of a small body). False unless the request is a view whose body
 * the pipeline claimed.
 * test/web/request.test.ts proves it against a Node stream read by raw-body, over drawn bodies.
 */
export function readWholeWebBody (req: object, limit: number, callback: (err: Error | null, bytes?: Buffer) => void): boolean {
  const source = sourceOf(req)
  if (source === undefined || source.reader === null) return false
  const length = (req as RequestView).header('content-length')
  // Lengths that are not digits were refused before reading.
  const declared = length === undefined ? null : Number(length)
  const { reader } = source
  if (declared !== null && declared > limit) {
    reader.cancel().catch(ignore)
    process.nextTick(callback, errors.entityTooLarge(limit, 0, declared))
    return true
  }
  // Kept as they came: Buffer.concat copies them once; a view of each would ask JavaScriptCore (Bun) for its `buffer`, which it makes on demand.
  const chunks: Uint8Array[] = []
  // The Web build's reading, with raw-body's rules; called back outside its promise, so that a throw from the callback is not taken for a read error.
  readBodyBytes(reader, declared, limit, (chunk) => { chunks.push(chunk); return null }).then((verdict) => {
    queueMicrotask(() => {
      if (verdict !== null) callback(verdict)
      else callback(null, Buffer.concat(chunks))
    })
  }, (err: unknown) => { queueMicrotask(() => { callback(err instanceof Error ? err : new Error(String(err))) }) })
  return true
}

function ignore (): void {}

/** The Content-Length of a Request when it is not digits (Node's HTTP parser refuses such a request before bodykit sees it). */
export function malformedWebLength (req: object): string | null {
  if (!(req instanceof RequestView)) return null
  const length = req.header('content-length')
  return length === undefined || LENGTH_DIGITS.test(length) ? null : length
}
