// Public option types and their normalisation: everything request-independent is validated here, once.
// Its declarations are published: besides the option types it may import only `node:*` types, and
// every internal export carries an "at-internal" TSDoc tag (stripInternal drops it from the .d.ts).
import type { IncomingMessage, ServerResponse } from 'http'
import bytes from 'bytes'

// Callbacks are declared as methods, then taken by indexed access: TypeScript checks method parameters
// bivariantly, so a callback typed with Express's `Request`/`Response` is accepted, as @types/body-parser
// (which declares `verify` as a method) accepts it.
interface Callbacks {
  verify (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string): void
  type (req: IncomingMessage): any // eslint-disable-line @typescript-eslint/no-explicit-any -- as @types/body-parser: any truthy value
}

/**
 * The `verify` option: called with the raw (inflated) body before it is decoded; throw to reject the body
 * with 403. `encoding` is the charset the body will be decoded with (`raw()` passes `null`, as body-parser
 * does; the parameter is typed `string` as in @types/body-parser).
 */
export type VerifyCallback = Callbacks['verify']

/** The `type` option: media types, extension names, wildcards and `+suffix` forms, a list of these, or a predicate. */
export type TypeOption = string | readonly string[] | Callbacks['type']

/**
 * `verify` as the pipeline calls it (with `null` for raw bodies).
 * @internal
 */
export type VerifyFunction = (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string | null) => void

/**
 * A schema in the Standard Schema v1 shape (`~standard`, version 1), as zod 3.24+ and 4, valibot 1, arktype 2,
 * effect Schema and others implement it. Declared here rather than imported, so that bodykit's declarations
 * need no other package (README, Dependencies); it is the published interface, structurally.
 */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  /** The library's side of the interface. */
  readonly '~standard': StandardSchemaV1.Props<Input, Output>
}

// The namespace is the shape the Standard Schema interface is published in.
export declare namespace StandardSchemaV1 {
  /** What a schema's `~standard` property holds. */
  interface Props<Input = unknown, Output = Input> {
    /** Always 1 for this version of the interface. */
    readonly version: 1
    /** The schema library's name (`'zod'`, `'valibot'`, `'arktype'`...). */
    readonly vendor: string
    /** Checks a value: the output on success, issues on failure; either may come as a promise. */
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>
    /** The input and output types, for type inference only (there is no such value at run time). */
    readonly types?: Types<Input, Output> | undefined
  }
  /** What `validate` returns. */
  type Result<Output> = SuccessResult<Output> | FailureResult
  /** A passed check: the output, with defaults and transforms applied. */
  interface SuccessResult<Output> {
    readonly value: Output
    readonly issues?: undefined
  }
  /** A failed check: what was wrong. */
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>
  }
  /** One thing wrong with the value. */
  interface Issue {
    readonly message: string
    /** Where in the value: keys and indexes from the top, bare or as `{ key }`. */
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined
  }
  /** A step of an issue's path as an object. */
  interface PathSegment {
    readonly key: PropertyKey
  }
  /** The types a schema carries for inference. */
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input
    readonly output: Output
  }
}

