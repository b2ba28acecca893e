// Entry `bodykit/multer`: multer 2.x's API (instances, storage engines, MulterError) as an adapter over the
// multipart stage of the one read.ts pipeline, with @types/multer's types and globals; the rules live in src/multer/policy.ts.
import type { IncomingMessage } from 'http'
import type { Readable } from 'stream'
import { createStreamSettings } from './stream-settings'
import { readBody, type NextFunction } from './read'
import type { StreamParserDefinition } from './parsers/definition'
import type { AnyOptions } from './options'
import { createMultipartStage } from './multipart/part-reader'
import { MulterError as MulterErrorClass } from './multer/multer-error'
import { bindToCaller, createMulterPolicy, validateLimits, type FileFilter, type FileStrategy, type MulterLimits, type MulterSetup } from './multer/policy'
import { diskStorage as createDiskStorage, memoryStorage as createMemoryStorage, type StorageEngine as Engine } from './multer/storage'
import type * as Types from './types'
import { multerVariant } from './multer/variant'
import type { BodyRequest } from './variant'

// The globals @types/multer declares, with the same types, so that both merge when an app has both.
declare global {
  namespace Express {
    namespace Multer {
      /** A file multer read: what fileFilter and storage engines are given, and what `req.file` / `req.files` list. */
      interface File {
        /** The form field the file came in. */
        fieldname: string
        /** The file's name on the client (the base name unless `preservePath`): data to show, never a path to use. */
        originalname: string
        /**
         * The part's `Content-Transfer-Encoding` (`7bit` when it had none).
         * @deprecated since July 2015 (RFC 7578, section 4.7)
         */
        encoding: string
        /** The part's `Content-Type`. */
        mimetype: string
        /** Its size in bytes, once stored. */
        size: number
        /** The file's bytes as they arrive: only while a storage engine's `_handleFile` runs. */
        stream: Readable
        /** diskStorage only: the folder the file was written to. */
        destination: string
        /** diskStorage only: the file's name in `destination`. */
        filename: string
        /** diskStorage only: the file's full path. */
        path: string
        /** memoryStorage only: the file's bytes. */
        buffer: Buffer
      }
    }

    interface Request {
      /** The file `single()` read (undefined when the field had none). */
      file?: Multer.File | undefined
      /** The files of `array()` and `any()` (an array), or of `fields()` (arrays by field name). */
      files?:
        | { [fieldname: string]: Multer.File[] }
        | Multer.File[]
        | undefined
    }
  }
}

function allowAll (_req: BodyRequest, _file: unknown, callback: (error: Error | null, acceptFile?: boolean) => void): void {
  callback(null, true)
}

/** The reading every multer middleware shares: multipart/* only, no total limit (as multer), HTTP/2 bodies read. */
const COMMON_OPTIONS = { type: 'multipart', limit: Infinity } as AnyOptions

/** One multer instance: its options, read per request (as multer reads them). */
class Multer implements multer.Multer {
  storage: Engine
  limits: MulterSetup['limits']
  preservePath: boolean | undefined
  defParamCharset: string
  defCharset: string | undefined
  highWaterMark: number | undefined
  fileHwm: number | undefined
  fileFilter: FileFilter

  constructor (options: multer.Options) {
    // The public types describe multer's contract; the policy and the engines work on their own, looser ones.
    if (options.storage) this.storage = options.storage as unknown as Engine
    else if (options.dest) this.storage = createDiskStorage({ destination: options.dest })
    else this.storage = createMemoryStorage()
    if (options.limits && typeof options.limits !== 'function') validateLimits(options.limits as MulterLimits)
    this.limits = options.limits as MulterSetup['limits']
    this.preservePath = options.preservePath
    this.defParamCharset = options.defParamCharset || 'latin1'
    this.defCharset = options.defCharset
    this.highWaterMark = options.highWaterMark
    this.fileHwm = options.fileHwm
    this.fileFilter = (options.fileFilter as FileFilter | undefined) || allowAll
    if (options.streamHandler !== undefined && typeof options.streamHandler !== 'function') {
      throw new TypeError('Expected streamHandler to be a function')
    }
    if (options.streamHandler !== undefined) {
      // The pipeline reads the request itself (limits, read-off, HTTP/2): a body fed from elsewhere would bypass it.
      throw new TypeError('option streamHandler is not supported by bodykit/multer')
    }
  }

