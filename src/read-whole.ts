// The body read whole, then parsed (json, raw, text, urlencoded): raw-body with `limit` (one zlib call for a small
// compressed body, a stream for a larger one), then verify, decode and parse.
import type { Transform } from 'stream'
import type { HttpError } from 'http-errors'
import getRawBody from 'raw-body'
import * as errors from './errors'
import { inflateExactly, inflateUntilDamage, isEndedEarly, type InflaterAtOnce } from './inflate'
import { afterInflating, detachInflater, inflatedBeforeDamage, writeTo } from './inflate-stream'
import { deliverBody, fail, type BodyRead } from './read'
import { headerOf } from './sources/source'
import { LimitedInput } from './stage-input'
import { WireCounter, parseLength } from './wire'

/** Reads the checked body whole, inflated if need be, then parses it (`finish`). */
export function readWhole (read: BodyRead): void {
  const { settings, req, source, contentEncoding } = read
  if (contentEncoding !== 'identity') {
    const inflater = settings.inflatersAtOnce.get(contentEncoding)
    if (inflater !== undefined && isUntouched(read)) readThenInflate(read, inflater)
    else readInflated(read)
    return
  }
  const onBody = (err: getRawBody.RawBodyError | Error | null, bytes?: Buffer): void => {
    if (err) fail(read, err)
    else finish(read, bytes as Buffer)
  }
  // A Request is read with its own reader, with raw-body's limit and length rules (sources/web.ts).
  if (source.readWhole(req, settings.limit, onBody)) return
  const options = { length: headerOf(req, 'content-length'), limit: settings.limit, encoding: null } as getRawBody.Options
  getRawBody(read.body(), options, onBody)
}

/**
 * A small compressed body: raw-body reads the bytes on the wire (with `limit` and the Content-Length check, as
 * for an uncompressed body), then one zlib call inflates them, stopping past `limit`. For small bodies this
 * is several times cheaper than a stream, which pays several trips to zlib's thread pool.
 */
function readThenInflate (read: BodyRead, inflater: InflaterAtOnce): void {
  const { settings: { limit, debug }, req } = read
  const body = read.body()
  if (debug.enabled) debug('inflate %s body at once', read.contentEncoding)
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
      fail(read, damage ?? err)
      return
    }
    // compat(v1, v2): body-parser's decompressor ends after the request, which Node destroys once it ended
    // (right after this callback): next() sees it so.
    process.nextTick(inflateExactly, inflater, bytes, limit, function onInflated (error: Error | null, inflated?: Buffer) {
      if (error) fail(read, error)
      else finish(read, inflated as Buffer)
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
function isUntouched (read: BodyRead): boolean {
  const body = read.body()
  return body.readableEncoding === null && body.readable && body.readableFlowing !== false
}

/**
 * Inflates a compressed body with `limit` applied twice: raw-body counts the inflated bytes, a LimitedInput
 * the bytes received (a WireCounter checks them against the declared length). The body is handed on only once the request has ended within both.
 */
function readInflated (read: BodyRead): void {
  const { settings, req, contentEncoding } = read
  const { limit, debug } = settings
  const body = read.body()
  const declared = parseLength(headerOf(req, 'content-length'))
  if (declared !== null && declared > limit) {
    // Security (issue 5): the wire size counts too, so an announced oversize body is refused before inflating.
    process.nextTick(fail, read, errors.entityTooLarge(limit, 0, declared))
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
    if (err) fail(read, err)
    else finish(read, inflated as Buffer)
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

/** A 413 when the bytes before a damage inflate past `limit` (the body's first error), else null. */
function inflatedPastLimitBefore (salvager: InflaterAtOnce | undefined, wirePieces: readonly Buffer[], limit: number): HttpError | null {
  const inflated = inflatedBeforeDamage(salvager, wirePieces, limit)
  return inflated !== null && inflated.length > limit ? errors.entityTooLarge(limit, inflated.length) : null
}

/** The body was read in full: keep it (`rawBody`), verify it, decode it with the charset (a BOM is stripped) and parse it. */
function finish (read: BodyRead, body: Buffer): void {
  const { settings, req, res, next, charset } = read
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
  if (charset !== null) {
    try {
      decoded = settings.variant.decode(body, charset)
    } catch (err) {
      // iconv-lite replaces what it cannot decode: it throws only where a code table fails to load, the server's fault.
      next(errors.charsetLoadFailed(charset, err))
      return
    }
  }
  let parsed: unknown
  try {
    parsed = settings.parse(decoded as string & Buffer, charset)
  } catch (err) {
    next(errors.parseFailed(err, decoded))
    return
  }
  deliverBody(read, parsed)
}
