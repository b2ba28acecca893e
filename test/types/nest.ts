// Type tests of bodykit/nest, checked by `tsc -p tsconfig.json` only (never run): code written for
// @nestjs/platform-express's interceptors compiles with bodykit/nest's, options typed with Nest's own types included.
import type { NestInterceptor, Type } from '@nestjs/common'
import * as platformExpress from '@nestjs/platform-express'
import type { MulterField as NestMulterField, MulterOptions as NestMulterOptions } from '@nestjs/platform-express/multer/interfaces/multer-options.interface'
import * as bodykitNest from '../../src/nest'

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function expectType<T> (_value: T): void {}

// The same five names, each returning what Nest's returns.
expectType<Equal<ReturnType<typeof bodykitNest.FileInterceptor>, ReturnType<typeof platformExpress.FileInterceptor>>>(true)
expectType<Equal<ReturnType<typeof bodykitNest.FilesInterceptor>, Type<NestInterceptor>>>(true)
expectType<Equal<ReturnType<typeof bodykitNest.FileFieldsInterceptor>, Type<NestInterceptor>>>(true)
expectType<Equal<ReturnType<typeof bodykitNest.AnyFilesInterceptor>, Type<NestInterceptor>>>(true)
expectType<Equal<ReturnType<typeof bodykitNest.NoFilesInterceptor>, Type<NestInterceptor>>>(true)

// Options and fields typed with Nest's interfaces are accepted as they are (its `dest?: string | Function` too).
declare const nestOptions: NestMulterOptions
declare const nestFields: NestMulterField[]
bodykitNest.FileInterceptor('file', nestOptions)
bodykitNest.FilesInterceptor('files', 2, nestOptions)
bodykitNest.FileFieldsInterceptor(nestFields, nestOptions)
bodykitNest.AnyFilesInterceptor(nestOptions)
bodykitNest.NoFilesInterceptor(nestOptions)

// What Nest's docs write inline compiles unchanged: a fileFilter calling back with an error or a decision.
bodykitNest.FileInterceptor('file', {
  limits: { fileSize: 1024 * 1024 },
  fileFilter: (_req, file, callback) => {
    if (!file.mimetype.startsWith('image/')) return callback(new Error('images only'), false)
    callback(null, true)
  }
})
// bodykit/multer's own options, which Nest's types lack: a `limits` function, nesting limits.
bodykitNest.AnyFilesInterceptor({ limits: (req) => ({ fileSize: req.headers['content-length'] === undefined ? 1 : 2, fieldNestingDepth: 4 }) })
// @ts-expect-error a field needs a name
bodykitNest.FileFieldsInterceptor([{ maxCount: 1 }])