  /** One file from field `name`, on `req.file`. */
  single (name: string): Types.Middleware {
    return this.makeMiddleware([{ name, maxCount: 1 }], 'VALUE')
  }

  /** Files from field `name` on `req.files`; more than `maxCount` is `LIMIT_UNEXPECTED_FILE`. */
  array (name: string, maxCount?: number): Types.Middleware {
    return this.makeMiddleware([{ name, maxCount }], 'ARRAY')
  }

  /** Files from the fields listed, on `req.files` by field name. */
  fields (fields: readonly multer.Field[]): Types.Middleware {
    return this.makeMiddleware(fields, 'OBJECT')
  }

  /** Fields only: any file is `LIMIT_UNEXPECTED_FILE`. */
  none (): Types.Middleware {
    return this.makeMiddleware([], 'NONE')
  }

  /** Every file, on `req.files`: use it only where the handler deals with every file. */
  any (): Types.Middleware {
    return createMiddleware(() => this.setup(this.fileFilter, 'ARRAY'))
  }

  private makeMiddleware (fields: readonly multer.Field[], strategy: FileStrategy): Types.Middleware {
    return createMiddleware(() => {
      // Per request: how many files each field may still take.
      const filesLeft: Record<string, number> = Object.create(null)
      for (const field of fields) filesLeft[field.name] = typeof field.maxCount === 'number' ? field.maxCount : Infinity
      const userFilter = this.fileFilter
      const fileFilter: FileFilter = (req, file, callback) => {
        if ((filesLeft[file.fieldname] || 0) <= 0) {
          return callback(new MulterErrorClass('LIMIT_UNEXPECTED_FILE', file.fieldname, file.originalname))
        }
        // Security (multer #1480): the slot is taken before the filter can wait, so parts of one chunk cannot all
        // pass; it is given back once if the file is refused or skipped.
        filesLeft[file.fieldname] -= 1
        let answered = false
        userFilter(req, file, (err, include) => {
          if (!answered) {
            answered = true
            if (err || !include) filesLeft[file.fieldname] += 1
          }
          callback(err, include)
        })
      }
      return this.setup(fileFilter, strategy)
    })
  }

  private setup (fileFilter: FileFilter, fileStrategy: FileStrategy): MulterSetup {
    return {
      limits: this.limits,
      preservePath: this.preservePath,
      defParamCharset: this.defParamCharset,
      defCharset: this.defCharset,
      highWaterMark: this.highWaterMark,
      fileHwm: this.fileHwm,
      storage: this.storage,
      fileFilter,
      fileStrategy
    }
  }
}

/** A multer middleware: the pipeline, with the multer policy as its multipart stage. */
function createMiddleware (setup: () => MulterSetup): Types.Middleware {
  const definition: StreamParserDefinition = {
    name: 'multipart',
    defaultType: 'multipart',
    createStage: () => ({ stage: createMultipartStage(createMulterPolicy(setup)), defaultLimit: Infinity })
  }
  const settings = createStreamSettings(definition, COMMON_OPTIONS, multerVariant)
  return function multerMiddleware (req, res, next: NextFunction) {
    readBody(settings, req, res, bindToCaller(next))
  }
}

