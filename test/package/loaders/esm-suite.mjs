// Test runners that load ES modules (Jest's native ESM mode, Vitest, mocha): the three entries by import.
/* global it */
import bodykit from 'bodykit'
import { json, urlencoded } from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import checker from './check.js'

const label = process.env.LOADER_LABEL

it('import bodykit', () => checker.check(bodykit, label + '-import-default'))
it('import { json, urlencoded } from bodykit/legacy', () => checker.check({ json, urlencoded }, label + '-import-legacy'))
it('import multer, { diskStorage, memoryStorage, MulterError } from bodykit/multer', () => checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, label + '-import-multer'))
