// The one pipeline every parser runs: skip checks, type match, charset, inflate, read with limit, verify, decode, parse.
import type { ServerResponse } from 'http'
import type { Readable, Transform } from 'stream'
import type zlib from 'zlib'
import type { HttpError } from 'http-errors'
import getRawBody from 'raw-body'
import type { Log } from './dependencies'
import * as errors from './errors'
import { inflateExactly, inflateUntilDamage, isEndedEarly, type InflaterAtOnce } from './inflate'
import { refuseBeforeReading, validateBody } from './body-rules'
import type { DiscardBudget, StandardSchemaV1, VerifyFunction } from './options'
import { http2StreamOf } from './protocol'
import { headerOf, sourceOf, type RequestSource } from './sources/source'
import type { ReadLifetime } from './sources/request-source'
import type { TypeMatcher } from './type-match'
import type { BodyRequest, Variant } from './variants'
import { LimitedInput, type StageInput } from './stage-input'
import { WireCounter, parseLength } from './wire'

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
  /** Whether this (uncompressed) body is small enough to be read whole first, with raw-body, and then given to `start`. */
  readsWhole (req: BodyRequest, limit: number): boolean
  /**
   * Reads `input` (the body stream, inflated if need be and cut at `limit`, or the whole body); calls `done` once,
   * never from within `start`.
   */
  start (input: StageInput | Buffer, req: BodyRequest, res: ServerResponse | undefined,
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
}

/** The lifetime of every read of a body read whole: nothing waits on user code, so nothing is told of a closed connection. */
const WHOLE_READ: ReadLifetime = Object.freeze({ onGone: null })

