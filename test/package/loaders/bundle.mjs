// A bundler's ES module entry: both entries by import, run as the bundle once built.
import bodykit from 'bodykit'
import legacy from 'bodykit/legacy'
import checker from './check.js'

async function main () {
  const label = process.env.LOADER_LABEL
  await checker.check(bodykit, label + '-import-default')
  await checker.check(legacy, label + '-import-legacy')
}

// No top-level await: bundlers that emit CommonJS cannot carry it.
main().catch((error) => { console.error(error); process.exitCode = 1 })
