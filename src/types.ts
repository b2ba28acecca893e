// Public types of both entries besides the options: the middleware, the module shapes and the errors.
// Its declarations are published: it may import only `node:*` types and ./options, and declares types only.
import type { IncomingMessage, ServerResponse } from 'http'
import type { BaseOptions, JsonOptions, LegacyUrlencodedOptions, MultipartOptions, StandardSchemaV1, TextOptions, UrlencodedOptions } from './options'

/**
 * A connect/Express middleware (connect's `NextHandleFunction`): after it ran, `req.body` holds the parsed
 * body. `next` takes `any`, as in @types/body-parser, so existing callbacks keep compiling.
 */
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: any) => void) => void // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * The type of `req.body` after a parser with `schema: S`: the schema's output type (`unknown` for a schema
 * that declares no types).
 */
export type SchemaOutput<S> = S extends { readonly '~standard': { readonly types?: { readonly output: infer Output } | undefined } }
  ? Output
  : unknown

/**
 * The middleware a factory returns for a `schema`: after it called `next()` without an error, `req.body` is
 * `Body`. Its last signature's request carries `body`, and Express (4 and 5) infers its route handlers'
 * `req.body` from it: `app.post('/users', json({ schema: User }), (req, res) => { req.body.name })` needs no
 * annotation. The first one takes any request (connect's, node:http's), so it can be called as any middleware.
 */
export interface TypedMiddleware<Body> {
  (req: IncomingMessage, res: ServerResponse, next: (err?: any) => void): void // eslint-disable-line @typescript-eslint/no-explicit-any
  (req: IncomingMessage & { body: Body }, res: ServerResponse, next: (err?: any) => void): void // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * A parser's options with the type of their `schema` as `S`, so that a call infers it (`undefined`: none).
 * (The options' own `schema` is left out: intersected with it, arktype's types are too deep to check.)
 */
export type WithSchema<Options, S extends StandardSchemaV1 | undefined> = Omit<Options, 'schema'> & { schema?: S }

/**
 * What a factory returns for a schema of type `S`: a {@link TypedMiddleware} for a schema the compiler
 * sees, else the plain {@link Middleware} (no `schema`, or options typed with the general `StandardSchemaV1`).
 */
export type MiddlewareFor<S> = [S] extends [undefined] ? Middleware : StandardSchemaV1 extends S ? Middleware : TypedMiddleware<SchemaOutput<S>>

/** What a reader resolves with for a schema of type `S`: its output, else the parser's own `Body`. */
export type BodyFor<S, Body> = [S] extends [undefined] ? Body : StandardSchemaV1 extends S ? Body : SchemaOutput<S>

/**
 * A Web-standard Fetch `Request` (Node's global, Bun's, Deno's, Cloudflare Workers'), described by what bodykit
 * reads of it, so that no DOM library is needed: every runtime's `Request` is assignable to it.
 */
export interface WebRequest {
  readonly method: string
  readonly url: string
  readonly headers: { get (name: string): string | null, forEach (callback: (value: string, name: string) => void): void }
  readonly body: WebBodyStream | null
  readonly bodyUsed: boolean
}

/** A `Request`'s body as bodykit reads it: a `ReadableStream` of bytes. */
export interface WebBodyStream {
  readonly locked: boolean
  getReader (): { read (): Promise<{ done: boolean, value?: unknown }>, cancel (reason?: unknown): Promise<void> }
}

/**
 * A reader of the promise API: reads a Node request or a Web `Request`, and resolves with the schema's output when
 * `options.schema` is a schema the compiler sees, else with `Body` (`undefined` when there is nothing to read).
 */
export type Reader<Body, Options> = <S extends StandardSchemaV1 | undefined = undefined> (req: IncomingMessage | WebRequest, options?: WithSchema<Options, S> | null) => Promise<BodyFor<S, Body>>

/**
 * The multipart reader: `{ fields, files }`, or `undefined` when there is nothing to read; with a schema the compiler
 * sees, always `{ fields, files }`, the fields being the schema's output (for a form not read, its output for
 * `undefined`, with no files).
 */
export type FormReader<Options> = <S extends StandardSchemaV1 | undefined = undefined> (req: IncomingMessage | WebRequest, options?: WithSchema<Options, S> | null) => Promise<FormFor<S>>

/** What the multipart reader resolves with for a schema of type `S`. */
export type FormFor<S> = [S] extends [undefined] ? MultipartResult | undefined : StandardSchemaV1 extends S ? MultipartResult | undefined : MultipartResult<SchemaOutput<S>>

/** Options of `bodykit/legacy`'s deprecated generic parser: those of json, text and urlencoded (`type` is ignored). */
export type GenericOptions = JsonOptions & TextOptions & LegacyUrlencodedOptions

/** The default entry's module (`require('bodykit')`): the four factories, and a generic that throws. */
export interface BodyParser {
  /**
   * body-parser 2.x removed the generic parser: calling it always throws.
   * @deprecated use the individual json and urlencoded middlewares
   */
  (options?: JsonOptions & TextOptions & UrlencodedOptions | null): never
  /** Parses JSON bodies (`application/json` by default) into `req.body`. */
  json<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<JsonOptions, S> | null): MiddlewareFor<S>
  /** Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`. */
  raw<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<BaseOptions, S> | null): MiddlewareFor<S>
  /** Decodes `text/plain` bodies (by default) into a string on `req.body`. */
  text<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<TextOptions, S> | null): MiddlewareFor<S>
  /** Parses `application/x-www-form-urlencoded` bodies (by default) into an object on `req.body`. */
  urlencoded<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<UrlencodedOptions, S> | null): MiddlewareFor<S>
  /** Parses `multipart/form-data` bodies: fields into `req.body`, files (when `files` is on) into `req.files`. */
  multipart<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<MultipartOptions, S> | null): MiddlewareFor<S>
}

