// A bundler's ES module entry: the five entries by import, run as the bundle once built.
import bodykit from 'bodykit'
import legacy from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import bodyParser, { bodyParser as namedBodyParser, koaBody } from 'bodykit/koa'
import * as nest from 'bodykit/nest'
import { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor } from 'bodykit/nest'
import checker from './check.js'

async function main () {
  const label = process.env.LOADER_LABEL
  await checker.check(bodykit, label + '-import-default')
  await checker.check(legacy, label + '-import-legacy')
  await checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, label + '-import-multer')
  await checker.checkKoa(bodyParser, { bodyParser: namedBodyParser, koaBody }, label + '-import-koa')
  await checker.checkNest(nest, { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor }, label + '-import-nest')
}

// No top-level await: bundlers that emit CommonJS cannot carry it.
main().catch((error) => { console.error(error); process.exitCode = 1 })
