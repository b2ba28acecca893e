// The http errors bodykit reports: one small factory per error `type`, with body-parser's messages.
import createError from 'http-errors'

/** Every `type` string bodykit's errors carry (raw-body's and zlib's errors pass through with their own). */
export type BodyErrorType =
  | 'charset.unsupported'
  | 'encoding.unsupported'
  | 'entity.parse.failed'
  | 'entity.too.large'
  | 'entity.verify.failed'
  | 'parameters.too.many'
  | 'querystring.parse.rangeError'
  | 'request.aborted'
  | 'request.size.invalid'
  | 'stream.encoding.set'
  | 'stream.not.readable'

/** An error thrown by user code (`verify`) or a parser; anything may be thrown, so nothing is assumed. */
type Thrown = unknown

function typeOf (thrown: Thrown): unknown {
  return thrown !== null && typeof thrown === 'object' ? (thrown as { type?: unknown }).type : undefined
}

/** 415 when the Content-Type's charset is refused by the parser or unknown to iconv-lite. */
export function unsupportedCharset (charset: string): createError.HttpError {
  return createError(415, 'unsupported charset "' + charset.toUpperCase() + '"', {
    charset,
    type: 'charset.unsupported'
  })
}

/** 415 when `inflate` is false and the body has a Content-Encoding other than identity. */
export function inflateDisabled (encoding: string): createError.HttpError {
  return createError(415, 'content encoding unsupported', {
    encoding,
    type: 'encoding.unsupported'
  })
}

/** 415 when the Content-Encoding is not one this variant can inflate. */
export function unsupportedContentEncoding (encoding: string): createError.HttpError {
  return createError(415, 'unsupported content encoding "' + encoding + '"', {
    encoding,
    type: 'encoding.unsupported'
  })
}

/** 413 when urlencoded data holds more parameters than `parameterLimit`. */
export function tooManyParameters (): createError.HttpError {
  return createError(413, 'too many parameters', { type: 'parameters.too.many' })
}

/** 400 when extended urlencoded data nests deeper than `depth` (qs throws a RangeError). */
export function depthExceeded (): createError.HttpError {
  return createError(400, 'The input exceeded the depth', { type: 'querystring.parse.rangeError' })
}

/** 403 when `verify` throws; a status or type on the thrown error wins. */
export function verifyFailed (thrown: Thrown, body: Buffer): createError.HttpError {
  return createError(403, thrown as Error, { body, type: typeOf(thrown) || 'entity.verify.failed' })
}

/** 400 when the body cannot be decoded or parsed; a status or type on the thrown error wins (413 stays 413). */
export function parseFailed (thrown: Thrown, body: string | Buffer): createError.HttpError {
  return createError(400, thrown as Error, { body, type: typeOf(thrown) || 'entity.parse.failed' })
}

/** 400 for a reading failure (raw-body's typed errors keep their status; zlib errors become 400). */
export function readFailed (thrown: Thrown): createError.HttpError {
  return createError(400, thrown as Error)
}

/** 413 when the bytes on the wire exceed `limit` while an inflated body is still within it. */
export function entityTooLarge (limit: number, received: number, expected?: number): createError.HttpError {
  return createError(413, 'request entity too large', expected === undefined
    ? { limit, received, type: 'entity.too.large' }
    : { expected, length: expected, limit, type: 'entity.too.large' })
}