/**
 * Creates a multer instance, as `require('multer')(options)` does: its `single()`, `array()`, `fields()`,
 * `none()` and `any()` make middlewares that read `multipart/form-data` bodies, fields into `req.body`
 * (nested as multer nests `a[b]`) and files into `req.file` or `req.files`. Files go to `options.storage`,
 * else to disk in `options.dest`, else to memory.
 * @example
 * const multer = require('bodykit/multer')
 * const upload = multer({ dest: 'uploads/', limits: { fileSize: 5 * 1024 * 1024, files: 1 } })
 * app.post('/profile', upload.single('avatar'), (req, res) => res.json(req.file))
 */
function multer (options?: multer.Options): multer.Multer {
  if (options === undefined) return new Multer({})
  if (typeof options === 'object' && options !== null) return new Multer(options)
  throw new TypeError('Expected object for argument options')
}

// The function merges with a namespace so `require('bodykit/multer')` is callable and carries multer's types,
// named as @types/multer names them. The namespace is ambient (no code): its values are assigned below.
declare namespace multer {
  /**
   * A multer instance: each method makes a middleware that reads `multipart/form-data` bodies, fields into
   * `req.body` and files as the method says; any other request passes through untouched.
   */
  export interface Multer {
    /**
     * Reads one file from field `fieldName` into `req.file`; a second file in it, or a file in another
     * field, is `MulterError('LIMIT_UNEXPECTED_FILE')`.
     * @example
     * app.post('/profile', upload.single('avatar'), (req, res) => res.json({ size: req.file?.size }))
     */
    single (fieldName: string): Middleware
    /**
     * Reads the files of field `fieldName` into `req.files` (an array); more than `maxCount`, or a file in
     * another field, is `MulterError('LIMIT_UNEXPECTED_FILE')`.
     * @param maxCount The most files the field may have (default: Infinity).
     */
    array (fieldName: string, maxCount?: number): Middleware
    /**
     * Reads the files of the fields listed into `req.files`, an object of arrays by field name; more than a
     * field's `maxCount`, or a file in a field not listed, is `MulterError('LIMIT_UNEXPECTED_FILE')`.
     * @example
     * upload.fields([{ name: 'avatar', maxCount: 1 }, { name: 'gallery', maxCount: 8 }])
     */
    fields (fields: readonly Field[]): Middleware
    /** Reads every file, whatever its field, into `req.files` (an array): use it only where the handler deals with every file. */
    any (): Middleware
    /** Reads fields only: any file is `MulterError('LIMIT_UNEXPECTED_FILE')`. */
    none (): Middleware
  }

  /**
   * The middleware a {@link Multer} makes: a connect/Express middleware, accepted by Express 4 and 5's
   * `app.post()` and `router.post()` (and assignable to their `RequestHandler`).
   */
  export type Middleware = Types.Middleware

  /**
   * The request fileFilter, storage engines, diskStorage's callbacks and a `limits` function are given: Node's
   * request with the global `Express.Request`'s members (`file`, `files`, and those other packages add, as
   * `user`), and Express's own (`body`, `params`, `query`, `get()`...) as `any`, since bodykit does not depend
   * on express. A callback declared with Express's `Request` type is accepted too.
   */
  export interface Request extends IncomingMessage, Express.Request {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    [member: string]: any
  }

  /** A file multer read (the global `Express.Multer.File`). */
  export type File = Express.Multer.File

  /**
   * Answers fileFilter: `callback(null, true)` stores the file, `callback(null, false)` skips it, and
   * `callback(error)` ends the upload with that error.
   */
  export interface FileFilterCallback {
    (error: Error): void
    (error: null, acceptFile: boolean): void
  }

