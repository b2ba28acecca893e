// tsx running a CommonJS TypeScript file: the five entries by `import = require()`, as TypeScript apps write it.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import multer = require('bodykit/multer')
import bodyParser = require('bodykit/koa')
import nest = require('bodykit/nest')
import checker = require('./check.js')

async function main (): Promise<void> {
  await checker.check(bodykit, 'tsx-require-default')
  await checker.check(legacy, 'tsx-require-legacy')
  await checker.checkMulter(multer, multer, 'tsx-require-multer')
  await checker.checkKoa(bodyParser, bodyParser, 'tsx-require-koa')
  await checker.checkNest(nest, nest, 'tsx-require-nest')
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1 })
