// The one pipeline every parser runs: skip checks, type match, charset, then the parser's reading of the body (read
// whole and parsed: read-whole.ts; or streamed to a stage: read-streamed.ts), and one way to report its outcome.
import type { ServerResponse } from 'http'
import type { Readable } from 'stream'
import type { HttpError } from 'http-errors'
import type { Log } from './dependencies'
import * as errors from './errors'
import type { InflaterAtOnce } from './inflate'
import { refuseBeforeReading, validateBody } from './body-rules'
import type { DiscardBudget, StandardSchemaV1, VerifyFunction } from './options'
import { http2StreamOf } from './protocol'
import { headerOf, sourceOf, type RequestSource } from './sources/source'
import type { ReadLifetime } from './sources/request-source'
import type { StageInput } from './stage-input'
import type { TypeMatcher } from './type-match'
import type { BodyRequest, Variant } from './variants'
import { parseLength } from './wire'

/** Express's continuation: called once, with an error or without. */
export type NextFunction = (err?: unknown) => void

/** Turns the decoded body (a string, or a Buffer when there is no charset) into `req.body`. */
export type ParseFunction = (body: string & Buffer, charset: string | null) => unknown

/** What a streaming stage (multipart) hands on: the fields (`req.body`, what `schema` checks) and the files. */
export interface StageResult {
  readonly fields: unknown
  /** null when the parser takes no files. */
  readonly files: readonly unknown[] | null
  /** Removes what the stage stored (disk files), when the body is refused after all (`schema`), then calls back. */
  readonly release: (callback: () => void) => void
}

/**
 * A parser that consumes the body as a stream instead of reading it whole: the pipeline does everything up
 * to the body stream (skip, type, inflate, wire count, limit, read-off, errors, schema) and hands it the stream.
 */
export interface BodyStage {
  /** An error known from the headers alone (e.g. no boundary): the body is refused unread. */
  check (req: BodyRequest): HttpError | Error | null
  /** Reads `input` (the body stream, inflated if need be and cut at `limit`); calls `done` once, never from within `start`. */
  start (input: StageInput, req: BodyRequest, res: ServerResponse | undefined,
    done: (err: HttpError | Error | null, result?: StageResult) => void): StageReading
}

/** One request's reading by a stage. */
export interface StageReading {
  /** Stops reading and removes whatever was stored, then calls back (used when the pipeline fails the request first). */
  readonly abort: StageAbort
  /**
   * Calls back, never synchronously, once the stage has judged every byte it was given: parsed them, and decided on
   * each part they hold (a fileFilter may take its time). Before answering 413 for the bytes past `limit`, the
   * pipeline waits on this, so that an error the stage meets before them is the answer however the body was split.
   */
  readonly judged: (callback: () => void) => void
}

/**
 * Stops a stage and removes what it stored, then calls back, with the stage's own error when it had already
 * failed and was still cleaning up.
 */
export type StageAbort = (callback: (own?: Error) => void) => void

/** Everything a middleware needs per request, fixed when the middleware is created. */
export interface ReadSettings {
  readonly variant: Variant
  readonly debug: Log
  readonly shouldParse: TypeMatcher
  /** Which charsets the parser accepts; null when the body stays a Buffer (raw). */
  readonly acceptsCharset: ((charset: string) => boolean) | null
  readonly defaultCharset: string
  readonly inflate: boolean
  readonly limit: number
  readonly verify: VerifyFunction | false
  /** Whether the body's bytes are kept (`variant.keepRawBody`: on `req.rawBody` for the middlewares). */
  readonly rawBody: boolean
  /** How much of a refused body is read off after the answer. */
  readonly discard: DiscardBudget
  /** Whether an HTTP/2 body sent without Content-Length is read (else the request counts as having none). */
  readonly readHttp2WithoutLength: boolean
  /**
   * The variant's one-shot zlib calls, or none when `limit` is too large for them: a parser's small compressed body is
   * read first and inflated in one call; a damaged one's output before its damage is worked out again with them.
   */
  readonly inflatersAtOnce: ReadonlyMap<string, InflaterAtOnce>
  readonly parse: ParseFunction
  /** The `schema` option's `~standard` object, or null: then the body is handed on unchecked. */
  readonly schema: StandardSchemaV1.Props | null
  /** A streaming parser's stage (multipart), or null: the body is read whole, then parsed. */
  readonly stage: BodyStage | null
  /** How the body is read once the checks are passed: whole, then parsed (readWhole), or streamed to the stage (readStreamed). */
  readonly readCheckedBody: (read: BodyRead) => void
}

