// Legacy entry (`require('bodykit/legacy')`): the four parsers with body-parser 1.x behaviour, and its generic.
import type { IncomingMessage } from 'http'
import { isBodyParserError as isBodyParserErrorGuard } from './errors'
import { createFactories } from './factories'
import { normalizeSchema } from './options'
import type * as OptionTypes from './options'
import { validateBody } from './body-rules'
import type * as Types from './types'
import { legacy, type BodyRequest } from './variants'

const factories = createFactories(legacy)

let warnedGeneric = false

/**
 * body-parser 1.x's deprecated generic: json, then urlencoded, sharing every option except `type`,
 * which each resets to its own default.
 * @deprecated use the individual json and urlencoded middlewares
 */
function bodykitLegacy<S extends OptionTypes.StandardSchemaV1 | undefined = undefined> (options?: Types.WithSchema<Types.GenericOptions, S> | null): Types.MiddlewareFor<S>
function bodykitLegacy (options?: Types.GenericOptions | null): Types.Middleware {
  if (!warnedGeneric) {
    warnedGeneric = true
    process.emitWarning('bodyParser: use individual json/urlencoded middlewares', 'DeprecationWarning', 'BODYKIT_GENERIC')
  }
  // compat(v1): the options object stays the prototype, so inherited options are read as 1.x reads them.
  // `schema` checks the body once, after both parsers: json's own check would refuse every form.
  const shared = Object.create(options || null, {
    type: { configurable: true, enumerable: true, value: undefined, writable: true },
    schema: { configurable: true, enumerable: true, value: undefined, writable: true }
  })
  const parseUrlencoded = factories.urlencoded(shared)
  const parseJson = factories.json(shared)
  const schema = normalizeSchema(options?.schema)
  return function bodyParser (req, res, next) {
    parseJson(req, res, (err) => {
      if (err) {
        next(err)
        return
      }
      if (schema === null) {
        parseUrlencoded(req, res, next)
        return
      }
      parseUrlencoded(req, res, (formErr) => {
        if (formErr) next(formErr)
        else validateBody(schema, (req as BodyRequest).body, next, (value) => { legacy.deliverBody(req, next, value) })
      })
    })
  }
}

// The function merges with a namespace so `require('bodykit/legacy')` is callable and carries the factories.
// eslint-disable-next-line @typescript-eslint/no-namespace
namespace bodykitLegacy {
  /**
   * Parses JSON bodies (`application/json` by default) into `req.body`, as body-parser 1.x.
   * @example
   * app.use(require('bodykit/legacy').json())
   */
  export const json: Types.LegacyBodyParser['json'] = factories.json
  /**
   * Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`, as body-parser 1.x.
   * @example
   * app.post('/upload', legacy.raw({ limit: '5mb' }), handler)
   */
  export const raw: Types.LegacyBodyParser['raw'] = factories.raw
  /**
   * Decodes `text/plain` bodies (by default) into a string on `req.body`, as body-parser 1.x.
   * @example
   * app.post('/note', legacy.text(), handler)
   */
  export const text: Types.LegacyBodyParser['text'] = factories.text
  /**
   * Parses form bodies into `req.body`, as body-parser 1.x (`extended` defaults to true, deprecated).
   * @example
   * app.use(legacy.urlencoded({ extended: false }))
   */
  export const urlencoded: Types.LegacyBodyParser['urlencoded'] = factories.urlencoded
  /**
   * Parses `multipart/form-data` bodies: fields into `req.body`; with `files`, files into `req.files`.
   * @example
   * app.post('/upload', legacy.multipart({ files: { storage: 'disk' } }), (req, res) => res.json(req.files))
   */
  export const multipart: Types.LegacyBodyParser['multipart'] = factories.multipart
  /**
   * Whether an error passed to an error handler is one bodykit produced (including the zlib errors it
   * passes on), narrowing it to {@link BodyParserError} for `switch (err.type)`.
   * @example
   * app.use((err, req, res, next) => isBodyParserError(err) ? res.status(err.status).send(err.type ?? 'bad body') : next(err))
   */
  export const isBodyParserError: (value: unknown) => value is BodyParserError = isBodyParserErrorGuard

  /** This module: the four factories and the deprecated generic (as @types/body-parser's `BodyParser`). */
  export type BodyParser = Types.LegacyBodyParser
  /** The middleware the factories return. */
  export type Middleware = Types.Middleware
  /** Options every parser accepts; `raw()`'s options (@types/body-parser's name). */
  export type Options = OptionTypes.BaseOptions
  /** Options of `json()` (@types/body-parser's name). */
  export type OptionsJson = OptionTypes.JsonOptions
  /** Options of `text()` (@types/body-parser's name). */
  export type OptionsText = OptionTypes.TextOptions
  /** Options of `urlencoded()` (@types/body-parser's name). */
  export type OptionsUrlencoded = OptionTypes.LegacyUrlencodedOptions
  /** Options of `json()`. */
  export type JsonOptions = OptionTypes.JsonOptions
  /** Options of `raw()`. */
  export type RawOptions = OptionTypes.RawOptions
  /** Options of `text()`. */
  export type TextOptions = OptionTypes.TextOptions
  /** Options of `urlencoded()`. */
  export type UrlencodedOptions = OptionTypes.LegacyUrlencodedOptions
  /** Options of `multipart()`. */
  export type MultipartOptions = OptionTypes.MultipartOptions
  /** Where `multipart()` keeps files, and their limits (its `files` option). */
  export type FilesOptions = OptionTypes.FilesOptions
  /** A file `multipart()` accepted, as listed on `req.files`. */
  export type UploadedFile = Types.UploadedFile
  /** A request after `multipart({ files })`, e.g. `MultipartRequest<express.Request>`: `req.files` is typed. */
  export type MultipartRequest<T extends IncomingMessage = IncomingMessage> = Types.MultipartRequest<T>
  /** An error bodykit passes to `next`, discriminated by `type`. */
  export type BodyParserError = Types.BodyParserError
  /** Every `type` string of bodykit's errors. */
  export type BodyParserErrorType = Types.BodyParserErrorType
  /** What json() does with a prototype-poisoning key. */
  export type PoisoningAction = OptionTypes.PoisoningAction
  /** A request a parser with `rawBody: true` may have read, e.g. `RawBodyRequest<express.Request>`. */
  export type RawBodyRequest<T extends IncomingMessage = IncomingMessage> = OptionTypes.RawBodyRequest<T>
  /** A schema in the Standard Schema v1 shape (zod, valibot, arktype...), for the `schema` option. */
  export type StandardSchemaV1<Input = unknown, Output = Input> = OptionTypes.StandardSchemaV1<Input, Output>
  /** The type of `req.body` after a parser with `schema: S`. */
  export type SchemaOutput<S> = Types.SchemaOutput<S>
  /** The middleware a factory returns for a `schema`: `req.body` is `Body` after it. */
  export type TypedMiddleware<Body> = Types.TypedMiddleware<Body>
  /** What a factory returns for a schema of type `S` (`undefined`: none). */
  export type MiddlewareFor<S> = Types.MiddlewareFor<S>
}

export = bodykitLegacy

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { json } from 'bodykit/legacy'` works.
const { json, raw, text, urlencoded, multipart } = factories
const isBodyParserError = isBodyParserErrorGuard
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { json, raw, text, urlencoded, multipart, isBodyParserError })