/** Reads, verifies and parses one request's body, hands it on (`variant.deliverBody`), and calls `next` exactly once. */
export function readBody (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction): void {
  const { variant, debug } = settings
  if (variant.isAlreadyRead(req)) {
    if (debug.enabled) debug('body already parsed')
    passBody(settings, req, res, next, false)
    return
  }
  variant.prepareBody(req)
  const source = sourceOf(req)
  if (!source.hasBody(req, settings.readHttp2WithoutLength)) {
    if (debug.enabled) debug('skip empty body')
    passBody(settings, req, res, next, false)
    return
  }
  // Read once (cached per header text) for both the type match and the charset.
  const contentType = variant.readContentType(headerOf(req, 'content-type'))
  if (!settings.shouldParse(req, contentType)) {
    if (debug.enabled) debug('skip parsing')
    passBody(settings, req, res, next, true)
    return
  }
  // The stream the body is read from: the request itself, unless it is an event-only fake (node-mocks-http's). Made
  // when first needed: a Request read whole never needs its stream (making one is a tenth of a small body's time).
  let stream: Readable | null = null
  const body = (): Readable => (stream ??= source.bodyStream(req))

  let charset: string | null = null
  if (settings.acceptsCharset !== null) {
    charset = contentType.charset || settings.defaultCharset
    if (!settings.acceptsCharset(charset)) {
      refuse(settings.discard, req, body(), res, next, errors.unsupportedCharset(charset))
      return
    }
  }
  variant.markRead(req)
  // From here the read has one owner: it ends once, also when the connection closes under it after a response was
  // sent first, and what watches it is released then.
  // Only a streaming stage waits on user code, and so sets `onGone`: a read whole shares one lifetime that never does.
  const lifetime: ReadLifetime = settings.stage === null ? WHOLE_READ : { onGone: null }
  next = settleOnce(next, source.watchRead(req, body(), lifetime), debug)

  const contentEncoding = (headerOf(req, 'content-encoding') || 'identity').toLowerCase()
  const refusal = refuseMalformedLength(source, req) ?? refuseBeforeReading(settings, settings.variant, contentEncoding, charset) ?? settings.stage?.check(req) ?? null
  if (refusal !== null) {
    refuse(settings.discard, req, body(), res, next, refusal as HttpError)
    return
  }
  // A Request's body that another reader holds is theirs, as one already read; known once its reader is asked for.
  if (!source.claimBody(req)) {
    if (debug.enabled) debug('body already parsed')
    passBody(settings, req, res, next, false)
    return
  }

  if (charset !== null && !variant.knowsCharset(charset)) {
    // body-parser learns this only when raw-body builds its decoder, so raw-body's own checks come first.
    const stateError = contentEncoding === 'identity' ? checkBeforeReading(req, body(), settings.limit) : null
    process.nextTick(fail, settings.discard, req, body(), res, next, stateError ?? errors.unsupportedCharset(charset.toLowerCase()))
    return
  }
  if (settings.stage !== null) {
    readStreaming(settings, settings.stage, source, lifetime, req, body, res, next, contentEncoding)
    return
  }
  if (contentEncoding !== 'identity') {
    const inflater = settings.inflatersAtOnce.get(contentEncoding)
    if (inflater !== undefined && isUntouched(body())) readThenInflate(settings, req, body(), res, next, contentEncoding, inflater, charset)
    else readInflated(settings, req, body(), res, next, contentEncoding, charset)
    return
  }
  const onBody = (err: getRawBody.RawBodyError | Error | null, bytes?: Buffer): void => {
    if (err) {
      fail(settings.discard, req, body(), res, next, err)
      return
    }
    finish(settings, req, res, next, bytes as Buffer, charset)
  }
  // A Request is read with its own reader, with raw-body's limit and length rules (sources/web.ts).
  if (source.readWhole(req, settings.limit, onBody)) return
  const options = { length: headerOf(req, 'content-length'), limit: settings.limit, encoding: null } as getRawBody.Options
  getRawBody(body(), options, onBody)
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

/**
 * A small compressed body: raw-body reads the bytes on the wire (with `limit` and the Content-Length check, as
 * for an uncompressed body), then one zlib call inflates them, stopping past `limit`. For small bodies this
 * is several times cheaper than a stream, which pays several trips to zlib's thread pool.
 */
function readThenInflate (settings: ReadSettings, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction,
  contentEncoding: string, inflater: InflaterAtOnce, charset: string | null): void {
  const { limit, debug } = settings
  if (debug.enabled) debug('inflate %s body at once', contentEncoding)
  const options = { length: headerOf(req, 'content-length'), limit, encoding: null } as getRawBody.Options
  // The pieces as they arrived, kept until the wire passes `limit` (a damage before it is the answer then).
  const pieces: Buffer[] = []
  let received = 0
  const keepPiece = (chunk: Buffer): void => {
    if (received <= limit) pieces.push(chunk)
    received += chunk.length
  }
  body.on('data', keepPiece)
  getRawBody(body, options, function onWire (err: getRawBody.RawBodyError | null, bytes: Buffer) {
    body.removeListener('data', keepPiece)
    if (err) {
      // A 413 for the bytes read (not for a declared length over `limit`, refused before reading): a damage before them comes first.
      const readPastLimit = err.type === 'entity.too.large' && (err as { received?: unknown }).received !== undefined
      const damage = readPastLimit ? damageBeforeLimit(inflater, Buffer.concat(pieces).subarray(0, limit), limit) : null
      fail(settings.discard, req, body, res, next, damage ?? err)
      return
    }
    // compat(v1, v2): body-parser's decompressor ends after the request, which Node destroys once it ended
    // (right after this callback): next() sees it so.
    process.nextTick(inflateExactly, inflater, bytes, limit, function onInflated (error: Error | null, inflated?: Buffer) {
      if (error) fail(settings.discard, req, body, res, next, error)
      else finish(settings, req, res, next, inflated as Buffer, charset)
    })
  })
}

/**
 * zlib's error when the first `limit` bytes of a body that passed `limit` on the wire hold a damage and inflate to no
 * more than `limit` before it: the body's first error in byte order, before the wire's 413. Else null.
 */
function damageBeforeLimit (inflater: InflaterAtOnce, prefix: Buffer, limit: number): Error | null {
  // Only where the loop inflates it within bounds (not a br body with a large first meta-block): else the 413 stands.
  if (!inflater.onLoop(prefix, limit)) return null
  const { inflated, error } = inflateUntilDamage(inflater, prefix, limit + 1)
  // A prefix ends inside the compressed stream: "unexpected end of file" is where it was cut, not a damage.
  return error !== null && !isEndedEarly(error) && inflated.length <= limit ? error : null
}

/**
 * Whether raw-body can read the request as it stands. A request with an encoding set, already read or
 * paused keeps the streaming path, which gives body-parser's answers for these developer errors.
 */
function isUntouched (body: Readable): boolean {
  return body.readableEncoding === null && body.readable && body.readableFlowing !== false
}

/**
 * Inflates a compressed body with `limit` applied twice: raw-body counts the inflated bytes, a LimitedInput
 * the bytes received (a WireCounter checks them against the declared length). The body is handed on only once the request has ended within both.
 */
function readInflated (settings: ReadSettings, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction,
  contentEncoding: string, charset: string | null): void {
  const { limit, debug } = settings
  const declared = parseLength(headerOf(req, 'content-length'))
  if (declared !== null && declared > limit) {
    // Security (issue 5): the wire size counts too, so an announced oversize body is refused before inflating.
    process.nextTick(fail, settings.discard, req, body, res, next, errors.entityTooLarge(limit, 0, declared))
    return
  }
  if (debug.enabled) debug('inflate %s body', contentEncoding)
  const inflater = (settings.variant.decompressors.get(contentEncoding) as () => Transform)()
  let settled = false
  let inflated: Buffer | null = null
  const settle = (err: HttpError | getRawBody.RawBodyError | null): void => {
    if (settled) return
    settled = true
    wire.stop()
    wireInput.stop()
    detachInflater(body, inflater)
    if (err) fail(settings.discard, req, body, res, next, err)
    else finish(settings, req, res, next, inflated as Buffer, charset)
  }
  const wire = new WireCounter(body, declared, settle, function onWireEnd () {
    if (inflated !== null) settle(null)
  })
  // Security (issue 5, bp #454): a bomb or a long run of empty blocks is refused on its wire size alone. Past `limit`
  // on the wire the bytes before it were all written to zlib, and a damage in them comes first.
  const wireInput = new LimitedInput(body, limit, function onWirePastLimit (received) {
    const err = errors.entityTooLarge(limit, received)
    // After the compressed stream's end (zlib is done), or once zlib has inflated what it was given and not failed on it.
    if (inflated !== null) settle(err)
    else afterInflating(inflater, () => { if (!inflater.destroyed) settle(err) })
  })
  // Within the one-shot limit, what zlib drops with its error can be inflated again (see inflatedBeforeDamage).
  const salvager = settings.inflatersAtOnce.get(contentEncoding)
  const wirePieces = writeTo(inflater, wireInput, salvager !== undefined)
  getRawBody(inflater, { limit, encoding: null } as getRawBody.Options, function onInflated (err: getRawBody.RawBodyError | null, bytes: Buffer) {
    if (err) {
      // zlib's error (it has no status): Node's zlib drops the output of the write it fails in, so whether the bytes
      // before the damage inflate past `limit` (413, the first error in byte order) is worked out again, in one call.
      settle(err.status === undefined ? inflatedPastLimitBefore(salvager, wirePieces, limit) ?? err : err)
      return
    }
    inflated = bytes
    if (wire.ended) {
      settle(null)
      return
    }
    // deflate, br and zstd streams end at their last block: bytes after it still count on the wire
    // (body-parser reads them off unbounded), so the verdict waits for the end of the request.
    detachInflater(body, inflater)
    body.resume()
  })
}

/**
 * Writes a body cut at `limit` to zlib as `pipe` would (waiting while zlib's buffer is full), and ends zlib once it
 * has inflated every piece (see afterInflating). Returns the pieces written when `keepPieces` (no more than `limit`
 * bytes), to work out again what the bytes before a damage inflate to; else an empty list.
 */
function writeTo (inflater: Transform, wireInput: LimitedInput, keepPieces: boolean): Buffer[] {
  const wirePieces: Buffer[] = []
  wireInput.on('data', function toInflater (chunk: Buffer) {
    if (inflater.destroyed) return
    if (keepPieces) wirePieces.push(chunk)
    if (!inflater.write(chunk)) wireInput.pause()
  })
  inflater.on('drain', () => { wireInput.resume() })
  const endInflater = (): void => { afterInflating(inflater, () => { if (!inflater.destroyed) inflater.end() }) }
  // A request whose stream was read before the parser ran ends zlib with nothing written, as `pipe` does.
  if (wireInput.readableEnded) process.nextTick(endInflater)
  else wireInput.once('end', endInflater)
  return wirePieces
}

/**
 * What the wire bytes before a damage inflate to (up to `limit` + 1 bytes), when their inflation is bounded on the
 * loop, as `inflateExactly`'s is: a one-shot inflater (`limit` within AT_ONCE_MAX_LIMIT, so the wire kept and each
 * call's output are no more than that) and a body it inflates on the loop (`onLoop`: not a large br body). Else null,
 * and zlib's error is the answer without the output it dropped (body-parser's answer).
 */
function inflatedBeforeDamage (salvager: InflaterAtOnce | undefined, wirePieces: readonly Buffer[], limit: number): Buffer | null {
  if (salvager === undefined) return null
  const wire = Buffer.concat(wirePieces)
  return salvager.onLoop(wire, limit) ? inflateUntilDamage(salvager, wire, limit + 1).inflated : null
}

/** A 413 when the bytes before a damage inflate past `limit` (the body's first error), else null. */
function inflatedPastLimitBefore (salvager: InflaterAtOnce | undefined, wirePieces: readonly Buffer[], limit: number): HttpError | null {
  const inflated = inflatedBeforeDamage(salvager, wirePieces, limit)
  return inflated !== null && inflated.length > limit ? errors.entityTooLarge(limit, inflated.length) : null
}

/**
 * A streaming stage reads the body: the request (inflated if need be) is given to it cut at `limit`, on the wire and
 * after inflation, and the stage's result is handed on once both the stage and the request have ended. A body's
 * answer is its first error in byte order (issue 45): past a limit the stage has been given the bytes up to it, and
 * the 413 is the answer once it has judged them, unless it found an error in them. Any failure stops the stage and
 * removes what it stored before it is reported.
 */
function readStreaming (settings: ReadSettings, stage: BodyStage, source: RequestSource, lifetime: ReadLifetime, req: BodyRequest,
  bodyStream: () => Readable, res: ServerResponse, next: NextFunction, contentEncoding: string): void {
  const { limit, debug } = settings
  const whole = contentEncoding === 'identity' && stage.readsWhole(req, limit)
  // A Request is read whole with its own reader, under raw-body's rules (sources/web.ts), without a Node stream.
  if (whole && source.readWhole(req, limit, (err, bytes) => { startWhole(settings, stage, lifetime, req, bodyStream, res, next, err, bytes) })) return
  const body = bodyStream()
  const stateError = checkBeforeReading(req, body, limit)
  if (stateError !== null) {
    process.nextTick(fail, settings.discard, req, body, res, next, stateError)
    return
  }
  if (whole && isUntouched(body)) {
    readWhole(settings, stage, lifetime, req, body, res, next)
    return
  }
  if (debug.enabled) debug('read body as a stream')
  const declared = parseLength(headerOf(req, 'content-length'))
  const inflater = contentEncoding === 'identity' ? null : (settings.variant.decompressors.get(contentEncoding) as () => Transform)()
  let settled = false
  let result: StageResult | null = null
  /** `err`: an error as it is to be reported (reading errors are described by errors.readFailed first). */
  const settle = (err: Error | null): void => {
    if (settled) return
    settled = true
    lifetime.onGone = null
    wire.stop()
    wireInput.stop()
    if (inflater !== null) {
      (inflated as LimitedInput).stop()
      detachInflater(body, inflater)
    }
    if (err === null) {
      deliverStaged(settings, req, next, result as StageResult)
      return
    }
    // A stage that had already failed (multer: a limit waiting for a write) reports its own error, as multer does.
    reading.abort((own) => { report(settings.discard, req, body, res, next, own ?? err) })
  }
  const settleRead = (err: HttpError | getRawBody.RawBodyError | Error): void => { settle(errors.readFailed(err)) }
  /** Past a limit (or at a damage zlib found): the stage was given the bytes before it; its judgement of them comes first. */
  const refuseOnceJudged = (err: Error): void => { reading.judged(() => { settleRead(err) }) }
  /**
   * A compressed body whose length is wrong (known at its end): bytes that came before may still be in zlib. The
   * stage reads them first, as it has read every byte of an uncompressed body by then; the length's verdict comes
   * after, and before zlib's own complaint about a body cut short.
   */
  let lengthVerdict: Error | null = null
  const onWireError = (err: HttpError | getRawBody.RawBodyError | Error): void => {
    if (inflater === null || (err as { type?: unknown }).type !== 'request.size.invalid' || inflater.writableFinished) {
      settleRead(err)
      return
    }
    lengthVerdict = err
    const giveVerdict = (): void => { setImmediate(settleRead, err) }
    inflater.once('end', giveVerdict)
    inflater.once('close', giveVerdict)
  }
  // The count for a length that does not match, an abort or a read error; `limit` is the stage's input's to apply.
  const wire = new WireCounter(body, declared, onWireError, function onWireEnd () {
    if (result !== null) settle(null)
  })
  // Past `limit` on the wire (for a compressed body too: issue 5, bp #454): the 413, once the stage has judged what
  // the bytes before it are (inflated).
  const wireInput = new LimitedInput(body, limit, function onWirePastLimit (received) {
    const err = errors.entityTooLarge(limit, received)
    if (inflater === null) refuseOnceJudged(err)
    // zlib's output of the bytes before the limit all reaches the stage first (unless zlib fails on them: see below).
    else afterInflating(inflater, () => { if (!inflater.destroyed) refuseOnceJudged(err) })
  })
  let inflated: LimitedInput | null = null
  if (inflater !== null) {
    // A damage zlib finds in the wire bytes before the limit is an error before the wire's.
    inflated = inflateForStage(settings, contentEncoding, inflater, wireInput, () => lengthVerdict !== null, refuseOnceJudged, refuseOnceJudged)
  }
  const reading = stage.start(inflated ?? wireInput, req, res, function onStaged (err, staged) {
    if (err !== null) {
      settle(err)
      return
    }
    result = staged as StageResult
    // A length verdict waits for zlib's last bytes, never for a success.
    if (wire.ended && lengthVerdict === null) settle(null)
  })
  // The connection closed while the stage still waits (on a fileFilter or an engine that may never call back).
  lifetime.onGone = () => { settle(errors.requestAborted(wire.received, declared)) }
}

/**
 * Inflates a body cut at `limit` on the wire for a stage: returns zlib's output, cut at `limit` too (`pastLimit`
 * is given its 413). zlib's error is `damaged`'s, once what the bytes before the damage inflate to is given to the
 * stage: Node's zlib drops the output of the write it fails in, so that output is worked out again from the wire
 * bytes, kept for this where that work is bounded (`inflatedBeforeDamage`: a `limit` of at most 256 KiB). An error after the
 * inflated limit was passed, or zlib's complaint about a body whose length was wrong (`cutShort`), is not the answer.
 */
function inflateForStage (settings: ReadSettings, contentEncoding: string, inflater: Transform, wireInput: LimitedInput,
  cutShort: () => boolean, pastLimit: (err: HttpError) => void, damaged: (err: Error) => void): LimitedInput {
  const { limit } = settings
  const inflated = new LimitedInput(inflater, limit, (received) => { pastLimit(errors.entityTooLarge(limit, received)) })
  const salvager = settings.inflatersAtOnce.get(contentEncoding)
  const wirePieces = writeTo(inflater, wireInput, salvager !== undefined)
  inflater.on('error', function onInflateError (err: Error) {
    if (inflated.cut || (cutShort() && isEndedEarly(err))) return
    const before = inflatedBeforeDamage(salvager, wirePieces, limit)
    if (before !== null && before.length > inflated.received) inflated.write(before.subarray(inflated.received))
    if (inflated.cut) return
    damaged(err)
  })
  return inflated
}

/** A small body: read whole by raw-body (limit, length, aborts, as for the other parsers), then given to the stage at once. */
function readWhole (settings: ReadSettings, stage: BodyStage, lifetime: ReadLifetime, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction): void {
  if (settings.debug.enabled) settings.debug('read small body whole')
  const options = { length: headerOf(req, 'content-length'), limit: settings.limit, encoding: null } as getRawBody.Options
  getRawBody(body, options, function onBody (err: getRawBody.RawBodyError | null, bytes: Buffer) {
    startWhole(settings, stage, lifetime, req, () => body, res, next, err, bytes)
  })
}

/** Gives a body read whole to the stage, or reports why it could not be read. */
function startWhole (settings: ReadSettings, stage: BodyStage, lifetime: ReadLifetime, req: BodyRequest, body: () => Readable, res: ServerResponse, next: NextFunction,
  err: getRawBody.RawBodyError | Error | null, bytes?: Buffer): void {
  if (err) {
    fail(settings.discard, req, body(), res, next, err)
    return
  }
  let settled = false
  const { abort } = stage.start(bytes as Buffer, req, res, function onStaged (stageErr, staged) {
    if (settled) return
    settled = true
    lifetime.onGone = null
    if (stageErr === null) {
      deliverStaged(settings, req, next, staged as StageResult)
      return
    }
    abort(() => { report(settings.discard, req, body(), res, next, stageErr) })
  })
  // The connection closed while the stage still waits (on a fileFilter or an engine that may never call back): its
  // abort does not wait for pending files; the stage's own error, if it had failed first, is the answer.
  lifetime.onGone = () => {
    if (settled) return
    settled = true
    const aborted = errors.requestAborted((bytes as Buffer).length, parseLength(headerOf(req, 'content-length')))
    abort((own) => { report(settings.discard, req, body(), res, next, own ?? aborted) })
  }
}

/** The stage's fields, checked by the schema, go to `req.body` and its files to `req.files` (`variant.deliverForm`). */
function deliverStaged (settings: ReadSettings, req: BodyRequest, next: NextFunction, result: StageResult): void {
  const deliver = (fields: unknown): void => { settings.variant.deliverForm(req, next, fields, result.files) }
  if (settings.schema === null) {
    deliver(result.fields)
    return
  }
  validateBody(settings.schema, result.fields, function onRefused (err) {
    result.release(() => { next(err) })
  }, deliver)
}

/** Answers with an error known before reading: the body is left untouched for `next`, then discarded within bounds. */
function refuse (budget: DiscardBudget, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction, err: HttpError): void {
  // compat(v1, v2): body-parser leaves the stream as it was when it reports these, so next() sees it so.
  next(err)
  // Security (issue 5): without this, Node reads the whole body off once the response is sent. Still in
  // time: the response's 'finish', where Node would start that, is emitted asynchronously.
  sourceOf(req).discardRest(req, body, res, budget)
}

/** Reports a failed read, with the rest of the body discarded within bounds. */
function fail (budget: DiscardBudget, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction, err: HttpError | getRawBody.RawBodyError | Error): void {
  report(budget, req, body, res, next, errors.readFailed(err))
}

/**
 * Reports an error as it was made (a streaming stage's: multer's errors keep their class and properties), with
 * the rest of the body discarded within bounds.
 */
function report (budget: DiscardBudget, req: BodyRequest, body: Readable, res: ServerResponse, next: NextFunction, error: Error & { status?: number }): void {
  // What user code threw is reported as thrown: it need not be an object.
  const status = error !== null && typeof error === 'object' ? error.status : undefined
  if (status === 413 && !req.complete && http2StreamOf(req) === null) {
    // Security (issue 5): a body known to be too large (or, for multipart, one with too many or too large parts)
    // is answered at once, not after it was all read
    // (once every byte has arrived, reading them off is free and body-parser's order is kept). Over HTTP/2 the
    // answer comes after the read-off, as from body-parser: answered mid-upload, curl ends the stream short of its
    // Content-Length (PROTOCOL_ERROR) and Chromium's upload stalls; past the budget the stream alone is reset.
    sourceOf(req).discardRest(req, body, res, budget)
    next(error)
    return
  }
  // compat(v1, v2): other failures are reported once the rest of the body is read off, as body-parser
  // does, but within discardRest's bounds.
  sourceOf(req).discardRest(req, body, res, budget, () => { next(error) })
}

/** raw-body's checks before it reads: the declared length against `limit`, then the stream's state. */
function checkBeforeReading (req: BodyRequest, body: Readable, limit: number): HttpError | null {
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

/** The body was read in full: keep it (`rawBody`), verify it, decode it with the charset (a BOM is stripped) and parse it. */
function finish (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction, body: Buffer, charset: string | null): void {
  // The Buffer verify gets, not a copy; kept even when verify or parsing fails (a webhook logs what it refused).
  if (settings.rawBody) settings.variant.keepRawBody(req, body)
  if (settings.verify) {
    try {
      settings.verify(req, res, body, charset)
    } catch (err) {
      next(errors.verifyFailed(err, body))
      return
    }
  }
  let decoded: string | Buffer = body
  let parsed: unknown
  try {
    if (charset !== null) decoded = settings.variant.decode(body, charset)
    parsed = settings.parse(decoded as string & Buffer, charset)
  } catch (err) {
    next(errors.parseFailed(err, decoded))
    return
  }
  if (settings.schema === null) settings.variant.deliverBody(req, next, parsed)
  else validateBody(settings.schema, parsed, next, (value) => { settings.variant.deliverBody(req, next, value) })
}

/**
 * Nothing to parse: `req.body` is left as it is, and checked as it is when there is a schema. `unread`: the
 * request has a body no parser read (another Content-Type).
 */
function passBody (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction, unread: boolean): void {
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
    refuse(settings.discard, req, sourceOf(req).bodyStream(req), res, next, err as HttpError)
  }, function onPassed (value) { settings.variant.deliverBody(req, next, value) })
}

/**
 * Calls `then` once zlib has inflated every piece written to it. When `end()` comes before zlib got to the last
 * piece, zlib inflates that piece with its finish flag, and drops what it inflated to if the body was cut short:
 * what a stage reads would depend on how fast zlib was. A flush written after the pieces is answered after them.
 */
function afterInflating (inflater: Transform, then: () => void): void {
  const flush = (inflater as Partial<Pick<zlib.Zlib, 'flush'>>).flush
  if (typeof flush !== 'function' || inflater.destroyed || inflater.writableEnded) {
    then()
    return
  }
  flush.call(inflater, () => { then() })
}

/** Stops and frees a decompressor at once when reading ended, so late zlib errors cannot go unhandled. */
function detachInflater (body: Readable, inflater: Transform): void {
  if (inflater.destroyed) return
  body.unpipe(inflater)
  inflater.on('error', ignore)
  inflater.destroy()
}

function ignore (): void {}
