// Entry `bodykit/nest`: @nestjs/platform-express's upload interceptors (FileInterceptor and its family) over bodykit/multer.
import { Inject, Optional, mixin } from '@nestjs/common'
import type { CallHandler, ExecutionContext, NestInterceptor, Type } from '@nestjs/common'
import type { Observable } from 'rxjs'
import multer from './multer'
import type { DestinationFunction, Field, Multer, Options, Request, StorageEngine } from './multer'
import { removeFilesOnPipeRejection, runUpload, type RemovingStorage, type UploadMiddleware } from './nest/run-upload'
import { mergeUploadOptions, withNestDefaults } from './nest/upload-options'

/**
 * The injection token of the module options, as @nestjs/platform-express names it: `MulterModule.register()` and
 * `registerAsync()` provide it, so they configure these interceptors as they configure Nest's own.
 */
const MULTER_MODULE_OPTIONS = 'MULTER_MODULE_OPTIONS'

/**
 * Options of an upload interceptor, and of `MulterModule.register()`: bodykit/multer's (multer 2.x's). Those given to
 * the interceptor win over the module's, except null or undefined ones. `limits.parts` is 1000 unless set (Nest's
 * default; `Infinity` lifts it).
 */
export interface MulterOptions extends Omit<Options, 'dest' | 'fileFilter'> {
  /**
   * A folder files are written to, with random names, or a function choosing it per file (as `diskStorage()`'s
   * `destination`); ignored when `storage` is set.
   */
  // compat(nest): Nest's own MulterOptions types it `string | Function`; a function is called as a destination function.
  dest?: string | DestinationFunction | Function | undefined // eslint-disable-line @typescript-eslint/no-unsafe-function-type
  /**
   * Decides, for each file, whether it is stored: `callback(null, true)`, skipped: `callback(null, false)`, or ends the
   * upload: `callback(error)` (or Nest's `callback(error, false)`). A throw, or an async filter's rejection, before it
   * called back ends the upload with that error too. `file` has no `size`, `path` or `buffer` yet.
   * @default every file is stored
   */
  fileFilter? (req: Request, file: Express.Multer.File, callback: FileFilterCallback): void | Promise<void>
}

/** How a fileFilter answers: multer's two forms, and Nest's `callback(error, false)`. */
export interface FileFilterCallback {
  (error: Error): void
  (error: Error | null, acceptFile: boolean): void
}

/** A field of `FileFieldsInterceptor()`: its name, and the most files it may have. */
export type MulterField = Field

/**
 * Nest's `FileInterceptor` over bodykit/multer: reads one file from field `fieldName` into `@UploadedFile()`
 * (`req.file`), and the other fields into `@Body()`. A second file in the field, or a file in another one, is a 400
 * `Unexpected file field - <field>`; a file over `limits.fileSize` a 413.
 * @example
 * // The import names bodykit/nest instead of @nestjs/platform-express; the route stays as it was:
 * class ProfileController { @Post('avatar') @UseInterceptors(FileInterceptor('avatar', { limits: { fileSize: 1048576 } })) upload (@UploadedFile() file: Express.Multer.File) { return { size: file.size } } }
 */
export function FileInterceptor (fieldName: string, localOptions?: MulterOptions): Type<NestInterceptor> {
  return createUploadInterceptor(localOptions, (upload) => upload.single(fieldName), true)
}

/**
 * Nest's `FilesInterceptor` over bodykit/multer: reads the files of field `fieldName` into `@UploadedFiles()` (an
 * array), at most `maxCount` of them.
 * @param maxCount The most files the field may have (default: no limit but `limits.files` and `limits.parts`).
 */
export function FilesInterceptor (fieldName: string, maxCount?: number, localOptions?: MulterOptions): Type<NestInterceptor> {
  return createUploadInterceptor(localOptions, (upload) => upload.array(fieldName, maxCount), true)
}

/**
 * Nest's `FileFieldsInterceptor` over bodykit/multer: reads the files of the fields listed into `@UploadedFiles()`, an
 * object of arrays by field name.
 * @example
 * class ProfileController { @Post() @UseInterceptors(FileFieldsInterceptor([{ name: 'avatar', maxCount: 1 }, { name: 'gallery', maxCount: 8 }])) save (@UploadedFiles() files: Record<string, Express.Multer.File[]>) {} }
 */
export function FileFieldsInterceptor (uploadFields: readonly MulterField[], localOptions?: MulterOptions): Type<NestInterceptor> {
  return createUploadInterceptor(localOptions, (upload) => upload.fields(uploadFields), true)
}

/**
 * Nest's `AnyFilesInterceptor` over bodykit/multer: reads every file, whatever its field, into `@UploadedFiles()` (an
 * array). Use it only where the handler deals with every file.
 */
export function AnyFilesInterceptor (localOptions?: MulterOptions): Type<NestInterceptor> {
  return createUploadInterceptor(localOptions, (upload) => upload.any(), true)
}

/** Nest's `NoFilesInterceptor` over bodykit/multer: reads a multipart form's fields into `@Body()`; any file is a 400. */
export function NoFilesInterceptor (localOptions?: MulterOptions): Type<NestInterceptor> {
  return createUploadInterceptor(localOptions, (upload) => upload.none(), false)
}

/**
 * An injectable interceptor class that reads the body with the middleware `select` makes, from the module's options
 * (if MulterModule provides them) merged with `localOptions`. With `removesFiles`, the files stored for a request its
 * pipes refuse are removed.
 */
function createUploadInterceptor (localOptions: MulterOptions | undefined, select: (upload: Multer) => unknown, removesFiles: boolean): Type<NestInterceptor> {
  class UploadInterceptor implements NestInterceptor {
    private readonly middleware: UploadMiddleware
    private readonly storage: RemovingStorage

    // Made once per route when Nest instantiates the class, as Nest's make their multer instance: bad options throw then.
    constructor (moduleOptions?: MulterOptions | null) {
      const options = withNestDefaults(mergeUploadOptions(moduleOptions, localOptions)) as Options
      // The engine multer would pick, chosen here so that a refused request's files can be removed through it.
      const storage = options.storage || (options.dest ? multer.diskStorage({ destination: options.dest }) : multer.memoryStorage())
      this.storage = storage as StorageEngine as RemovingStorage
      this.middleware = select(multer({ ...options, storage })) as UploadMiddleware
    }

    async intercept (context: ExecutionContext, next: CallHandler): Promise<Observable<unknown>> {
      const http = context.switchToHttp()
      const req = http.getRequest()
      const res = http.getResponse()
      await runUpload(this.middleware, req, res)
      const handled = next.handle()
      return removesFiles ? handled.pipe(removeFilesOnPipeRejection(this.storage, req, res)) : handled
    }
  }
  // `@Optional() @Inject(MULTER_MODULE_OPTIONS)` on the constructor's parameter, applied as calls: the entry is built
  // with plain tsc, without decorator metadata, and Nest reads only what these two record.
  Inject(MULTER_MODULE_OPTIONS)(UploadInterceptor, undefined, 0)
  Optional()(UploadInterceptor, undefined, 0)
  return mixin(UploadInterceptor)
}
