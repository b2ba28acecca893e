// bodykit/koa's public types: the options of both dialects and bodykit's own, the Koa context as the middleware uses it, the middleware.
// Its declarations are published: it may import only `node:*` types and ../options, and declares types only.
import type { IncomingMessage, ServerResponse } from 'http'
import type { Readable } from 'stream'
import type { PoisoningAction, StandardSchemaV1 } from '../options'

/** The kinds of body the Koa parsers know, as `enableTypes` and `extendTypes` name them. */
export type KoaBodyType = 'json' | 'form' | 'text' | 'xml'

/**
 * A Koa request as `bodyParser()` uses it: what it reads (`is`) and what it sets. Koa 2's and 3's have it, and so
 * has @types/koa's `Request`.
 */
export interface KoaRequest {
  /** The parsed body, once the middleware has run (`{}` when no enabled type matched). */
  body?: unknown
  /** The body as the text it was decoded to (unset when nothing was read). */
  rawBody?: string | undefined
  /** **bodykit only**, with `rawBuffer: true`: the body's bytes, inflated, before decoding. */
  rawBuffer?: Buffer | undefined
  /** Koa's `ctx.request.is()`: the matching type, or false, or null when the request has no body. */
  is (types: string[]): string | false | null
}

/**
 * A Koa context as `bodyParser()` uses it. Koa 2's and 3's `ctx` (and @types/koa's `Context`) have all of it, so the
 * middleware needs no Koa types and loads without Koa.
 */
export interface KoaContext {
  /** Node's request: the body is read from it; with `patchNode`, `body` and `rawBody` are set on it too. */
  req: IncomingMessage & { body?: unknown, rawBody?: unknown }
  /** Node's response: lets bodykit close a connection whose refused body is too large to read off. */
  res: ServerResponse
  method: string
  status: number
  body: unknown
  request: KoaRequest
  /** Set to true by an earlier middleware to leave this request alone. */
  disableBodyParser?: boolean | undefined
}

/** The middleware `bodyParser()` returns: `app.use(bodyParser())`. */
export type KoaMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<void>

// Callbacks are declared as methods, then taken by indexed access: TypeScript checks method parameters
// bivariantly, so a callback typed with Koa's `Context` is accepted.
interface Callbacks {
  detectJSON (ctx: KoaContext): unknown
  onError (err: Error, ctx: KoaContext): void
}

/** `detectJSON`: whether to read this request as JSON whatever its Content-Type says. */
export type DetectJson = Callbacks['detectJSON']

/** `onerror` (koa-bodyparser 4) or `onError` (@koa/bodyparser 6): handles a refused body instead of throwing it. */
export type ErrorHandler = Callbacks['onError']

/**
 * Options of `bodyParser()`: koa-bodyparser 4's and @koa/bodyparser 6's, and bodykit's own. Giving any option only
 * @koa/bodyparser 6 has (`jsonStrict`, `onError`, `patchNode`, `enableRawChecking`, `parsedMethods`) picks its
 * behaviour; otherwise it is koa-bodyparser 4's. An option only one of them has cannot be mixed with the other's.
 */
export interface KoaBodyParserOptions {
  /**
   * The kinds of body read: any of `'json'`, `'form'`, `'text'` (`text/plain`) and `'xml'` (read as text).
   * Another name throws `UnsupportedBodyTypeError`.
   * @default ['json', 'form']
   */
  enableTypes?: readonly string[] | undefined
  /**
   * The charset every body is decoded with (the Content-Type's charset is not read, unless `checkCharset`).
   * @default 'utf-8'
   */
  encoding?: string | undefined
  /**
   * Maximum JSON body, after inflation: bytes or a `bytes` string; a body over it is 413 `request entity too large`.
   * @default '1mb'
   */
  jsonLimit?: number | string | undefined
  /**
   * Maximum form body, after inflation.
   * @default '56kb'
   */
  formLimit?: number | string | undefined
  /**
   * Maximum text body, after inflation.
   * @default '1mb'
   */
  textLimit?: number | string | undefined
  /**
   * Maximum XML body, after inflation.
   * @default '1mb'
   */
  xmlLimit?: number | string | undefined
  /** Read a request as JSON when this returns a truthy value, whatever its Content-Type. */
  detectJSON?: DetectJson | undefined
  /**
   * More media types per kind: koa-bodyparser 4 adds them to the defaults (a string or a list); @koa/bodyparser 6
   * takes lists only and writes them over the defaults from the first one on.
   */
  extendTypes?: { [kind in KoaBodyType]?: string | readonly string[] | undefined } | undefined

