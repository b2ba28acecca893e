// Entry `bodykit/multer`: multer 2.x's API (instances, storage engines, MulterError) as an adapter over the
// multipart stage of the one read.ts pipeline; multer's own rules live in src/multer/policy.ts.
import { createReadSettings } from './factories'
import { readBody, type NextFunction } from './read'
import type { StreamParserDefinition } from './parsers/multipart'
import type { AnyOptions } from './options'
import { createMultipartStage } from './multipart/part-reader'
import { MulterError } from './multer/multer-error'
import { bindToCaller, createMulterPolicy, validateLimits, type FileFilter, type FileStrategy, type MulterLimits, type MulterSetup } from './multer/policy'
import { diskStorage, memoryStorage, type StorageEngine } from './multer/storage'
import type { Middleware } from './types'
import { multer as multerVariant, type BodyRequest } from './variants'

/** multer's options. */
interface Options {
  dest?: string
  storage?: StorageEngine
  limits?: MulterLimits | ((req: BodyRequest) => MulterLimits | null | undefined)
  fileFilter?: FileFilter
  preservePath?: boolean
  defParamCharset?: string
  defCharset?: string
  highWaterMark?: number
  fileHwm?: number
  streamHandler?: unknown
}

/** A field of `.fields()`. */
interface Field {
  name: string
  maxCount?: number
}

function allowAll (_req: BodyRequest, _file: unknown, callback: (error: Error | null, acceptFile?: boolean) => void): void {
  callback(null, true)
}

/** The reading every multer middleware shares: multipart/* only, no total limit (as multer), HTTP/2 bodies read. */
const COMMON_OPTIONS = { type: 'multipart', limit: Infinity } as AnyOptions

/** One multer instance: its options, read per request (as multer reads them). */
class Multer {
  storage: StorageEngine
  limits: Options['limits']
  preservePath: boolean | undefined
  defParamCharset: string
  defCharset: string | undefined
  highWaterMark: number | undefined
  fileHwm: number | undefined
  fileFilter: FileFilter

  constructor (options: Options) {
    if (options.storage) this.storage = options.storage
    else if (options.dest) this.storage = diskStorage({ destination: options.dest })
    else this.storage = memoryStorage()
    if (options.limits && typeof options.limits !== 'function') validateLimits(options.limits)
    this.limits = options.limits
    this.preservePath = options.preservePath
    this.defParamCharset = options.defParamCharset || 'latin1'
    this.defCharset = options.defCharset
    this.highWaterMark = options.highWaterMark
    this.fileHwm = options.fileHwm
    this.fileFilter = options.fileFilter || allowAll
    if (options.streamHandler !== undefined && typeof options.streamHandler !== 'function') {
      throw new TypeError('Expected streamHandler to be a function')
    }
    if (options.streamHandler !== undefined) {
      // The pipeline reads the request itself (limits, read-off, HTTP/2): a body fed from elsewhere would bypass it.
      throw new TypeError('option streamHandler is not supported by bodykit/multer')
    }
  }

  /** One file from field `name`, on `req.file`. */
  single (name: string): Middleware {
    return this.makeMiddleware([{ name, maxCount: 1 }], 'VALUE')
  }

  /** Files from field `name` on `req.files`; more than `maxCount` is `LIMIT_UNEXPECTED_FILE`. */
  array (name: string, maxCount?: number): Middleware {
    return this.makeMiddleware([{ name, maxCount }], 'ARRAY')
  }

  /** Files from the fields listed, on `req.files` by field name. */
  fields (fields: readonly Field[]): Middleware {
    return this.makeMiddleware(fields, 'OBJECT')
  }

  /** Fields only: any file is `LIMIT_UNEXPECTED_FILE`. */
  none (): Middleware {
    return this.makeMiddleware([], 'NONE')
  }

  /** Every file, on `req.files`: use it only where the handler deals with every file. */
  any (): Middleware {
    return createMiddleware(() => this.setup(this.fileFilter, 'ARRAY'))
  }

  private makeMiddleware (fields: readonly Field[], strategy: FileStrategy): Middleware {
    return createMiddleware(() => {
      // Per request: how many files each field may still take.
      const filesLeft: Record<string, number> = Object.create(null)
      for (const field of fields) filesLeft[field.name] = typeof field.maxCount === 'number' ? field.maxCount : Infinity
      const userFilter = this.fileFilter
      const fileFilter: FileFilter = (req, file, callback) => {
        if ((filesLeft[file.fieldname] || 0) <= 0) {
          return callback(new MulterError('LIMIT_UNEXPECTED_FILE', file.fieldname, file.originalname))
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
function createMiddleware (setup: () => MulterSetup): Middleware {
  const definition: StreamParserDefinition = {
    name: 'multipart',
    defaultType: 'multipart',
    createStage: () => ({ stage: createMultipartStage(createMulterPolicy(setup)), defaultLimit: Infinity })
  }
  const settings = createReadSettings(definition, COMMON_OPTIONS, multerVariant)
  return function multerMiddleware (req, res, next: NextFunction) {
    readBody(settings, req, res, bindToCaller(next))
  }
}

/**
 * Creates a multer instance, as `require('multer')(options)` does.
 * @example
 * const multer = require('bodykit/multer')
 * const upload = multer({ dest: 'uploads/', limits: { fileSize: 5 * 1024 * 1024, files: 1 } })
 * app.post('/profile', upload.single('avatar'), (req, res) => res.json(req.file))
 */
function multer (options?: Options): Multer {
  if (options === undefined) return new Multer({})
  if (typeof options === 'object' && options !== null) return new Multer(options)
  throw new TypeError('Expected object for argument options')
}

multer.diskStorage = diskStorage
multer.memoryStorage = memoryStorage
multer.MulterError = MulterError

export = multer
