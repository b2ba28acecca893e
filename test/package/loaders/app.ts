// tsx running a CommonJS TypeScript file: the three entries by `import = require()`, as TypeScript apps write it.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import multer = require('bodykit/multer')
import checker = require('./check.js')

async function main (): Promise<void> {
  await checker.check(bodykit, 'tsx-require-default')
  await checker.check(legacy, 'tsx-require-legacy')
  await checker.checkMulter(multer, multer, 'tsx-require-multer')
}

main().catch((error: unknown) => { console.error(error); process.exitCode = 1 })
