// multer's MulterError: the same class shape, codes and messages, plus the 4xx status an HTTP error handler reads.

/** The codes multer 2.x reports, and their messages (public API: identical to multer's). */
export const MESSAGES = {
  LIMIT_PART_COUNT: 'Too many parts',
  LIMIT_FILE_SIZE: 'File too large',
  LIMIT_FILE_COUNT: 'Too many files',
  LIMIT_FIELD_KEY: 'Field name too long',
  LIMIT_FIELD_VALUE: 'Field value too long',
  LIMIT_FIELD_COUNT: 'Too many fields',
  LIMIT_UNEXPECTED_FILE: 'Unexpected file field',
  MISSING_FIELD_NAME: 'Field name missing',
  LIMIT_FIELD_NESTING: 'Field name nesting too deep',
  LIMIT_FIELD_ARRAY_INDEX: 'Field name array index too large',
  STREAM_DESTROYED: 'File stream was destroyed',
  INVALID_FIELD_NAME: 'Invalid field name'
} as const

/** A code of {@link MulterError}. */
export type MulterErrorCode = keyof typeof MESSAGES

/** The codes for a count or a size passed: answered 413, as bodykit's own limits are. */
const TOO_LARGE: ReadonlySet<string> = new Set([
  'LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT'
])

/**
 * An error of the upload (a limit, an unexpected file, a bad field name): check `err.code`. As multer's, with
 * `field` and `filename` where they apply; `status` and `statusCode` (inherited, so not own properties) make
 * Express answer 413 or 400 instead of multer's 500. Both are assignable, as on any error: what an error handler
 * assigns becomes an own property.
 */
export class MulterError extends Error {
  declare code: string
  declare field?: string
  declare filename?: string
  constructor (code: string, field?: string, filename?: string) {
    super()
    // compat(multer): `name` and `message` are own enumerable properties, in multer's order.
    delete (this as { message?: string }).message
    this.name = this.constructor.name
    this.message = code in MESSAGES ? MESSAGES[code as MulterErrorCode] : `Unknown error: ${code}`
    this.code = code
    if (field) this.field = field
    if (filename) this.filename = filename
  }

  /** 413 for a limit passed, else 400, until the application assigns its own. */
  get status (): number {
    return TOO_LARGE.has(this.code) ? 413 : 400
  }

  set status (value: number) {
    defineOwn(this, 'status', value)
  }

  /** The same as `status`, until the application assigns its own. */
  get statusCode (): number {
    return this.status
  }

  set statusCode (value: number) {
    defineOwn(this, 'statusCode', value)
  }
}

/**
 * An error handler assigns `status` (Koa's `ctx.onerror` does, outside any promise): the assignment becomes an own
 * property, as on any error, so the inherited default never makes it throw.
 */
function defineOwn (err: MulterError, key: 'status' | 'statusCode', value: unknown): void {
  Object.defineProperty(err, key, { value, configurable: true, enumerable: true, writable: true })
}

/**
 * A part whose `filename*` cannot be read and which has no plain `filename` to fall back on (RFC 6266 §4.3). multer
 * skips such a part without a word (busboy does); bodykit/multer refuses the form as it refuses any malformed part:
 * a plain Error, as busboy's 'Malformed part header' (no MulterError code fits), with a 400, naming the field.
 */
export function unreadableFileName (field: string): Error {
  return asClientError(Object.assign(new Error('Malformed filename* in field "' + field + '"'), { field }))
}

/** busboy's error for a malformed body, passed on as multer passes it, with the 400 a client error deserves. */
export function asClientError (err: Error): Error {
  if (!('status' in err)) {
    Object.defineProperty(err, 'status', { value: 400, configurable: true, writable: true })
    Object.defineProperty(err, 'statusCode', { value: 400, configurable: true, writable: true })
  }
  return err
}
