// Default entry (`require('bodykit')`): the four parsers with body-parser 2.x behaviour.
import type { IncomingMessage } from 'http'
import { isBodyParserError as isBodyParserErrorGuard } from './errors'
import { createFactories } from './factories'
import type * as OptionTypes from './options'
import * as readers from './readers'
import type * as Types from './types'
import { modern } from './variants'

const factories = createFactories(modern)

/**
 * body-parser 2.x's module is callable only to say the generic parser is gone; bodykit keeps that shape.
 * @throws always
 * @deprecated use the individual json and urlencoded middlewares
 */
function bodykit (_options?: OptionTypes.JsonOptions & OptionTypes.TextOptions & OptionTypes.UrlencodedOptions | null): never {
  throw new Error('The bodyParser() generic has been split into individual middleware to use instead.')
}

// The function merges with a namespace so `require('bodykit')` is callable and carries the factories.
// eslint-disable-next-line @typescript-eslint/no-namespace
namespace bodykit {
  /**
   * Parses JSON bodies (`application/json` by default) into `req.body`.
   * @example
   * app.post('/api', bodykit.json({ limit: '1mb' }), (req, res) => res.json(req.body))
   * // With a Standard Schema (zod, valibot, arktype...): req.body is checked and typed as its output.
   * app.post('/users', bodykit.json({ schema: User }), (req, res) => res.json({ name: req.body.name }))
   */
  export const json: Types.BodyParser['json'] = factories.json
  /**
   * Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`.
   * @example
   * app.post('/upload', bodykit.raw({ type: 'image/*', limit: '5mb' }), (req, res) => res.end(String(req.body.length)))
   */
  export const raw: Types.BodyParser['raw'] = factories.raw
  /**
   * Decodes `text/plain` bodies (by default) into a string on `req.body`.
   * @example
   * app.post('/note', bodykit.text({ defaultCharset: 'utf-8' }), (req, res) => res.send(req.body))
   */
  export const text: Types.BodyParser['text'] = factories.text
  /**
   * Parses `application/x-www-form-urlencoded` bodies (by default) into an object on `req.body`.
   * @example
   * router.post('/login', bodykit.urlencoded({ extended: false }), (req, res) => res.send(req.body.user))
   */
  export const urlencoded: Types.BodyParser['urlencoded'] = factories.urlencoded
  /**
   * Parses `multipart/form-data` bodies: fields into `req.body`; with `files`, files into `req.files`
   * (memory or disk, with finite limits). Without `files`, a file part gets 400 `multipart.file.unexpected`.
   * @example
   * app.post('/avatar', bodykit.multipart({ files: { storage: 'disk', fieldNames: ['avatar'] } }), (req, res) => {
   *   res.json({ name: req.body.name, saved: req.files[0].path })
   * })
   */
  export const multipart: Types.BodyParser['multipart'] = factories.multipart
  /**
   * Reads and parses a JSON body as `json(options)` does, without setting `req.body`: resolves with the body
   * (`undefined` when there is none to parse), or with the `schema`'s output (typed as it), and rejects with
   * the error the middleware passes to `next`.
   * @example
   * const body = await bodykit.readJson(req, { limit: '1mb', res })
   * const user = await bodykit.readJson(req, { schema: User, res }) // typed as User's output
   */
  export const readJson: Types.Reader<unknown, OptionTypes.ReadJsonOptions> = readers.readJson
  /**
   * Reads a body into a Buffer as `raw(options)` does (`undefined` when there is none to read).
   * @example
   * const pdf = await bodykit.readRaw(req, { type: 'application/pdf', limit: '10mb', res })
   */
  export const readRaw: Types.Reader<Buffer | undefined, OptionTypes.ReadRawOptions> = readers.readRaw
  /**
   * Reads and decodes a text body as `text(options)` does (`undefined` when there is none to read).
   * @example
   * const csv = await bodykit.readText(ctx.req, { type: 'text/csv', res: ctx.res })
   */
  export const readText: Types.Reader<string | undefined, OptionTypes.ReadTextOptions> = readers.readText
  /**
   * Reads and parses a form body as `urlencoded(options)` does (`undefined` when there is none to read).
   * @example
   * const form = await bodykit.readUrlencoded(req, { extended: true, res })
   */
  export const readUrlencoded: Types.Reader<Record<string, unknown> | undefined, OptionTypes.ReadUrlencodedOptions> = readers.readUrlencoded
  /**
   * Reads a multipart form as `multipart(options)` does, without touching `req.body`: resolves with
   * `{ fields, files }` (`undefined` when there is none to read; with `schema`, the fields are its output, also
   * for a form not read). With `res`, disk files are removed once the response has finished; without it, they
   * are the caller's.
   * @example
   * const { fields, files } = await bodykit.readMultipart(req, { files: true, res })
   */
  export const readMultipart: Types.FormReader<OptionTypes.ReadMultipartOptions> = readers.readMultipart
  /**
   * Whether an error passed to an error handler is one bodykit produced (including the zlib errors it
   * passes on), narrowing it to {@link BodyParserError} for `switch (err.type)`.
   * @example
   * app.use((err, req, res, next) => isBodyParserError(err) ? res.status(err.status).send(err.type ?? 'bad body') : next(err))
   */
  export const isBodyParserError: (value: unknown) => value is BodyParserError = isBodyParserErrorGuard

