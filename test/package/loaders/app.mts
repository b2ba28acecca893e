// tsx running an ES module TypeScript file: the five entries by import, named and default.
import { json, urlencoded } from 'bodykit'
import legacy from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import bodyParser, { bodyParser as namedBodyParser, koaBody } from 'bodykit/koa'
import * as nest from 'bodykit/nest'
import { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor } from 'bodykit/nest'
import checker from './check.js'

await checker.check({ json, urlencoded }, 'tsx-import-default')
await checker.check(legacy, 'tsx-import-legacy')
await checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, 'tsx-import-multer')
await checker.checkKoa(bodyParser, { bodyParser: namedBodyParser, koaBody }, 'tsx-import-koa')
await checker.checkNest(nest, { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor }, 'tsx-import-nest')