  /**
   * koa-bodyparser 4: accept only an object or an array as JSON (else 400); false also gives `''` for an empty body.
   * @default true
   */
  strict?: boolean | undefined
  /**
   * koa-bodyparser 4: called with a refused body's error instead of throwing it; the next middleware runs after it (after
   * the promise it returns, if any: a rejection is then the request's error).
   */
  onerror?: ErrorHandler | undefined
  /**
   * koa-bodyparser 4: options of qs's `parse` for forms.
   * @default { allowDots: true }
   */
  queryString?: Record<string, unknown> | undefined
  /**
   * koa-bodyparser 4: what a `__proto__` key in a JSON body does: refuse the body (400), be removed, or stay.
   * @default 'error'
   */
  onProtoPoisoning?: PoisoningAction | undefined

  /**
   * @koa/bodyparser 6: accept only an object or an array as JSON (else 400); false also gives `''` for an empty body.
   * @default true
   */
  jsonStrict?: boolean | undefined
  /**
   * @koa/bodyparser 6: called with a refused body's error instead of throwing it; the next middleware runs after it
   * (after the promise it returns, if any: a rejection is then the request's error).
   */
  onError?: ErrorHandler | undefined
  /**
   * @koa/bodyparser 6: also set `ctx.req.body` and `ctx.req.rawBody`, and leave a request alone whose `ctx.req.body`
   * is set.
   * @default false
   */
  patchNode?: boolean | undefined
  /**
   * @koa/bodyparser 6: take `ctx.req.body`, when something set it, as the body instead of reading.
   * @default false
   */
  enableRawChecking?: boolean | undefined
  /**
   * @koa/bodyparser 6: the methods whose bodies are read (upper case); other requests are left alone, with no body.
   * @default ['POST', 'PUT', 'PATCH'] with @koa/bodyparser 6's options; every method with koa-bodyparser 4's
   */
  parsedMethods?: readonly string[] | undefined

  /**
   * **bodykit only.** Also keep the body's bytes (inflated, before decoding) as a Buffer on `ctx.request.rawBuffer`,
   * also when the body is then refused: what a webhook signature is computed over.
   * @default false
   */
  rawBuffer?: boolean | undefined
  /**
   * **bodykit only.** Decode with the Content-Type's charset (`encoding` when it names none), and refuse with 415
   * `charset.unsupported` one the kind cannot take: JSON `utf-*`, forms `utf-8` and `iso-8859-1`, text and XML any
   * charset bodykit knows. The libraries decode every body with `encoding`.
   * @default false
   */
  checkCharset?: boolean | undefined
  /**
   * **bodykit only.** Also inflate `Content-Encoding: zstd` (Node 22.15 and later; on an older Node this option
   * throws), with the limit on the inflated bytes. The libraries answer it 415.
   * @default false
   */
  inflateZstd?: boolean | undefined
  /**
   * **bodykit only.** What a `constructor` key holding a `prototype` in a JSON body does: stay, be removed, or
   * refuse the body (400).
   * @default 'ignore'
   */
  onConstructorPoisoning?: PoisoningAction | undefined
  /**
   * **bodykit only.** A Standard Schema v1 (zod, valibot, arktype...) `ctx.request.body` must pass once the
   * middleware ran: it becomes the schema's output; a refused body is 400 `entity.validation.failed`, given to
   * `onerror`/`onError` when there is one. Checked also when the middleware leaves the request unread (a body set
   * before, a method not parsed); not when `ctx.disableBodyParser` is set.
   */
  schema?: StandardSchemaV1 | undefined
  /**
   * **bodykit only.** After a refused body is answered, at most this much of the rest is read off before the
   * connection is closed (the libraries read it all).
   * @default '64mb'
   */
  discardLimit?: number | string | undefined
  /**
   * **bodykit only.** How long (ms) that read-off may take.
   * @default 30000
   */
  discardTime?: number | undefined
}


/** The methods koa-body's `parsedMethods` takes (its `HttpMethodEnum`'s values). */
export type KoaBodyMethod = 'POST' | 'GET' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD'

/**
 * An uploaded file as `koaBody({ multipart: true })` lists it on `ctx.request.files`, with the fields of formidable's
 * `PersistentFile` that koa-body users read. It is on disk, at `filepath`, once the middleware has run.
 */
