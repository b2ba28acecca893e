// The http errors bodykit reports: one small factory per error `type`, with body-parser's messages, and their guard.
import createError from 'http-errors'
import type { StandardSchemaV1 } from './options'
import type { BodyParserError, BodyParserErrorType } from './types'

/** bodykit's errors (and the errors it passes through), recorded when created: only these pass the guard. */
const produced = new WeakSet<object>()

/** raw-body's reading errors, which bodykit passes on as its own. */
const READING_TYPES: ReadonlySet<unknown> = new Set<BodyParserErrorType>([
  'entity.too.large', 'request.aborted', 'request.size.invalid', 'stream.encoding.set', 'stream.not.readable'
])

function mark<T extends object> (err: T): T {
  produced.add(err)
  return err
}

/**
 * Whether a value is an error bodykit passed to `next` (from either entry): an object recorded when
 * bodykit created or passed it on, so a look-alike is not recognised. An error that `verify` or a reviver
 * threw with its own `type` stays the caller's (it gets `status` and `body`, but the guard says false).
 */
export function isBodyParserError (value: unknown): value is BodyParserError {
  return produced.has(value as object)
}

/** An error thrown by user code (`verify`) or a parser; anything may be thrown, so nothing is assumed. */
type Thrown = unknown

/**
 * What http-errors can take from a thrown value: an Error, a message string or nothing. body-parser passes
 * anything through and crashes the process on `throw null`, `throw 42` and the like; bodykit answers.
 */
function asCause (thrown: Thrown): Error | string | null {
  return (thrown !== null && typeof thrown === 'object') || typeof thrown === 'string' ? thrown as Error | string : null
}

function typeOf (thrown: Thrown): unknown {
  return thrown !== null && typeof thrown === 'object' ? (thrown as { type?: unknown }).type : undefined
}

/** Whether assigning `key` on `target` would succeed: an own or inherited setter or writable value, or a new key. */
function canAssign (target: object, key: string): boolean {
  for (let holder: object | null = target; holder !== null; holder = Object.getPrototypeOf(holder) as object | null) {
    const descriptor = Object.getOwnPropertyDescriptor(holder, key)
    if (descriptor !== undefined) return descriptor.set !== undefined || descriptor.writable === true
  }
  return Object.isExtensible(target)
}

/**
 * http-errors' `createError(status, err, props)`: it adopts `err`, setting `status`, `statusCode`, `expose` and each
 * of `props` on it. An error that cannot take them (a `statusCode` getter without a setter, as h3 v2's `HTTPError`
 * has; a frozen error) would make that assignment throw a TypeError inside a stream's callback, where nothing
 * catches it and the process ends; such an error is wrapped instead, with its status, its message and itself as
 * `cause`.
 */
function adopt (status: number, thrown: Thrown, props: Record<string, unknown> = {}): createError.HttpError {
  const cause = asCause(thrown)
  if (cause === null || typeof cause === 'string' || ['status', 'statusCode', 'expose', ...Object.keys(props)].every((key) => canAssign(cause, key))) {
    return createError(status, cause as Error, props)
  }
  const own = cause as { status?: unknown, statusCode?: unknown, message?: unknown }
  const ownStatus = own.status ?? own.statusCode
  return createError(typeof ownStatus === 'number' ? ownStatus : status, String(own.message), { ...props, cause })
}

/**
 * 500 when iconv-lite cannot load the code table of a charset a request names (out of file descriptors, node_modules
 * changed under the process): the server's fault, not the body's, and not remembered, so the next request tries again.
 */
export function charsetLoadFailed (charset: string, cause: unknown): createError.HttpError {
  return mark(createError(500, 'charset "' + charset + '" could not be loaded', { charset, cause, type: 'charset.load.failed' }))
}

/** 415 when the Content-Type's charset is refused by the parser or unknown to iconv-lite. */
export function unsupportedCharset (charset: string): createError.HttpError {
  return mark(createError(415, 'unsupported charset "' + charset.toUpperCase() + '"', {
    charset,
    type: 'charset.unsupported'
  }))
}

/** 415 when `inflate` is false and the body has a Content-Encoding other than identity. */
export function inflateDisabled (encoding: string): createError.HttpError {
  return mark(createError(415, 'content encoding unsupported', {
    encoding,
    type: 'encoding.unsupported'
  }))
}

/** 415 when the Content-Encoding is not one this variant can inflate. */
export function unsupportedContentEncoding (encoding: string): createError.HttpError {
  return mark(createError(415, 'unsupported content encoding "' + encoding + '"', {
    encoding,
    type: 'encoding.unsupported'
  }))
}

/** 413 when urlencoded data holds more parameters than `parameterLimit`. */
export function tooManyParameters (): createError.HttpError {
  return mark(createError(413, 'too many parameters', { type: 'parameters.too.many' }))
}

