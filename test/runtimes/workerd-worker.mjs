// A Cloudflare Worker (workerd, nodejs_compat) over bodykit's built `dist/`: bundled by esbuild in web-servers.test.ts.
import * as bodykit from '../../dist/index.js'
import { createHandler } from './web-routes.ts'

const handle = createHandler(bodykit, 'workerd')

export default { fetch: (request) => handle(request) }
