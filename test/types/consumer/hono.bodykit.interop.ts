// Consumer fixture (bodykit only): bodykit/hono from CommonJS (import = require); a schema types c.req.valid() and c.var,
// with zod 4. Compiled with esModuleInterop only: zod's own declarations need it (its .d.cts files use default imports).
import bodykitHono = require('bodykit/hono')
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { z } from 'zod'

const { json, multipart, raw, text, urlencoded } = bodykitHono
const User = z.object({ name: z.string(), age: z.coerce.number().default(18) })
const options: bodykitHono.HonoJsonOptions = { limit: '10kb', onProtoPoisoning: 'error' }

const app = new Hono()
  .post('/users', json({ ...options, schema: User }), (c) => {
    const age: number = c.req.valid('json').age
    return c.json({ name: c.req.valid('json').name, age })
  })
  .post('/login', urlencoded({ schema: z.object({ user: z.string() }) }), (c) => c.text(c.req.valid('form').user))
  .post('/avatar', multipart({ files: { storage: 'disk' } }), (c) => {
    const files: bodykitHono.UploadedFile[] = c.var.files
    return c.json({ fields: c.req.valid('form'), paths: files.map((file) => file.path ?? '') })
  })
  .post('/note', text(), (c) => c.text(c.var.body ?? ''))
  .post('/blob', raw({ type: 'application/pdf' }), (c) => c.text(String(c.var.body?.byteLength ?? 0)))

app.onError((err, c) => err instanceof HTTPException ? err.getResponse() : c.text('server error', 500))

export = app
