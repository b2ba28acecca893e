// A bundler's ES module entry: the three entries by import, run as the bundle once built.
import bodykit from 'bodykit'
import legacy from 'bodykit/legacy'
import multer, { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import checker from './check.js'

async function main () {
  const label = process.env.LOADER_LABEL
  await checker.check(bodykit, label + '-import-default')
  await checker.check(legacy, label + '-import-legacy')
  await checker.checkMulter(multer, { diskStorage, memoryStorage, MulterError }, label + '-import-multer')
}

// No top-level await: bundlers that emit CommonJS cannot carry it.
main().catch((error) => { console.error(error); process.exitCode = 1 })