export interface KoaBodyFile {
  /** Its size in bytes. */
  size: number
  /** Where it is: `uploadDir` joined with `newFilename`, or where `onFileBegin` put it. */
  filepath: string
  /**
   * The name it was stored under: what `filename` returned, else 32 random hex characters (and the client's
   * extension, with `keepExtensions`).
   */
  newFilename: string
  /** The client's file name (base name only): data to show, never a path to use. */
  originalFilename: string | null
  /** The part's Content-Type (`application/octet-stream` when it had none). */
  mimetype: string | null
  /** When it was stored; null for an empty file (formidable sets it on its first write). */
  lastModifiedDate: Date | null
  /** formidable's `hashAlgorithm` option: the algorithm of `hash`, or false. */
  hashAlgorithm: string | false
  /** The file's hash in hex, with `hashAlgorithm` (null until the file is written, and without it). */
  hash: string | null
  /** The fields formidable's `toJSON()` gives (`mtime` is `lastModifiedDate`; `hash` only with `hashAlgorithm`). */
  toJSON (): { size: number, filepath: string, newFilename: string, mimetype: string | null, mtime: Date | null, originalFilename: string | null, hash?: string }
}

/** `ctx.request.files`: the files by field name, one file or, when the field repeats, an array of them. */
export type KoaBodyFiles = Record<string, KoaBodyFile | KoaBodyFile[]>

/**
 * A part of a form as formidable's hooks get it: a stream of its bytes, with its field name, the client's file name
 * (null for a field) and its Content-Type (null for a field).
 */
export interface KoaBodyPart extends Readable {
  name: string
  originalFilename: string | null
  mimetype: string | null
}

// Declared as methods, then taken by indexed access, as the callbacks above.
interface KoaBodyCallbacks {
  onFileBegin (name: string, file: KoaBodyFile): unknown
  onPart (part: KoaBodyPart, handlePart: (part: KoaBodyPart) => void): unknown
  filter (part: KoaBodyPart): unknown
  filename (name: string, ext: string, part: KoaBodyPart, form: undefined): string
}

/**
 * formidable's `onFileBegin`: called with each file's field name and file before its first byte is written; a
 * `filepath` it sets is where the file is written.
 */
export type OnFileBegin = KoaBodyCallbacks['onFileBegin']
/** koa-body's `onPart`: called with each part (fields too); `handlePart(part)` reads it as koaBody() would, else it is yours. */
export type OnPart = KoaBodyCallbacks['onPart']
/** formidable's `filter`: called with each file part; a falsy answer skips the file. */
export type FileFilter = KoaBodyCallbacks['filter']
/** formidable's `filename`: the file's `newFilename` in `uploadDir`, from the client's name and extension. */
export type FileNamer = KoaBodyCallbacks['filename']

/**
 * The `formidable` options of `koaBody()` bodykit reads; any other formidable option throws a TypeError when the
 * middleware is created. Limits are bodykit's finite defaults, not formidable's (docs/koa.md).
 */
export interface KoaBodyFormidableOptions {
  /**
   * The folder files are written to (it must exist).
   * @default os.tmpdir()
   */
  uploadDir?: string | undefined
  /**
   * Maximum size of one file in bytes; more is 413 `multipart.file.too.large`. (formidable: 200 MiB.)
   * @default 10485760 (10 MiB)
   */
  maxFileSize?: number | undefined
  /**
   * Maximum number of files; more is 413 `multipart.files.too.many`. (formidable: Infinity.)
   * @default 10
   */
  maxFiles?: number | undefined
  /**
   * Maximum number of fields; more is 413 `multipart.fields.too.many`.
   * @default 1000
   */
  maxFields?: number | undefined
  /**
   * Keep the extension of the client's file name (formidable's filtering: from the first dot, up to the first
   * character other than a letter, digit or dot) on `newFilename`.
   * @default false
   */
  keepExtensions?: boolean | undefined
  /**
   * Maximum size of all files together, in bytes; more is 413 `multipart.files.too.large`.
   * @default maxFileSize (as formidable's)
   */
  maxTotalFileSize?: number | undefined
  /**
   * Maximum size of all fields together, in bytes; more is 413 `multipart.fields.too.large`.
   * @default 20971520 (20 MiB, as formidable's)
   */
  maxFieldsSize?: number | undefined
  /**
   * Hash each file with this node:crypto algorithm (`'sha1'`, `'md5'`, `'sha256'`...) into its `hash`, in hex.
   * @default false
   */
  hashAlgorithm?: string | false | undefined
  /**
   * Called with each part (fields too) as it begins; call `handlePart(part)` before it returns for koaBody() to read
   * the part, or read the part yourself. A part neither handed back nor read is dropped. A throw or a rejection is the
   * request's error, every file removed.
   */
  onPart?: OnPart | undefined
  /** Called with each file part before it is counted or stored; a falsy answer skips the file (it is read off). */
  filter?: FileFilter | undefined
  /**
   * The name to store a file under, in `uploadDir`: called with the client's name and extension (the extension only
   * with `keepExtensions`; `'invalid-name'` when the client sent none), the part, and undefined for formidable's form.
   * A name with a `..` segment (one that could leave `uploadDir`) is stored as `invalid-name` there, as formidable
   * stores a name that leaves it.
   */
  filename?: FileNamer | undefined
  /**
   * Called for each file before its first byte is written: a `filepath` it sets is where the file is written. A
   * promise it returns is waited for first; a throw or a rejection is the request's error, every file removed.
   */
  onFileBegin?: OnFileBegin | undefined
  /** Ignored: koa-body always passes `multiples: true`, and fields and files are always one value or an array. */
  multiples?: boolean | undefined
  /**
   * Only `true` is taken: empty files (a browser's file input left empty) are always kept, with `size` 0; formidable
   * refuses a form with one unless this is true and `minFileSize` is 0.
   * @default true
   */
  allowEmptyFiles?: true | undefined
  /**
   * Only `0` is taken: files of any size are kept (formidable's default is 1, which refuses empty files too).
   * @default 0
   */
  minFileSize?: 0 | undefined
}