/** The lifetime of every read of a body read whole: nothing waits on user code, so nothing is told of a closed connection. */
const WHOLE_READ: ReadLifetime = Object.freeze({ onGone: null })

/**
 * One request's read, made when the middleware is called and handed from step to step: its settings, request,
 * response and continuation (called once), its source, and what the checks found (its lifetime, Content-Encoding
 * and charset, set once by readBody).
 */
export class BodyRead {
  private stream: Readable | null = null
  readonly source: RequestSource
  /** The read's lifetime: one that never waits on user code for a body read whole, else the stage's. */
  lifetime: ReadLifetime = WHOLE_READ
  /** The Content-Encoding, lower case (`identity` when none). */
  contentEncoding = 'identity'
  /** The charset the body is decoded with; null when it stays a Buffer. */
  charset: string | null = null

  constructor (
    readonly settings: ReadSettings,
    readonly req: BodyRequest,
    readonly res: ServerResponse,
    /** Settles the read; once the read is watched, called once, after what watches it is released (settleOnce). */
    public next: NextFunction
  ) {
    this.source = sourceOf(req)
  }

  /**
   * The stream the body is read from: the request itself, unless it is an event-only fake (node-mocks-http's), whose
   * stream is made once, when first needed.
   */
  body (): Readable {
    return (this.stream ??= this.source.bodyStream(this.req))
  }
}

/** Reads, verifies and parses one request's body, hands it on (`variant.deliverBody`), and calls `next` exactly once. */
export function readBody (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction): void {
  const { variant, debug } = settings
  const read = new BodyRead(settings, req, res, next)
  if (variant.isAlreadyRead(req)) {
    if (debug.enabled) debug('body already parsed')
    passBody(read, false)
    return
  }
  variant.prepareBody(req)
  const { source } = read
  if (!source.hasBody(req, settings.readHttp2WithoutLength)) {
    if (debug.enabled) debug('skip empty body')
    passBody(read, false)
    return
  }
  // Read once (cached per header text) for both the type match and the charset.
  const contentType = variant.readContentType(headerOf(req, 'content-type'))
  if (!settings.shouldParse(req, contentType)) {
    if (debug.enabled) debug('skip parsing')
    passBody(read, true)
    return
  }
  if (settings.acceptsCharset !== null) {
    const charset = read.charset = contentType.charset || settings.defaultCharset
    if (!settings.acceptsCharset(charset)) {
      refuse(read, errors.unsupportedCharset(charset))
      return
    }
  }
  variant.markRead(req)
  // From here the read has one owner: it ends once, also when the connection closes under it after a response was
  // sent first, and what watches it is released then.
  // Only a streaming stage waits on user code, and so sets `onGone`: a read whole shares one lifetime that never does.
  if (settings.stage !== null) read.lifetime = { onGone: null }
  const contentEncoding = read.contentEncoding = (headerOf(req, 'content-encoding') || 'identity').toLowerCase()
  read.next = settleOnce(next, source.watchRead(req, read.body(), read.lifetime), debug)

  const { charset } = read
  const refusal = refuseMalformedLength(source, req) ?? refuseBeforeReading(settings, settings.variant, contentEncoding, charset) ?? settings.stage?.check(req) ?? null
  if (refusal !== null) {
    refuse(read, refusal as HttpError)
    return
  }
  // A Request's body that another reader holds is theirs, as one already read; known once its reader is asked for.
  if (!source.claimBody(req)) {
    if (debug.enabled) debug('body already parsed')
    passBody(read, false)
    return
  }
  if (charset !== null && !knowsCharset(read, charset)) return
  settings.readCheckedBody(read)
}

/**
 * Whether the variant decodes the charset; if not, the read is failed (415, after raw-body's own checks), and so it is
 * when the charset's code table cannot be loaded (500, after the body is read off): false in both cases.
 */
function knowsCharset (read: BodyRead, charset: string): boolean {
  const { settings, req, contentEncoding } = read
  let known: boolean
  try {
    known = settings.variant.knowsCharset(charset)
  } catch (err) {
    process.nextTick(report, read, err as Error)
    return false
  }
  if (!known) {
    // body-parser learns this only when raw-body builds its decoder, so raw-body's own checks come first.
    const stateError = contentEncoding === 'identity' ? checkBeforeReading(req, read.body(), settings.limit) : null
    process.nextTick(fail, read, stateError ?? errors.unsupportedCharset(charset.toLowerCase()))
  }
  return known
}