/** `bodykit/legacy`'s module: body-parser 1.x's four factories and its deprecated generic. */
export interface LegacyBodyParser {
  /**
   * body-parser 1.x's generic: json, then urlencoded, sharing every option except `type`; a `schema` checks
   * the body once, after both.
   * @deprecated use the individual json and urlencoded middlewares
   */
  <S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<GenericOptions, S> | null): MiddlewareFor<S>
  /** Parses JSON bodies (`application/json` by default) into `req.body`, as body-parser 1.x. */
  json<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<JsonOptions, S> | null): MiddlewareFor<S>
  /** Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`, as body-parser 1.x. */
  raw<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<BaseOptions, S> | null): MiddlewareFor<S>
  /** Decodes `text/plain` bodies (by default) into a string on `req.body`, as body-parser 1.x. */
  text<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<TextOptions, S> | null): MiddlewareFor<S>
  /** Parses form bodies into `req.body`, as body-parser 1.x (`extended` defaults to true, deprecated). */
  urlencoded<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<LegacyUrlencodedOptions, S> | null): MiddlewareFor<S>
  /** Parses `multipart/form-data` bodies: fields into `req.body`, files (when `files` is on) into `req.files`. */
  multipart<S extends StandardSchemaV1 | undefined = undefined> (options?: WithSchema<MultipartOptions, S> | null): MiddlewareFor<S>
}

/** Every `type` string of the errors bodykit passes to `next` (README, section Errors). */
export type BodyParserErrorType =
  | 'charset.load.failed'
  | 'charset.unsupported'
  | 'encoding.unsupported'
  | 'entity.parse.failed'
  | 'entity.too.large'
  | 'entity.validation.failed'
  | 'entity.verify.failed'
  | 'multipart.boundary.invalid'
  | 'multipart.field.name.missing'
  | 'multipart.field.name.too.large'
  | 'multipart.field.too.large'
  | 'multipart.fields.too.large'
  | 'multipart.fields.too.many'
  | 'multipart.file.too.large'
  | 'multipart.file.unexpected'
  | 'multipart.files.too.large'
  | 'multipart.files.too.many'
  | 'multipart.header.malformed'
  | 'multipart.parts.too.many'
  | 'multipart.storage.failed'
  | 'multipart.unexpected.end'
  | 'parameters.too.many'
  | 'querystring.parse.rangeError'
  | 'request.aborted'
  | 'request.length.invalid'
  | 'request.size.invalid'
  | 'stream.encoding.set'
  | 'stream.not.readable'

/** What every error bodykit passes to `next` has: it is an http-errors `HttpError`. */
export interface BodyParserErrorBase extends Error {
  /** The status to answer with; a status set on an error thrown by `verify` or a reviver is kept. */
  status: number
  /** The same as `status`. */
  statusCode: number
  /** Whether the message may be shown to the client: true below 500. */
  expose: boolean
}

