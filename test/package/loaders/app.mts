// tsx running an ES module TypeScript file: both entries by import, named and default.
import { json, urlencoded } from 'bodykit'
import legacy from 'bodykit/legacy'
import checker from './check.js'

await checker.check({ json, urlencoded }, 'tsx-import-default')
await checker.check(legacy, 'tsx-import-legacy')