  /** This module: the four factories, and the generic that throws (as @types/body-parser's `BodyParser`). */
  export type BodyParser = Types.BodyParser
  /** The middleware the factories return. */
  export type Middleware = Types.Middleware
  /** Options every parser accepts; `raw()`'s options (@types/body-parser's name). */
  export type Options = OptionTypes.BaseOptions
  /** Options of `json()` (@types/body-parser's name). */
  export type OptionsJson = OptionTypes.JsonOptions
  /** Options of `text()` (@types/body-parser's name). */
  export type OptionsText = OptionTypes.TextOptions
  /** Options of `urlencoded()` (@types/body-parser's name). */
  export type OptionsUrlencoded = OptionTypes.UrlencodedOptions
  /** Options of `json()`. */
  export type JsonOptions = OptionTypes.JsonOptions
  /** Options of `raw()`. */
  export type RawOptions = OptionTypes.RawOptions
  /** Options of `text()`. */
  export type TextOptions = OptionTypes.TextOptions
  /** Options of `urlencoded()`. */
  export type UrlencodedOptions = OptionTypes.UrlencodedOptions
  /** Options of `multipart()`. */
  export type MultipartOptions = OptionTypes.MultipartOptions
  /** Where `multipart()` keeps files, and their limits (its `files` option). */
  export type FilesOptions = OptionTypes.FilesOptions
  /** A file `multipart()` accepted, as listed on `req.files`. */
  export type UploadedFile = Types.UploadedFile
  /** A request after `multipart({ files })`, e.g. `MultipartRequest<express.Request>`: `req.files` is typed. */
  export type MultipartRequest<T extends IncomingMessage = IncomingMessage> = Types.MultipartRequest<T>
  /** What `readMultipart()` resolves with. */
  export type MultipartResult<Fields = Record<string, unknown>> = Types.MultipartResult<Fields>
  /** Options of `readMultipart()`. */
  export type ReadMultipartOptions = OptionTypes.ReadMultipartOptions
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
  /** A reader of the promise API, typed by its options (with a `schema`, its output). */
  export type Reader<Body, Options> = Types.Reader<Body, Options>
  /** The multipart reader, typed by its options (with a `schema`, the fields are its output). */
  export type FormReader<Options> = Types.FormReader<Options>
  /** A Web-standard Fetch `Request` as the readers take it (Node's, Bun's, Deno's, Cloudflare Workers'). */
  export type WebRequest = Types.WebRequest
  /** A `Request`'s body as the readers read it: a `ReadableStream` of bytes. */
  export type WebBodyStream = Types.WebBodyStream
  /** What a factory returns for a schema of type `S` (`undefined`: none). */
  export type MiddlewareFor<S> = Types.MiddlewareFor<S>
  /** What the promise API takes besides a parser's options (`res`). */
  export type ReadOptions = OptionTypes.ReadOptions
  /** Options of `readJson()`. */
  export type ReadJsonOptions = OptionTypes.ReadJsonOptions
  /** Options of `readRaw()`. */
  export type ReadRawOptions = OptionTypes.ReadRawOptions
  /** Options of `readText()`. */
  export type ReadTextOptions = OptionTypes.ReadTextOptions
  /** Options of `readUrlencoded()`. */
  export type ReadUrlencodedOptions = OptionTypes.ReadUrlencodedOptions
}

export = bodykit

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { json } from 'bodykit'` works.
const { json, raw, text, urlencoded, multipart } = factories
const { readJson, readRaw, readText, readUrlencoded, readMultipart } = readers
const isBodyParserError = isBodyParserErrorGuard
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { json, raw, text, urlencoded, multipart, isBodyParserError, readJson, readRaw, readText, readUrlencoded, readMultipart })
