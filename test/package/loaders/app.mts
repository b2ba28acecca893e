// tsx running an ES module TypeScript file: the three entries by import, named and default.
import { json, urlencoded } from 'bodykit'
import legacy from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import checker from './check.js'

await checker.check({ json, urlencoded }, 'tsx-import-default')
await checker.check(legacy, 'tsx-import-legacy')
await checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, 'tsx-import-multer')
