// Consumer fixture (bodykit only): bodykit/hono from an ES module; a schema types c.req.valid() and c.var, with valibot 1
// (zod's declarations need esModuleInterop: it has the CommonJS fixture).
import { Hono } from 'hono'
import { HTTPException } from 'hono/http-exception'
import { json, multipart, raw, text, urlencoded, type HonoJsonOptions, type UploadedFile } from 'bodykit/hono'
import * as v from 'valibot'

const User = v.object({ name: v.string(), age: v.optional(v.number(), 18) })
const options: HonoJsonOptions = { limit: '10kb', onProtoPoisoning: 'error' }

const app = new Hono()
  .post('/users', json({ ...options, schema: User }), (c) => {
    const age: number = c.req.valid('json').age
    return c.json({ name: c.req.valid('json').name, age })
  })
  .post('/login', urlencoded({ schema: v.object({ user: v.string() }) }), (c) => c.text(c.req.valid('form').user))
  .post('/avatar', multipart({ files: { storage: 'disk' } }), (c) => {
    const files: UploadedFile[] = c.var.files
    return c.json({ fields: c.req.valid('form'), paths: files.map((file) => file.path ?? '') })
  })
  .post('/note', text(), (c) => c.text(c.var.body ?? ''))
  .post('/blob', raw({ type: 'application/pdf' }), (c) => c.text(String(c.var.body?.byteLength ?? 0)))

app.onError((err, c) => err instanceof HTTPException ? err.getResponse() : c.text('server error', 500))

export default app