  /**
   * Limits of one request (busboy's, which multer passes on, and multer's own on field names); each is a
   * non-negative integer or Infinity, anything else is a TypeError when the instance is made. A limit passed
   * is a {@link MulterError}, answered 413 by Express (multer's own: 500).
   */
  export interface Limits {
    /** The longest field name, in bytes (`LIMIT_FIELD_KEY`). @default 100 */
    fieldNameSize?: number | undefined
    /** The longest field value, in bytes (`LIMIT_FIELD_VALUE`). @default 1048576 */
    fieldSize?: number | undefined
    /** The most non-file fields (`LIMIT_FIELD_COUNT`). @default Infinity */
    fields?: number | undefined
    /** The most nesting levels of a field name: `a[b][c]` has 2 (`LIMIT_FIELD_NESTING`). @default Infinity */
    fieldNestingDepth?: number | undefined
    /** The largest array index in a field name: `a[3]` uses 3 (`LIMIT_FIELD_ARRAY_INDEX`). @default Infinity */
    fieldArrayIndexLimit?: number | undefined
    /** The largest file, in bytes (`LIMIT_FILE_SIZE`). @default Infinity */
    fileSize?: number | undefined
    /** The most files (`LIMIT_FILE_COUNT`). @default Infinity */
    files?: number | undefined
    /** The most parts, fields and files together (`LIMIT_PART_COUNT`). @default Infinity */
    parts?: number | undefined
    /** The most header pairs of a part. @default 2000 */
    headerPairs?: number | undefined
  }

  /**
   * `limits` chosen per request (multer 2.5): called once per request, before the body is read; null or
   * undefined means no limits.
   * @example
   * multer({ limits: (req) => ({ fileSize: req.user?.isAdmin ? 100e6 : 5e6 }) })
   */
  export type LimitsFunction = { limits (req: Request): Limits | null | undefined }['limits']

  /** Options of {@link multer}. */
  export interface Options {
    /**
     * Where files go: {@link diskStorage}, {@link memoryStorage} or a custom {@link StorageEngine}. Takes
     * precedence over `dest`.
     * @default memoryStorage() when `dest` is not set either
     */
    storage?: StorageEngine | undefined
    /**
     * A folder files are written to, with random names (created when the instance is made); ignored when
     * `storage` is set.
     */
    dest?: string | undefined
    /** Limits of each request, or a function of the request returning them (multer 2.5). @default no limits but busboy's */
    limits?: Limits | LimitsFunction | undefined
    /** Keep the client's full path in `originalname`, instead of its base name. @default false */
    preservePath?: boolean | undefined
    /** The charset of part header parameters (a file name) that do not declare one. @default 'latin1' */
    defParamCharset?: string | undefined
    /** The charset of text field values that do not declare one (multer 2.5). @default 'utf8' */
    defCharset?: string | undefined
    /** The `highWaterMark` of the multipart parser (multer 2.5). @default busboy's */
    highWaterMark?: number | undefined
    /** The `highWaterMark` of each file's `stream` (multer 2.5). @default busboy's */
    fileHwm?: number | undefined
    /**
     * multer 2.5's hook to feed the body to the parser from elsewhere: not supported (bodykit reads the
     * request itself, with its limits), so any value but undefined is a TypeError when the instance is made.
     */
    streamHandler?: undefined
    /**
     * Decides, for each file, whether it is stored: `callback(null, true)`, skipped: `callback(null, false)`,
     * or ends the upload: `callback(error)`. `file` has no `size`, `stream`, `path` or `buffer` yet.
     * @default every file is stored
     */
    fileFilter? (req: Request, file: Express.Multer.File, callback: FileFilterCallback): void
  }

  /**
   * Where files go: `_handleFile` stores `file.stream` and calls back with what to add to the file (e.g.
   * `{ path, size }`), and `_removeFile` undoes it when the upload fails after it.
   */
  export interface StorageEngine {
    /**
     * Stores the file: read `file.stream` to its end, then call back with the properties to merge into the
     * file (or with an error).
     */
    _handleFile (req: Request, file: Express.Multer.File, callback: (error?: any, info?: Partial<Express.Multer.File>) => void): void // eslint-disable-line @typescript-eslint/no-explicit-any
    /** Removes a file `_handleFile` stored: `file` has the properties it called back with. */
    _removeFile (req: Request, file: Express.Multer.File, callback: (error: Error | null) => void): void
  }

