// An h3 2 app reading bodies with bodykit/h3's Web bundle as a Cloudflare Worker in workerd without nodejs_compat;
// answers checked and compared with h3 2's own readers (test/runtimes/h3-harness.ts).
import { h3RuntimeSuite } from './h3-harness'

h3RuntimeSuite('workerd', 'web')