/** The properties each error `type` adds to those of {@link BodyParserErrorBase}. */
export interface BodyParserErrorProperties {
  /** 500: the charset whose code table could not be loaded (a server fault: the next request tries again), and the load's error as `cause`. */
  'charset.load.failed': { charset: string, cause: unknown }
  /** 415: the charset, lower-case (for a multipart part's own charset: `''`, and the `field`). */
  'charset.unsupported': { charset: string, field?: string }
  /** 415: the Content-Encoding. */
  'encoding.unsupported': { encoding: string }
  /** 400: the decoded body the parser rejected. */
  'entity.parse.failed': { body: string }
  /** 413: `limit`, and either the declared length (`expected`, `length`) or the bytes `received`. */
  'entity.too.large': { limit: number, expected?: number, length?: number, received?: number }
  /** 400: the `schema`'s issues (each with `message` and `path` as the schema gave them), and the value it checked. */
  'entity.validation.failed': { body: unknown, issues: ReadonlyArray<StandardSchemaV1.Issue> }
  /** 403: the raw body `verify` rejected. */
  'entity.verify.failed': { body: Buffer }
  /** 400: no extra property. */
  'multipart.boundary.invalid': Record<never, never>
  /** 400: no extra property. */
  'multipart.field.name.missing': Record<never, never>
  /** 413: `fieldNameSizeLimit`. */
  'multipart.field.name.too.large': { limit: number }
  /** 413: the field, and `fieldSizeLimit`. */
  'multipart.field.too.large': { field: string, limit: number }
  /** 413 (koaBody() only): formidable's `maxFieldsSize`, which all fields together passed. */
  'multipart.fields.too.large': { limit: number }
  /** 413: `parameterLimit`. */
  'multipart.fields.too.many': { limit: number }
  /** 413: the field, and `files.fileSizeLimit`. */
  'multipart.file.too.large': { field: string, limit: number }
  /** 400: the field the file came in. */
  'multipart.file.unexpected': { field: string }
  /** 413 (koaBody() only): formidable's `maxTotalFileSize`, which all files together passed. */
  'multipart.files.too.large': { limit: number }
  /** 413: the field of the file past the limit, and `files.fileLimit`. */
  'multipart.files.too.many': { field: string, limit: number }
  /** 400: the field, when the part's `filename*` cannot be read and it has no plain `filename` to fall back on. */
  'multipart.header.malformed': { field?: string }
  /** 413: `partLimit`. */
  'multipart.parts.too.many': { limit: number }
  /** 500: the storage's own error as `cause`. */
  'multipart.storage.failed': { cause: unknown }
  /** 400: no extra property. */
  'multipart.unexpected.end': Record<never, never>
  /** 413: the decoded form. */
  'parameters.too.many': { body: string }
  /** 400: the decoded form. */
  'querystring.parse.rangeError': { body: string }
  /** 400: the bytes received and the declared length (null without a Content-Length). */
  'request.aborted': { code: 'ECONNABORTED', expected: number | null, length: number | null, received: number }
  /** 400 (a Web Request only): the Content-Length as it was sent. */
  'request.length.invalid': { length: string }
  /** 400: the bytes received and the declared length. */
  'request.size.invalid': { expected: number, length: number, received: number }
  /** 500: no extra property. */
  'stream.encoding.set': Record<never, never>
  /** 500: no extra property. */
  'stream.not.readable': Record<never, never>
}

/**
 * An error passed on without a `type`: zlib's for a corrupt or truncated compressed body (400, with zlib's
 * `code` such as `Z_DATA_ERROR` and `errno`), or another error the request stream emitted (its own status, else 400).
 */
export interface BodyParserStreamError extends BodyParserErrorBase {
  type?: undefined
  code?: string
  errno?: number
}

/** The error of one `type`, with that type's properties. */
export type BodyParserErrorOf<T extends BodyParserErrorType> = BodyParserErrorBase & { type: T } & BodyParserErrorProperties[T]

/**
 * An error bodykit passes to `next`, as recognised by `isBodyParserError`: a union discriminated by `type`,
 * so `switch (err.type)` narrows each case and can be checked for exhaustiveness (`case undefined` is
 * {@link BodyParserStreamError}).
 */
export type BodyParserError = { [T in BodyParserErrorType]: BodyParserErrorOf<T> }[BodyParserErrorType] | BodyParserStreamError

/** A file `multipart()` accepted: on `req.files`, in the order the parts came. */
export interface UploadedFile {
  /** The form field it came in. */
  fieldName: string
  /** The client's file name (base name only): data to show, never a path to use. */
  originalName: string
  /** The part's Content-Type (`application/octet-stream` when it had none). */
  mimeType: string
  /** The part's Content-Transfer-Encoding (`7bit` when it had none), as sent; the bytes are kept as received. */
  encoding: string
  /** Its size in bytes. */
  size: number
  /** Memory storage: the file's bytes. */
  buffer?: Buffer | undefined
  /** Disk storage: the random name the file was written under, in `directory`. */
  fileName?: string | undefined
  /** Disk storage: where the file is (`directory` joined with `fileName`). */
  path?: string | undefined
}

/** What {@link readMultipart} resolves with: the fields (as `req.body`) and the files (as `req.files`). */
export interface MultipartResult<Fields = Record<string, unknown>> {
  fields: Fields
  files: UploadedFile[]
}

/**
 * A request after `multipart({ files })`: `files` lists the accepted files. Wraps any request type, e.g.
 * `MultipartRequest<express.Request>`; no global type changes (so it does not clash with @types/multer's).
 */
export type MultipartRequest<T extends IncomingMessage = IncomingMessage> = T & { files?: UploadedFile[] | undefined }