/** Options every parser accepts. */
export interface BaseOptions {
  /**
   * Inflate gzip, deflate (and, in the default entry, br and zstd) bodies; when false such bodies get 415.
   * @default true
   */
  inflate?: boolean | undefined
  /**
   * Maximum body size: a number of bytes or a string for the `bytes` module (`'100kb'`, `'1mb'`).
   * @default '100kb'
   */
  limit?: number | string | undefined
  /**
   * Which requests to parse: a media type (`'application/json'`), an extension name (`'json'`), a wildcard
   * (`'*\/*'`, `'application/*'`, `'+json'`), a list of these, or a function of the request.
   */
  type?: TypeOption | undefined
  /** Called as `verify(req, res, buf, encoding)` before parsing; throwing rejects the body (403). */
  verify?: VerifyCallback | undefined
  /**
   * Keep the body's bytes on `req.rawBody` (a Buffer, after inflation: the one `verify` gets, not a copy)
   * whenever the body was read in full, also when `verify` or parsing then fails. Nothing is set on a
   * request the parser skipped. For webhook signatures; type the request with {@link RawBodyRequest}.
   * @default false
   */
  rawBody?: boolean | undefined
  /**
   * After answering with an error (a 413, a 415...), at most this much of the rest of the body is read and
   * thrown away, so that a client that reads the response only once its upload is done still gets it; past
   * it the connection is closed. A body declared larger is not read at all. Bytes, or a string for the
   * `bytes` module; `Infinity` reads everything, as body-parser does.
   * @default '64mb'
   */
  discardLimit?: number | string | undefined
  /**
   * How long (milliseconds, from the answer) the rest of a refused body may take to arrive within
   * `discardLimit`; a body that stalls for 5 s is given up on earlier. Raise it for slow uplinks.
   * @default 30000
   */
  discardTime?: number | undefined
  /**
   * A Standard Schema v1 (zod, valibot, arktype...) the body must pass: when the middleware calls `next()`
   * without an error, `req.body` is the schema's output (defaults and transforms applied). It also checks
   * `req.body` as it is when nothing was parsed (no body, another Content-Type, a body read earlier), so a
   * schema that refuses `undefined` makes the body required. A refused body gives 400
   * `entity.validation.failed` with the schema's `issues`; a `validate` that throws or rejects passes that
   * error to `next` as a 500 (its own `status`, if it has one, is kept).
   * @default undefined (no check; `req.body` is typed `any`, as without bodykit)
   */
  schema?: StandardSchemaV1 | undefined
  /**
   * Read an HTTP/2 request body sent without `Content-Length` (a request has a body unless its HEADERS frame
   * ended the stream). false: such a request counts as having no body, as in body-parser, and its stream is left
   * to the app. HTTP/1.x is not affected.
   * @default true in `bodykit`; false in `bodykit/legacy` (body-parser 1.x's answer)
   */
  readHttp2WithoutLength?: boolean | undefined
}

/**
 * A request a parser with `rawBody: true` may have read: `rawBody` holds the body's bytes as read (inflated,
 * before decoding). Wraps any request type, e.g. `RawBodyRequest<express.Request>`; no global type changes.
 */
export type RawBodyRequest<T extends IncomingMessage = IncomingMessage> = T & { rawBody?: Buffer | undefined }

/**
 * What json() does with a prototype-poisoning key: `'ignore'` keeps it (body-parser's behaviour),
 * `'remove'` deletes it, `'error'` refuses the body with 400 `entity.parse.failed`.
 */
export type PoisoningAction = 'ignore' | 'remove' | 'error'

/** Options of `json()`. */
export interface JsonOptions extends BaseOptions {
  /** Passed as the second argument of `JSON.parse`, e.g. `(key, value) => key === 'at' ? new Date(value) : value`. */
  reviver?: ((key: string, value: any) => any) | undefined // eslint-disable-line @typescript-eslint/no-explicit-any -- as @types/body-parser, so `new Date(value)` compiles
  /**
   * Accept only objects and arrays at the top level.
   * @default true
   */
  strict?: boolean | undefined
  /**
   * Charset used when the Content-Type has none (default entry only; it must be a `utf-*` charset).
   * @default 'utf-8'
   */
  defaultCharset?: string | undefined
  /**
   * What to do with an own `__proto__` key anywhere in the parsed body (after `reviver`): keep it, remove
   * it, or refuse the body with 400 `entity.parse.failed`. Such a key is harmless in `req.body` itself
   * but replaces the prototype when code merges or copies the body into another object.
   * @default 'ignore'
   */
  onProtoPoisoning?: PoisoningAction | undefined
  /**
   * What to do with a `constructor` key whose value is an object with a `prototype` key, anywhere in the
   * parsed body (after `reviver`): keep it, remove it, or refuse the body with 400 `entity.parse.failed`.
   * @default 'ignore'
   */
  onConstructorPoisoning?: PoisoningAction | undefined
}

