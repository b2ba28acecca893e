// Recipe (docs/web.md): Hono on Cloudflare Workers (no nodejs_compat) reading JSON with bodykit/web in a route.
// In an app the import is 'bodykit/web'; the test bundles this file with esbuild (src/web mapped to the Web bundle) and runs it in workerd.
import { Hono } from 'hono'
import { isBodyParserError, readJson } from '../../../src/web'

const app = new Hono()

app.post('/echo', async (c) => {
  const body = await readJson(c.req.raw, { limit: '100kb' })
  return c.json({ received: body })
})

// bodykit's errors carry the status and type to answer with.
app.onError((err, c) => {
  if (isBodyParserError(err)) return c.json({ error: err.type }, err.status as 400)
  throw err
})

export default app
