// A bundler's CommonJS entry: the five entries by require(), run as the bundle once built.
'use strict'
const { check, checkKoa, checkMulter, checkNest } = require('./check')

async function main () {
  await check(require('bodykit'), process.env.LOADER_LABEL + '-require-default')
  await check(require('bodykit/legacy'), process.env.LOADER_LABEL + '-require-legacy')
  const multer = require('bodykit/multer')
  await checkMulter(multer, multer, process.env.LOADER_LABEL + '-require-multer')
  const bodyParser = require('bodykit/koa')
  await checkKoa(bodyParser, bodyParser, process.env.LOADER_LABEL + '-require-koa')
  const nest = require('bodykit/nest')
  await checkNest(nest, nest, process.env.LOADER_LABEL + '-require-nest')
}

main().catch((error) => { console.error(error); process.exitCode = 1 })
