// A Cloudflare Worker serving the h3 2 app of test/runtimes/h3-app.ts, for workerd without nodejs_compat: bundled by
// test/runtimes/h3-harness.ts with h3 2 and bodykit/h3's Web bundle inlined, as wrangler bundles an app.
import { createApp } from './h3-app'

/** Which build of bodykit/h3 the bundle holds: set by the harness's esbuild (`define`). */
declare const BODYKIT_H3_BUILD: string

const app = createApp('workerd', BODYKIT_H3_BUILD)

export default { fetch: (request: Request) => app.fetch(request) }
