// A bundler's CommonJS entry: the three entries by require(), run as the bundle once built.
'use strict'
const { check, checkMulter } = require('./check')

async function main () {
  await check(require('bodykit'), process.env.LOADER_LABEL + '-require-default')
  await check(require('bodykit/legacy'), process.env.LOADER_LABEL + '-require-legacy')
  const multer = require('bodykit/multer')
  await checkMulter(multer, multer, process.env.LOADER_LABEL + '-require-multer')
}

main().catch((error) => { console.error(error); process.exitCode = 1 })
