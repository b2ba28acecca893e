// A Cloudflare Worker over the Web bundle, for workerd without nodejs_compat: the bundle is a module of its own beside it.
// The harness's esbuild maps src/web to the Web bundle (scripts/web-bundle.mjs), a module of its own beside this one.
import * as readers from '../../../src/web'
import { createHandler, type Readers } from './route'

const handle = createHandler(readers as unknown as Readers, 'workerd')

export default { fetch: (request: Request) => handle(request) }
