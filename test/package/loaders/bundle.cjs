// A bundler's CommonJS entry: both entries by require(), run as the bundle once built.
'use strict'
const { check } = require('./check')

async function main () {
  await check(require('bodykit'), process.env.LOADER_LABEL + '-require-default')
  await check(require('bodykit/legacy'), process.env.LOADER_LABEL + '-require-legacy')
}

main().catch((error) => { console.error(error); process.exitCode = 1 })