/** Options of `raw()`. */
export type RawOptions = BaseOptions

/** Options of `text()`. */
export interface TextOptions extends BaseOptions {
  /**
   * Charset used when the Content-Type has none.
   * @default 'utf-8'
   */
  defaultCharset?: string | undefined
}

/** Options of `urlencoded()` in the legacy entry (body-parser 1.x). */
export interface LegacyUrlencodedOptions extends BaseOptions {
  /**
   * true: qs's nested syntax (`a[b]=1`); false: flat pairs like Node's querystring.
   * @default true (deprecated: pass it explicitly)
   */
  extended?: boolean | undefined
  /**
   * Maximum number of parameters; more gives 413 `parameters.too.many`.
   * @default 1000
   */
  parameterLimit?: number | undefined
  /**
   * Maximum nesting depth in extended mode; deeper input gives 400 `querystring.parse.rangeError`.
   * @default 32
   */
  depth?: number | undefined
}

/** Options of `urlencoded()` in the default entry (body-parser 2.x). */
export interface UrlencodedOptions extends LegacyUrlencodedOptions {
  /**
   * true: qs's nested syntax (`a[b]=1`); false: flat pairs.
   * @default false
   */
  extended?: boolean | undefined
  /**
   * Charset used when the Content-Type has none: `'utf-8'` or `'iso-8859-1'`.
   * @default 'utf-8'
   */
  defaultCharset?: 'utf-8' | 'iso-8859-1' | (string & Record<never, never>) | undefined
  /**
   * Let a `utf8` form field (`utf8=✓`) choose between utf-8 and iso-8859-1; the field is then dropped.
   * @default false
   */
  charsetSentinel?: boolean | undefined
  /**
   * Decode `&#9786;`-style numeric entities in iso-8859-1 forms.
   * @default false
   */
  interpretNumericEntities?: boolean | undefined
}

/** Where `multipart()` keeps the files it accepts, and how many and how large they may be. */
export interface FilesOptions {
  /**
   * `'memory'`: each file is a Buffer (`buffer`). `'disk'`: each file is written to `directory` as it arrives,
   * under a random name (`path`), and removed when the response has finished unless the handler moved it.
   * @default 'memory'
   */
  storage?: 'memory' | 'disk' | undefined
  /**
   * The folder disk files are written to (it must exist).
   * @default os.tmpdir()
   */
  directory?: string | undefined
  /**
   * Maximum size of one file: bytes, or a string for the `bytes` module; more gives 413 `multipart.file.too.large`.
   * @default '10mb'
   */
  fileSizeLimit?: number | string | undefined
  /**
   * Maximum number of files; more gives 413 `multipart.files.too.many`.
   * @default 10
   */
  fileLimit?: number | undefined
  /**
   * The field names that may carry files; a file in any other field gives 400 `multipart.file.unexpected`.
   * @default undefined (any field)
   */
  fieldNames?: readonly string[] | undefined
}

/**
 * Options of `multipart()`. `limit` bounds the whole body (after inflation): `'100kb'` by default while files
 * are off; with files on, `fileLimit` × `fileSizeLimit` + 1 MiB (101 MiB with the default file limits).
 * `verify` and `rawBody` are not taken: the body is read as a stream and never held whole.
 */