/**
 * `next` as the read's one owner calls it: once (a second call, which would answer a request twice, is dropped),
 * after what watches the read is released. A reader's `next` takes the body too.
 */
function settleOnce (next: NextFunction, release: (() => void) | null, debug: Log): NextFunction {
  let settled = false
  return function settle (err?: unknown, body?: unknown): void {
    if (settled) {
      if (debug.enabled) debug('read settled twice: %o', err)
      return
    }
    settled = true
    if (release !== null) release()
    ;(next as (err: unknown, body: unknown) => void)(err, body)
  }
}

/** Answers with an error known before reading: the body is left untouched for `next`, then discarded within bounds. */
function refuse (read: BodyRead, err: HttpError): void {
  // compat(v1, v2): body-parser leaves the stream as it was when it reports these, so next() sees it so.
  read.next(err)
  // Security (issue 5): without this, Node reads the whole body off once the response is sent. Still in
  // time: the response's 'finish', where Node would start that, is emitted asynchronously.
  read.source.discardRest(read.req, read.body(), read.res, read.settings.discard)
}

/** Reports a failed read (raw-body's errors, zlib's, the stream's: described by errors.readFailed), the rest of the body discarded within bounds. */
export function fail (read: BodyRead, err: Error): void {
  report(read, errors.readFailed(err))
}

/**
 * Reports an error as it was made (a streaming stage's: multer's errors keep their class and properties), with
 * the rest of the body discarded within bounds.
 */
export function report (read: BodyRead, error: Error & { status?: number }): void {
  const { req, res, next, settings } = read
  const body = read.body()
  // What user code threw is reported as thrown: it need not be an object.
  const status = error !== null && typeof error === 'object' ? error.status : undefined
  if (status === 413 && !req.complete && http2StreamOf(req) === null) {
    // Security (issue 5): a body known to be too large (or, for multipart, one with too many or too large parts)
    // is answered at once, not after it was all read
    // (once every byte has arrived, reading them off is free and body-parser's order is kept). Over HTTP/2 the
    // answer comes after the read-off, as from body-parser: answered mid-upload, curl ends the stream short of its
    // Content-Length (PROTOCOL_ERROR) and Chromium's upload stalls; past the budget the stream alone is reset.
    read.source.discardRest(req, body, res, settings.discard)
    next(error)
    return
  }
  // compat(v1, v2): other failures are reported once the rest of the body is read off, as body-parser
  // does, but within discardRest's bounds.
  read.source.discardRest(req, body, res, settings.discard, () => { next(error) })
}

/** raw-body's checks before it reads: the declared length against `limit`, then the stream's state. */
export function checkBeforeReading (req: BodyRequest, body: Readable, limit: number): HttpError | null {
  const declared = parseLength(headerOf(req, 'content-length'))
  if (declared !== null && declared > limit) return errors.entityTooLarge(limit, 0, declared)
  if (body.readableEncoding !== null) return errors.streamEncodingSet()
  if (!body.readable) return errors.streamNotReadable()
  return null
}

/**
 * A Content-Length that is not digits: Node's HTTP parser refuses such a request before any middleware runs; a
 * Request comes from runtimes that may pass it on (Hono's bodyLimit skipped such a body), so it is refused here.
 */
function refuseMalformedLength (source: RequestSource, req: BodyRequest): HttpError | null {
  const length = source.malformedLength(req)
  return length === null ? null : errors.malformedContentLength(length)
}

/** Hands a value on as the body (`variant.deliverBody`), checked by the schema first when there is one. */
export function deliverBody (read: BodyRead, value: unknown): void {
  const { settings, req, next } = read
  if (settings.schema === null) settings.variant.deliverBody(req, next, value)
  else validateBody(settings.schema, value, next, (valid) => { settings.variant.deliverBody(req, next, valid) })
}

/**
 * Nothing to parse: `req.body` is left as it is, and checked as it is when there is a schema. `unread`: the
 * request has a body no parser read (another Content-Type).
 */
function passBody (read: BodyRead, unread: boolean): void {
  const { settings, req, next } = read
  if (settings.schema === null) {
    next()
    return
  }
  const body = settings.variant.currentBody(req)
  if (!unread) {
    validateBody(settings.schema, body, next, (value) => { settings.variant.deliverBody(req, next, value) })
    return
  }
  // An unread body refused by the schema is an error known before reading: answered, then read off within bounds.
  validateBody(settings.schema, body, function afterCheck (err?: unknown) {
    refuse(read, err as HttpError)
  }, function onPassed (value) { settings.variant.deliverBody(req, next, value) })
}