/** 400 when extended urlencoded data nests deeper than `depth` (qs throws a RangeError). */
export function depthExceeded (): createError.HttpError {
  return mark(createError(400, 'The input exceeded the depth', { type: 'querystring.parse.rangeError' }))
}

/** 403 when `verify` throws; a status or type on the thrown error wins (with its own type, it stays the caller's error). */
export function verifyFailed (thrown: Thrown, body: Buffer): createError.HttpError {
  const ownType = typeOf(thrown)
  const err = adopt(403, thrown, { body, type: ownType || 'entity.verify.failed' })
  return ownType ? err : mark(err)
}

/** 400 when the body cannot be decoded or parsed; a status or type on the thrown error wins (413 stays 413). */
export function parseFailed (thrown: Thrown, body: string | Buffer): createError.HttpError {
  const ownType = typeOf(thrown)
  const err = adopt(400, thrown, { body, type: ownType || 'entity.parse.failed' })
  // bodykit's own errors thrown by a parser (too many parameters, depth) are already marked.
  return ownType ? err : mark(err)
}

/** 400 when the `schema` refused the body: its issues as given, and the value it checked. */
export function validationFailed (issues: ReadonlyArray<StandardSchemaV1.Issue>, body: unknown): createError.HttpError {
  return mark(createError(400, describeIssues(issues), { body, issues, type: 'entity.validation.failed' }))
}

/**
 * A `schema` whose `validate` threw, rejected or returned no result: the server's failure, not the body's, so
 * 500 unless the thrown error carries its own status. It stays the caller's error: no `type` is added and
 * the guard says false.
 */
export function validationCrashed (thrown: Thrown): createError.HttpError {
  return adopt(500, thrown)
}

/** The message of a refused body: the first issue, where it is and what is wrong, and how many more there are. */
function describeIssues (issues: ReadonlyArray<StandardSchemaV1.Issue>): string {
  const first = issues[0] as StandardSchemaV1.Issue | undefined
  if (first === undefined) return 'invalid body'
  const where = formatPath(first.path)
  const more = issues.length > 1 ? ' (and ' + (issues.length - 1) + ' more)' : ''
  return 'invalid body' + (where === '' ? '' : ' at ' + where) + ': ' + String(first.message) + more
}

/** An issue's path as code would write it (`items[0].name`); empty for the body itself. */
function formatPath (path: StandardSchemaV1.Issue['path']): string {
  if (!Array.isArray(path)) return ''
  let text = ''
  for (const segment of path as ReadonlyArray<PropertyKey | StandardSchemaV1.PathSegment>) {
    const key = segment !== null && typeof segment === 'object' ? segment.key : segment
    if (typeof key === 'number') text += '[' + key + ']'
    else text += (text === '' ? '' : '.') + String(key)
  }
  return text
}

/**
 * What user code threw (a fileFilter, a storage engine), to be reported as thrown; `undefined` or `null` would read
 * as no error to `next`, so such a throw becomes a 500 that says what was thrown.
 */
export function thrownByUser (thrown: unknown): unknown {
  return thrown == null ? createError(500, 'a callback threw ' + String(thrown)) : thrown
}

/** 400 for a reading failure (raw-body's typed errors keep their status; zlib errors become 400). */
export function readFailed (thrown: Thrown): createError.HttpError {
  const type = typeOf(thrown)
  const err = adopt(400, thrown)
  // Typeless errors are zlib's (or the stream's), passed on as bodykit's; bodykit's own are already marked.
  return type === undefined || READING_TYPES.has(type) ? mark(err) : err
}

/**
 * 413 for a body over `limit`: with `expected` when the declared Content-Length alone is over it (raw-body's
 * shape), else with the bytes `received` when the running count crossed it (on the wire or inflated).
 */
export function entityTooLarge (limit: number, received: number, expected?: number): createError.HttpError {
  return mark(createError(413, 'request entity too large', expected === undefined
    ? { limit, received, type: 'entity.too.large' }
    : { expected, length: expected, limit, type: 'entity.too.large' }))
}

/** 500 when something called `req.setEncoding()` before the parser (raw-body's shape). */
export function streamEncodingSet (): createError.HttpError {
  return mark(createError(500, 'stream encoding should not be set', { type: 'stream.encoding.set' }))
}

/** 500 when the request stream was already read by something else (raw-body's shape). */
export function streamNotReadable (): createError.HttpError {
  return mark(createError(500, 'stream is not readable', { type: 'stream.not.readable' }))
}

/** 400 when the client went away mid-body (raw-body's shape; for a compressed body, counted on the wire). */
export function requestAborted (received: number, expected: number | null): createError.HttpError {
  return mark(createError(400, 'request aborted', {
    code: 'ECONNABORTED',
    expected,
    length: expected,
    received,
    type: 'request.aborted'
  }))
}

