// An h3 2 app reading bodies with bodykit/h3 under Bun.serve: with the Web bundle, and with the Node build (what Bun
// resolves bodykit/h3 to); answers checked and compared with h3 2's own readers (test/runtimes/h3-harness.ts).
import { h3RuntimeSuite } from './h3-harness'

h3RuntimeSuite('bun', 'web')
h3RuntimeSuite('bun', 'node')
