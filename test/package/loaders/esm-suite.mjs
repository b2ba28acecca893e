// Test runners that load ES modules (Jest's native ESM mode, Vitest, mocha): the five entries by import.
/* global it */
import bodykit from 'bodykit'
import { json, urlencoded } from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import bodyParser, { bodyParser as namedBodyParser, koaBody } from 'bodykit/koa'
import * as nest from 'bodykit/nest'
import { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor } from 'bodykit/nest'
import checker from './check.js'

const label = process.env.LOADER_LABEL

it('import bodykit', () => checker.check(bodykit, label + '-import-default'))
it('import { json, urlencoded } from bodykit/legacy', () => checker.check({ json, urlencoded }, label + '-import-legacy'))
it('import multer, { diskStorage, memoryStorage, MulterError } from bodykit/multer', () => checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, label + '-import-multer'))
it('import bodyParser, { bodyParser, koaBody } from bodykit/koa', () => checker.checkKoa(bodyParser, { bodyParser: namedBodyParser, koaBody }, label + '-import-koa'))
it('import { FileInterceptor, … } from bodykit/nest', () => checker.checkNest(nest, { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor }, label + '-import-nest'))
