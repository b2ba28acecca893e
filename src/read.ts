// The one pipeline every parser runs: skip checks, type match, charset, inflate, read with limit, verify, decode, parse.
import type { ServerResponse } from 'node:http'
import type { Readable, Transform } from 'node:stream'
import type { Debugger } from 'debug'
import type { HttpError } from 'http-errors'
import iconv from 'iconv-lite'
import getRawBody from 'raw-body'
import typeis from 'type-is'
import * as errors from './errors'
import type { VerifyFunction } from './options'
import type { TypeMatcher } from './type-match'
import type { BodyRequest, Variant } from './variants'

/** Express's continuation: called once, with an error or without. */
export type NextFunction = (err?: unknown) => void

/** Turns the decoded body (a string, or a Buffer when there is no charset) into `req.body`. */
export type ParseFunction = (body: string & Buffer, charset: string | null) => unknown

/** Everything a middleware needs per request, fixed when the middleware is created. */
export interface ReadSettings {
  readonly variant: Variant
  readonly debug: Debugger
  readonly shouldParse: TypeMatcher
  /** Which charsets the parser accepts; null when the body stays a Buffer (raw). */
  readonly acceptsCharset: ((charset: string) => boolean) | null
  readonly defaultCharset: string
  readonly inflate: boolean
  readonly limit: number
  readonly verify: VerifyFunction | false
  readonly parse: ParseFunction
}

/** Reads, verifies and parses one request's body into `req.body`, then calls `next` exactly once. */
export function readBody (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction): void {
  const { variant, debug } = settings
  if (variant.isAlreadyRead(req)) {
    if (debug.enabled) debug('body already parsed')
    next()
    return
  }
  variant.prepareBody(req)
  if (!typeis.hasBody(req)) {
    if (debug.enabled) debug('skip empty body')
    next()
    return
  }
  if (!settings.shouldParse(req)) {
    if (debug.enabled) debug('skip parsing')
    next()
    return
  }

  let charset: string | null = null
  if (settings.acceptsCharset !== null) {
    charset = variant.readContentType(req.headers['content-type']).charset || settings.defaultCharset
    if (!settings.acceptsCharset(charset)) {
      next(errors.unsupportedCharset(charset))
      return
    }
  }
  variant.markRead(req)

  const contentEncoding = (req.headers['content-encoding'] || 'identity').toLowerCase()
  const refusal = refuseBeforeReading(settings, contentEncoding, charset)
  if (refusal !== null) {
    next(refusal)
    return
  }

  let stream: Readable = req
  let length: string | undefined
  if (contentEncoding === 'identity') {
    length = req.headers['content-length']
  } else {
    if (debug.enabled) debug('inflate %s body', contentEncoding)
    const inflater = (variant.decompressors.get(contentEncoding) as () => Transform)()
    req.pipe(inflater)
    stream = inflater
  }

  // An unknown charset is handed to raw-body, whose decoder lookup then fails after its own checks
  // (declared length, stream state), which is the order body-parser reports them in.
  const encoding = charset !== null && !isKnownCharset(charset) ? charset : null
  getRawBody(stream, { length, limit: settings.limit, encoding } as getRawBody.Options, function onBody (err: getRawBody.RawBodyError | null, body: Buffer) {
    if (stream !== req) {
      detachInflater(req, stream)
    }
    if (err) {
      discardRest(req)
      next(err.type === 'encoding.unsupported'
        ? errors.unsupportedCharset((charset as string).toLowerCase())
        : errors.readFailed(err))
      return
    }
    if (stream !== req) {
      // Anything after the compressed member is read off so the request can finish.
      req.resume()
    }
    finish(settings, req, res, next, body, charset)
  })
}

/** Errors known from the headers alone, in body-parser's order for this variant. */
function refuseBeforeReading (settings: ReadSettings, contentEncoding: string, charset: string | null): HttpError | null {
  let encodingError: HttpError | null = null
  if (contentEncoding !== 'identity') {
    if (!settings.inflate) encodingError = errors.inflateDisabled(contentEncoding)
    else if (!settings.variant.decompressors.has(contentEncoding)) encodingError = errors.unsupportedContentEncoding(contentEncoding)
  }
  // With `verify`, body-parser checks the charset up front (the raw Buffer must be decodable later).
  const charsetError = settings.verify && charset !== null && !isKnownCharset(charset)
    ? errors.unsupportedCharset(charset.toLowerCase())
    : null
  return settings.variant.charsetErrorFirst
    ? charsetError ?? encodingError
    : encodingError ?? charsetError
}

/** After verify: decode the Buffer with the charset (a BOM is stripped) and parse it. */
function finish (settings: ReadSettings, req: BodyRequest, res: ServerResponse, next: NextFunction, body: Buffer, charset: string | null): void {
  if (settings.verify) {
    try {
      settings.verify(req, res, body, charset)
    } catch (err) {
      next(errors.verifyFailed(err, body))
      return
    }
  }
  let decoded: string | Buffer = body
  try {
    if (charset !== null) decoded = decode(body, charset)
    req.body = settings.parse(decoded as string & Buffer, charset)
  } catch (err) {
    next(errors.parseFailed(err, decoded))
    return
  }
  next()
}

/** iconv-lite's decoding; utf-8 (nearly every request) takes Node's native decoder, which agrees with it. */
function decode (body: Buffer, charset: string): string {
  if (charset === 'utf-8' || charset === 'utf8') {
    const text = body.toString('utf8')
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
  return iconv.decode(body, charset)
}

const knownCharsets = new Map<string, boolean>([['utf-8', true]])

/** Whether iconv-lite can decode a charset; answers are cached (bounded: charsets come from requests). */
function isKnownCharset (charset: string): boolean {
  let known = knownCharsets.get(charset)
  if (known === undefined) {
    known = iconv.encodingExists(charset)
    if (knownCharsets.size > 256) knownCharsets.clear()
    knownCharsets.set(charset, known)
  }
  return known
}

/** Stops and frees a decompressor once reading ended, so late zlib errors cannot go unhandled. */
function detachInflater (req: BodyRequest, stream: Readable): void {
  // unpipe() accepts any Writable; the inflater is a Transform.
  req.unpipe(stream as Transform)
  stream.on('error', ignore)
  stream.destroy()
}

/** Lets the rest of an abandoned request be read off so the response can be sent. */
function discardRest (req: BodyRequest): void {
  req.resume()
}

function ignore (): void {}
