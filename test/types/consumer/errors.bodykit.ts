// Consumer fixture (bodykit only): an error handler with isBodyParserError and an exhaustive `switch (err.type)`, both entries.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import express = require('express')

/** Fails to compile when a case is missing. */
function unreachable (value: never): never {
  throw new Error('unexpected error ' + String(value))
}

/** Answers a body-parsing error with its status and a short JSON description of what went wrong. */
function describe (err: bodykit.BodyParserError): Record<string, unknown> {
  switch (err.type) {
    case 'charset.load.failed':
      return { charset: err.charset, cause: String(err.cause) }
    case 'charset.unsupported':
      return { charset: err.charset }
    case 'encoding.unsupported':
      return { encoding: err.encoding }
    case 'entity.parse.failed':
      return { length: err.body.length }
    case 'entity.too.large':
      return { limit: err.limit, size: err.received ?? err.expected }
    case 'entity.validation.failed':
      return { issues: err.issues.map((issue) => ({ message: issue.message, path: issue.path?.map((segment) => typeof segment === 'object' ? segment.key : segment) })) }
    case 'entity.verify.failed':
      return { bytes: err.body.byteLength }
    case 'multipart.boundary.invalid':
    case 'multipart.field.name.missing':
    case 'multipart.header.malformed':
    case 'multipart.unexpected.end':
      return { malformed: true }
    case 'multipart.field.too.large':
    case 'multipart.file.too.large':
    case 'multipart.files.too.many':
      return { field: err.field, limit: err.limit }
    case 'multipart.field.name.too.large':
    case 'multipart.fields.too.large':
    case 'multipart.files.too.large':
    case 'multipart.fields.too.many':
    case 'multipart.parts.too.many':
      return { limit: err.limit }
    case 'multipart.file.unexpected':
      return { field: err.field }
    case 'multipart.storage.failed':
      return { cause: String(err.cause) }
    case 'parameters.too.many':
    case 'querystring.parse.rangeError':
      return { form: err.body.slice(0, 20) }
    case 'request.aborted':
      return { code: err.code, received: err.received, expected: err.expected }
    case 'request.length.invalid':
      return { length: err.length.trim() }
    case 'request.size.invalid':
      return { received: err.received, expected: err.expected, length: err.length }
    case 'stream.encoding.set':
    case 'stream.not.readable':
      return { expose: err.expose }
    case undefined:
      // zlib's error for a corrupt compressed body (or another error of the request stream).
      return { code: err.code, errno: err.errno }
    default:
      return unreachable(err)
  }
}

const onBodyError: express.ErrorRequestHandler = (err, _req, res, next) => {
  if (!bodykit.isBodyParserError(err)) {
    next(err)
    return
  }
  res.status(err.status).json({ type: err.type ?? 'stream', message: err.expose ? err.message : 'error', ...describe(err) })
}

const app = express()
app.use(bodykit.json(), legacy.urlencoded({ extended: false }))
app.use(onBodyError)
app.use((err: unknown, _req: express.Request, res: express.Response, next: express.NextFunction) => {
  if (legacy.isBodyParserError(err) && err.statusCode === 413) {
    res.sendStatus(413)
    return
  }
  next(err)
})

// The type names, in both entries, and bodykit's own names kept as aliases.
const types: bodykit.BodyParserErrorType[] = ['entity.too.large', 'entity.parse.failed']
const legacyTypes: legacy.BodyParserErrorType[] = types
const legacyError: legacy.BodyParserError | undefined = undefined as bodykit.BodyParserError | undefined
const aliases: [bodykit.JsonOptions, bodykit.RawOptions, bodykit.TextOptions, bodykit.UrlencodedOptions, legacy.UrlencodedOptions] = [
  { strict: true }, { limit: 1 }, { defaultCharset: 'utf-8' }, { charsetSentinel: true, defaultCharset: 'iso-8859-1' }, { depth: 5 }
]
const middlewares: bodykit.Middleware[] = [bodykit.json(null), legacy.raw(), legacy(null)]
const legacyModule: legacy.BodyParser = legacy
const defaultModule: bodykit.BodyParser = bodykit

// Beyond @types/body-parser: `type` functions typed with Express's Request, and readonly lists.
const MEDIA_TYPES = ['application/json', 'application/ld+json'] as const
app.use(bodykit.json({ type: MEDIA_TYPES }), bodykit.text({ type: (req: express.Request) => req.is('text/*') !== false }))

export = { app, legacyTypes, legacyError, aliases, middlewares, legacyModule, defaultModule }