export interface MultipartOptions extends Omit<BaseOptions, 'verify' | 'rawBody'> {
  /**
   * true: field names nest as urlencoded's extended mode does (`a[b][]`, qs); false: flat, repeated names become arrays.
   * @default false
   */
  extended?: boolean | undefined
  /**
   * Maximum number of fields (file parts aside); more gives 413 `multipart.fields.too.many`.
   * @default 1000
   */
  parameterLimit?: number | undefined
  /**
   * Maximum nesting depth of field names in extended mode; deeper gives 400 `querystring.parse.rangeError`.
   * @default 32
   */
  depth?: number | undefined
  /**
   * Charset of field values whose part declares none, when the form has no `_charset_` field.
   * @default 'utf-8'
   */
  defaultCharset?: string | undefined
  /**
   * Maximum number of parts (fields, files and parts without a name); more gives 413 `multipart.parts.too.many`.
   * @default 1000
   */
  partLimit?: number | undefined
  /**
   * Maximum size of one field's value: bytes, or a string for the `bytes` module; more gives 413 `multipart.field.too.large`.
   * @default '1mb'
   */
  fieldSizeLimit?: number | string | undefined
  /**
   * Maximum size of a field name in bytes; more gives 413 `multipart.field.name.too.large`.
   * @default 256
   */
  fieldNameSizeLimit?: number | string | undefined
  /**
   * Accept files: `true` for the defaults of {@link FilesOptions}, or those options. Off, a file part gives 400
   * `multipart.file.unexpected` (never dropped silently).
   * @default false
   */
  files?: boolean | FilesOptions | undefined
}

/** What the promise API takes besides a parser's options. */
export interface ReadOptions {
  /**
   * The response, when there is one: passed to `verify`, and used as the middlewares use it, to close the
   * connection (`Connection: close`) after the answer when a refused body is too large to read off.
   * Without it, `verify` gets `undefined` and such a connection is left to the server's timeouts.
   */
  res?: ServerResponse | undefined
}

/** Options of {@link readJson}: those of `json()` and `res`. */
export type ReadJsonOptions = JsonOptions & ReadOptions
/** Options of {@link readRaw}: those of `raw()` and `res`. */
export type ReadRawOptions = RawOptions & ReadOptions
/** Options of {@link readText}: those of `text()` and `res`. */
export type ReadTextOptions = TextOptions & ReadOptions
/** Options of {@link readUrlencoded}: those of `urlencoded()` and `res`. */
export type ReadUrlencodedOptions = UrlencodedOptions & ReadOptions
/** Options of {@link readMultipart}: those of `multipart()` and `res` (with it, disk files are removed once the response has finished). */
export type ReadMultipartOptions = MultipartOptions & ReadOptions

/**
 * The request-independent settings every parser shares, validated.
 * @internal
 */
export interface CommonSettings {
  readonly inflate: boolean
  readonly limit: number
  readonly type: TypeOption | undefined
  readonly verify: VerifyFunction | false
  readonly rawBody: boolean
  readonly defaultCharset: string | undefined
  readonly discard: DiscardBudget
  /** The schema's `~standard` object (its `validate` is called as a method of it), or null without `schema`. */
  readonly schema: StandardSchemaV1.Props | null
  /** `readHttp2WithoutLength` as given, or undefined: then the variant's default. */
  readonly readHttp2WithoutLength: boolean | undefined
}

/**
 * Loosely typed options as callers may really pass them (JavaScript callers, `null`).
 * @internal
 */
export type AnyOptions = Record<string, unknown> | null | undefined

const DEFAULT_LIMIT = 102400

/**
 * How much of an abandoned body bodykit reads off after answering with an error (options `discardLimit`, `discardTime`).
 * @internal
 */
export interface DiscardBudget {
  /** Bytes read and thrown away at most; a body declared larger is not read at all. */
  readonly bytes: number
  /** Milliseconds, from the answer, after which reading stops however the body arrives. */
  readonly ms: number
}

/**
 * The default budget. 64 MiB: a 50 MiB upload from a client that reads the response only once its upload is
 * done (browsers, python's http.client) still ends with the client holding the response; discarding 64 MiB
 * over loopback cost the server 0.15–0.22 s of CPU on the bench machine. 30 s: nginx's `lingering_time`.
 * @internal
 */
export const DEFAULT_DISCARD: DiscardBudget = { bytes: 64 * 1024 * 1024, ms: 30_000 }

/**
 * Validates the options every parser shares; throws body-parser's TypeErrors for bad values.
 * @internal
 */