  /** Chooses the folder of a file for {@link diskStorage} (which does not create it): `callback(null, folder)`. */
  export type DestinationFunction = { destination (req: Request, file: Express.Multer.File, callback: (error: Error | null, destination: string) => void): void }['destination']

  /** Options of {@link diskStorage}. */
  export interface DiskStorageOptions {
    /**
     * The folder of each file: a path (created when the storage is made), or a function choosing it per file.
     * @default os.tmpdir()
     */
    destination?: string | DestinationFunction | undefined
    /**
     * Chooses a file's name in its folder: `callback(null, name)`. Never use `file.originalname` as it comes:
     * it is the client's.
     * @default 32 random hex characters (128 bits from the CSPRNG), with no extension
     */
    filename? (req: Request, file: Express.Multer.File, callback: (error: Error | null, filename: string) => void): void
    /** fsync each file before it is handed on (multer 2.5). @default false */
    flush?: boolean | undefined
  }

  /** A field of `fields()`. */
  export interface Field {
    /** The field name. */
    name: string
    /** The most files the field may have. @default Infinity */
    maxCount?: number | undefined
  }

  /** Every `code` of a {@link MulterError}: busboy's limits, multer's own rules on fields, and the storage's. */
  export type ErrorCode =
    | 'LIMIT_PART_COUNT'
    | 'LIMIT_FILE_SIZE'
    | 'LIMIT_FILE_COUNT'
    | 'LIMIT_FIELD_KEY'
    | 'LIMIT_FIELD_VALUE'
    | 'LIMIT_FIELD_COUNT'
    | 'LIMIT_UNEXPECTED_FILE'
    | 'MISSING_FIELD_NAME'
    | 'LIMIT_FIELD_NESTING'
    | 'LIMIT_FIELD_ARRAY_INDEX'
    | 'STREAM_DESTROYED'
    | 'INVALID_FIELD_NAME'

  /**
   * Files written to disk as they arrive: `destination`, `filename` and `path` are set on each.
   * @example
   * multer.diskStorage({ destination: 'uploads/', filename: (req, file, cb) => cb(null, crypto.randomUUID()) })
   */
  export function diskStorage (options?: DiskStorageOptions): StorageEngine

  /** Files kept in memory, as a Buffer on `buffer`: set `limits.fileSize` to bound them. */
  export function memoryStorage (): StorageEngine

  /**
   * An error of the upload (a limit passed, an unexpected file, a bad field name): check `err.code`. As
   * multer's, with `field` and `filename` where they apply; its `status` makes Express answer 413 or 400
   * (multer's own: 500).
   * @example
   * app.use((err, req, res, next) => err instanceof multer.MulterError ? res.status(err.status).send(err.code) : next(err))
   */
  export class MulterError extends Error {
    /** Makes the error of `code` (another string than an {@link ErrorCode}: message `Unknown error: <code>`). */
    constructor (code: ErrorCode | (string & Record<never, never>), field?: string, filename?: string)
    /** `'MulterError'`. */
    name: string
    /** What happened. */
    code: ErrorCode
    /** The code's message, as multer's (`'File too large'`...). */
    message: string
    /** The form field the error is about, when there is one. */
    field?: string | undefined
    /** The client's name of the file the error is about, when there is one. */
    filename?: string | undefined
    /** 413 for a limit passed, else 400, until assigned (an error handler may set its own, as Koa's does). */
    status: number
    /** The same as `status`, until assigned. */
    statusCode: number
  }
}

Object.assign(multer, { diskStorage: createDiskStorage, memoryStorage: createMemoryStorage, MulterError: MulterErrorClass })

export = multer

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { diskStorage } from 'bodykit/multer'` works.
const { diskStorage, memoryStorage, MulterError } = multer
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { diskStorage, memoryStorage, MulterError })