/** Options of `koaBody()`: koa-body 7's and 8's, and bodykit's read-off bounds. */
export interface KoaBodyOptions {
  /**
   * Set `ctx.request.body` (and `ctx.request.files`, `ctx.request.rawBody`).
   * @default true
   */
  patchKoa?: boolean | undefined
  /**
   * Also set `ctx.req.body` (and `ctx.req.files`, `ctx.req.rawBody`).
   * @default false
   */
  patchNode?: boolean | undefined
  /**
   * Maximum JSON body, after inflation: bytes or a `bytes` string; over it is 413 `request entity too large`.
   * @default '1mb'
   */
  jsonLimit?: number | string | undefined
  /**
   * Maximum form body, after inflation.
   * @default '56kb'
   */
  formLimit?: number | string | undefined
  /**
   * Maximum text body, after inflation.
   * @default '56kb'
   */
  textLimit?: number | string | undefined
  /**
   * The charset JSON, form and text bodies are decoded with (the Content-Type's charset is not read).
   * @default 'utf-8'
   */
  encoding?: string | undefined
  /**
   * Read `multipart/form-data` bodies: fields to `ctx.request.body`, files to `ctx.request.files`.
   * @default false
   */
  multipart?: boolean | undefined
  /**
   * Read form bodies.
   * @default true
   */
  urlencoded?: boolean | undefined
  /**
   * Read text bodies.
   * @default true
   */
  text?: boolean | undefined
  /**
   * Read JSON bodies.
   * @default true
   */
  json?: boolean | undefined
  /**
   * Accept only an object or an array as JSON (else 400); false also gives `''` for an empty body.
   * @default true
   */
  jsonStrict?: boolean | undefined
  /**
   * The types read as JSON, as `ctx.is()` takes them.
   * @default ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json']
   */
  jsonTypes?: readonly string[] | undefined
  /**
   * The types read as forms.
   * @default ['urlencoded']
   */
  urlencodedTypes?: readonly string[] | undefined
  /**
   * The types read as text.
   * @default ['text/*']
   */
  textTypes?: readonly string[] | undefined
  /**
   * The types read as multipart forms.
   * @default ['multipart']
   */
  multipartTypes?: readonly string[] | undefined
  /**
   * Also set `ctx.request.rawBody` to the text a JSON, form or text body was decoded to.
   * @default false
   */
  includeUnparsed?: boolean | undefined
  /**
   * The methods whose bodies are read (`HttpMethodEnum` values or their strings); other requests are left alone.
   * @default ['POST', 'PUT', 'PATCH']
   */
  parsedMethods?: readonly KoaBodyMethod[] | undefined
  /** Options for multipart forms: the formidable options bodykit reads. */
  formidable?: KoaBodyFormidableOptions | undefined
  /**
   * Called with a refused body's error instead of throwing it; the next middleware runs after it (after the promise it
   * returns, if any: a rejection is then the request's error).
   */
  onError?: ErrorHandler | undefined
  /**
   * Options of qs's `parse` for forms.
   * @default { allowDots: true }
   */
  queryString?: Record<string, unknown> | undefined
  /**
   * **bodykit only.** After a refused body is answered, at most this much of the rest is read off before the
   * connection is closed.
   * @default '64mb'
   */
  discardLimit?: number | string | undefined
  /**
   * **bodykit only.** How long (ms) that read-off may take.
   * @default 30000
   */
  discardTime?: number | undefined
  /**
   * **bodykit only.** Remove a form's files once the response has finished, also after a successful one (a file the
   * handler moved away is left where it is). Without it, files are kept after a successful response, as koa-body
   * keeps them, and removed when the request fails.
   * @default false
   */
  removeFilesAfterResponse?: boolean | undefined
}

/** The middleware `koaBody()` returns. */
export type KoaBodyMiddleware = (ctx: KoaContext, next: () => Promise<unknown>) => Promise<unknown>