export function normalizeCommonOptions (options: AnyOptions): CommonSettings {
  const given = options ?? {}
  // Security (GHSA-v422-hmwv-36x6): a limit `bytes` cannot read must fail here, never mean "no limit".
  const limit = given.limit === undefined || given.limit === null
    ? DEFAULT_LIMIT
    : bytes.parse(given.limit as string | number)
  if (limit === null || Number.isNaN(limit)) {
    throw new TypeError('option limit "' + String(given.limit) + '" is invalid')
  }
  const verify = given.verify || false
  if (verify !== false && typeof verify !== 'function') {
    throw new TypeError('option verify must be function')
  }
  // bodykit's own options are checked strictly: they have no body-parser coercions to keep.
  if (given.rawBody !== undefined && typeof given.rawBody !== 'boolean') {
    throw new TypeError('option rawBody must be a boolean')
  }
  if (given.readHttp2WithoutLength !== undefined && typeof given.readHttp2WithoutLength !== 'boolean') {
    throw new TypeError('option readHttp2WithoutLength must be a boolean')
  }
  return {
    discard: normalizeDiscard(given),
    inflate: given.inflate !== false,
    limit,
    type: (given.type || undefined) as TypeOption | undefined,
    verify: verify as VerifyFunction | false,
    rawBody: given.rawBody === true,
    defaultCharset: (given.defaultCharset || undefined) as string | undefined,
    schema: normalizeSchema(given.schema),
    readHttp2WithoutLength: given.readHttp2WithoutLength as boolean | undefined
  }
}

/**
 * The `~standard` object of a Standard Schema v1, read once; anything else throws.
 * @internal
 */
export function normalizeSchema (schema: unknown): StandardSchemaV1.Props | null {
  if (schema === undefined) return null
  // arktype's types are functions, the other libraries' schemas objects.
  const standard = (typeof schema === 'object' || typeof schema === 'function') && schema !== null
    ? (schema as Partial<StandardSchemaV1>)['~standard']
    : undefined
  if (typeof standard !== 'object' || standard === null || standard.version !== 1 || typeof standard.validate !== 'function') {
    throw new TypeError('option schema must be a Standard Schema (a "~standard" property of version 1 with a validate function)')
  }
  return standard
}

/** The longest delay a Node timer takes (about 24.8 days); a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1

/** The after-error read-off budget; a value that is not a size or a duration throws, never meaning "no bound". */
function normalizeDiscard (given: Record<string, unknown>): DiscardBudget {
  const { discardLimit, discardTime } = given
  const bytesLimit = discardLimit === undefined || discardLimit === null
    ? DEFAULT_DISCARD.bytes
    : bytes.parse(discardLimit as string | number)
  if (typeof bytesLimit !== 'number' || !(bytesLimit >= 0)) {
    throw new TypeError('option discardLimit "' + String(discardLimit) + '" is invalid')
  }
  const ms = discardTime === undefined || discardTime === null ? DEFAULT_DISCARD.ms : discardTime
  if (typeof ms !== 'number' || !(ms >= 0)) {
    throw new TypeError('option discardTime must be a zero or a positive number')
  }
  // A longer time (Infinity) means as long as a timer can wait, not a timer that fires at once.
  return { bytes: bytesLimit, ms: Math.min(ms, MAX_TIMER_MS) }
}

/**
 * A reader's settings for each options object, validated on its first read and kept while the object lives, so that a
 * shared object is validated once; no options share one settings, other values are validated each time. Used by the
 * Node build's readers and the Web build's.
 * @internal
 */
export function settingsPerOptions<Settings> (create: (options: AnyOptions) => Settings): (options: AnyOptions) => Settings {
  const cache = new WeakMap<object, Settings>()
  let defaults: Settings | undefined
  return function settingsFor (options) {
    if (options == null) return (defaults ??= create(options))
    // Loosely typed callers may pass anything the factories accept; only objects can be cached.
    if (typeof options !== 'object') return create(options)
    let settings = cache.get(options)
    if (settings === undefined) {
      settings = create(options)
      cache.set(options, settings)
    }
    return settings
  }
}
