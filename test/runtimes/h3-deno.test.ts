// An h3 2 app reading bodies with bodykit/h3 under Deno.serve: with the Web bundle, and with the Node build (what Deno
// resolves bodykit/h3 to); answers checked and compared with h3 2's own readers (test/runtimes/h3-harness.ts).
import { h3RuntimeSuite } from './h3-harness'

h3RuntimeSuite('deno', 'web')
h3RuntimeSuite('deno', 'node')