/** 400 when the bytes received differ from the declared Content-Length (raw-body's shape). */
export function sizeMismatch (received: number, expected: number): createError.HttpError {
  return mark(createError(400, 'request size did not match content length', {
    expected,
    length: expected,
    received,
    type: 'request.size.invalid'
  }))
}

/** 400 when a Request's Content-Length is not a number of bytes (bodykit only: Node refuses such a request itself). */
export function malformedContentLength (length: string): createError.HttpError {
  return mark(createError(400, 'invalid content-length', {
    length,
    type: 'request.length.invalid'
  }))
}

/** 400 when a multipart Content-Type has no usable boundary (none, empty, over 70 characters, or given twice). */
export function invalidBoundary (): createError.HttpError {
  return mark(createError(400, 'missing or invalid multipart boundary', { type: 'multipart.boundary.invalid' }))
}

/**
 * 400 when a part's header block is malformed or larger than the parser reads (16 KiB); with the `field`, when
 * the part's `filename*` cannot be read and it has no plain `filename` to fall back on (RFC 6266 §4.3).
 */
export function malformedPartHeader (field?: string): createError.HttpError {
  return mark(field === undefined
    ? createError(400, 'malformed part header', { type: 'multipart.header.malformed' })
    : createError(400, 'malformed filename* in field "' + field + '"', { field, type: 'multipart.header.malformed' }))
}

/** 400 when a multipart body ends before its closing boundary. */
export function unexpectedEndOfForm (): createError.HttpError {
  return mark(createError(400, 'unexpected end of multipart body', { type: 'multipart.unexpected.end' }))
}

/** 400 when a part has no `name` (or an empty one) in its Content-Disposition. */
export function missingFieldName (): createError.HttpError {
  return mark(createError(400, 'part without a field name', { type: 'multipart.field.name.missing' }))
}

/** 400 when a file arrives where none is accepted: files are off, or its field may not carry files. */
export function unexpectedFile (field: string): createError.HttpError {
  return mark(createError(400, 'unexpected file in field "' + field + '"', { field, type: 'multipart.file.unexpected' }))
}

/** 415 when a part declares a charset that cannot be decoded. */
export function unsupportedFieldCharset (field: string): createError.HttpError {
  return mark(createError(415, 'unsupported charset in field "' + field + '"', { charset: '', field, type: 'charset.unsupported' }))
}

/** 413 when a multipart body holds more parts than `partLimit`. */
export function tooManyParts (limit: number): createError.HttpError {
  return mark(createError(413, 'too many parts', { limit, type: 'multipart.parts.too.many' }))
}

/** 413 when a multipart body holds more fields than `parameterLimit`. */
export function tooManyFields (limit: number): createError.HttpError {
  return mark(createError(413, 'too many fields', { limit, type: 'multipart.fields.too.many' }))
}

/** 413 when a multipart body holds more files than `files.fileLimit`. */
export function tooManyFiles (limit: number, field: string): createError.HttpError {
  return mark(createError(413, 'too many files', { field, limit, type: 'multipart.files.too.many' }))
}

/** 413 when a file is larger than `files.fileSizeLimit`. */
export function fileTooLarge (limit: number, field: string): createError.HttpError {
  return mark(createError(413, 'file too large in field "' + field + '"', { field, limit, type: 'multipart.file.too.large' }))
}

/** 413 when a field's value is larger than `fieldSizeLimit`. */
export function fieldTooLarge (limit: number, field: string): createError.HttpError {
  return mark(createError(413, 'field "' + field + '" too large', { field, limit, type: 'multipart.field.too.large' }))
}

/** 413 when all a form's fields together pass `limit` bytes (koaBody()'s formidable `maxFieldsSize`). */
export function fieldsTooLarge (limit: number): createError.HttpError {
  return mark(createError(413, 'fields too large', { limit, type: 'multipart.fields.too.large' }))
}

/** 413 when all a form's files together pass `limit` bytes (koaBody()'s formidable `maxTotalFileSize`). */
export function filesTooLarge (limit: number): createError.HttpError {
  return mark(createError(413, 'files too large', { limit, type: 'multipart.files.too.large' }))
}

/** 413 when a field name is longer than `fieldNameSizeLimit` (the name is not repeated: it may be huge). */
export function fieldNameTooLarge (limit: number): createError.HttpError {
  return mark(createError(413, 'field name too large', { limit, type: 'multipart.field.name.too.large' }))
}

/** 500 when an upload could not be stored (a full disk, a folder that went away): the server's failure, not the body's. */
export function storageFailed (cause: unknown): createError.HttpError {
  return mark(createError(500, 'upload could not be stored', { cause, type: 'multipart.storage.failed' }))
}
