// bodykit/legacy inside Express 4 (installed as `express-4`), mounted app-wide, per route and as the
// deprecated generic parser.
import assert from 'node:assert/strict'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { describe, it } from 'node:test'
import legacy from '../../src/legacy'
import { encode, listen } from '../helpers/server'

// @types/express describes Express 5; Express 4's surface used here is typed loosely.
interface Request4 extends IncomingMessage { body?: unknown, path: string }
interface Response4 extends ServerResponse {
  status: (code: number) => Response4
  json: (value: unknown) => void
}
type Handler4 = (req: Request4, res: Response4, next: (err?: unknown) => void) => void
type ErrorHandler4 = (err: { status?: number, type?: string, message: string }, req: Request4, res: Response4, next: (err?: unknown) => void) => void
interface Router4 {
  post: (path: string, ...handlers: Handler4[]) => Router4
  get: (path: string, ...handlers: Handler4[]) => Router4
  use: (...handlers: Array<Handler4 | ErrorHandler4 | Router4>) => Router4
}
interface Express4 {
  (): Router4 & RequestListener
  Router: () => Router4
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const express4 = require('express-4') as Express4

const echo: Handler4 = (req, res) => {
  res.json({ route: req.path, hasBody: 'body' in req, body: encode(req.body) })
}

const onError: ErrorHandler4 = (err, _req, res, _next) => {
  res.status(err.status ?? 500).json({ type: err.type, message: err.message })
}

const FORM = 'application/x-www-form-urlencoded'

describe('Express 4 with bodykit/legacy', () => {
  describe('parsers applied to the whole application', () => {
    function createApp () {
      const app = express4()
      app.use(legacy.json())
      app.use(legacy.urlencoded({ extended: true }))
      app.post('/echo', echo)
      app.get('/echo', echo)
      app.use(onError)
      return app
    }

    it('parses json and extended urlencoded bodies', async (t) => {
      const server = await listen(t, createApp())
      const jsonReply = await server.request({ path: '/echo', headers: { 'content-type': 'application/json' }, body: '{"a":[1]}' })
      const formReply = await server.request({ path: '/echo', headers: { 'content-type': FORM }, body: 'user[name]=tobi&user[tags][]=x' })
      assert.deepEqual([jsonReply.json, formReply.json], [
        { route: '/echo', hasBody: true, body: { a: [1] } },
        { route: '/echo', hasBody: true, body: { user: { name: 'tobi', tags: ['x'] } } }
      ])
    })

    it('leaves req.body as {} when nothing was parsed', async (t) => {
      const server = await listen(t, createApp())
      const get = await server.request({ method: 'GET', path: '/echo' })
      const other = await server.request({ path: '/echo', headers: { 'content-type': 'text/plain' }, body: 'hi' })
      assert.deepEqual([get.json, other.json], [
        { route: '/echo', hasBody: true, body: {} },
        { route: '/echo', hasBody: true, body: {} }
      ])
    })

    it('hands errors to the error handler, brotli included', async (t) => {
      const zlib = await import('node:zlib')
      const server = await listen(t, createApp())
      const replies = await Promise.all([
        server.request({ path: '/echo', headers: { 'content-type': 'application/json' }, body: '{"a":' }),
        server.request({ path: '/echo', headers: { 'content-type': FORM + '; charset=iso-8859-1' }, body: 'a=1' }),
        server.request({ path: '/echo', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: zlib.brotliCompressSync('{}') })
      ])
      assert.deepEqual(replies.map((reply) => [reply.status, reply.json]), [
        [400, { type: 'entity.parse.failed', message: replies[0].json.message }],
        [415, { type: 'charset.unsupported', message: 'unsupported charset "ISO-8859-1"' }],
        [415, { type: 'encoding.unsupported', message: 'unsupported content encoding "br"' }]
      ])
    })
  })

  describe('parsers applied to specific routes', () => {
    function createApp () {
      const app = express4()
      const router = express4.Router()
      router.post('/login', legacy.urlencoded({ extended: false }), echo)
      router.post('/api', legacy.json({ strict: false }), echo)
      router.post('/notes', legacy.text(), echo)
      router.post('/none', echo)
      app.use(router)
      app.use(onError)
      return app
    }

    it('parses only where a parser is mounted', async (t) => {
      const server = await listen(t, createApp())
      const login = await server.request({ path: '/login', headers: { 'content-type': FORM }, body: 'user=tobi&a[b]=1' })
      const api = await server.request({ path: '/api', headers: { 'content-type': 'application/json' }, body: '"loose"' })
      const notes = await server.request({ path: '/notes', headers: { 'content-type': 'text/plain' }, body: 'note' })
      const none = await server.request({ path: '/none', headers: { 'content-type': 'application/json' }, body: '{}' })
      assert.deepEqual([login.json, api.json, notes.json, none.json], [
        { route: '/login', hasBody: true, body: { user: 'tobi', 'a[b]': '1' } },
        { route: '/api', hasBody: true, body: 'loose' },
        { route: '/notes', hasBody: true, body: 'note' },
        { route: '/none', hasBody: false, body: { $undefined: true } }
      ])
    })
  })

  describe('the deprecated generic parser', () => {
    it('parses json and urlencoded app-wide with shared options', async (t) => {
      const app = express4()
      app.use(legacy({ extended: false, limit: '1kb' }))
      app.post('/', echo)
      app.use(onError)
      const server = await listen(t, app)
      const jsonReply = await server.post('application/json', '{"g":1}')
      const formReply = await server.post(FORM, 'a[b]=1')
      const tooBig = await server.post(FORM, 'x=' + 'y'.repeat(1024))
      assert.deepEqual([jsonReply.json.body, formReply.json.body, tooBig.status, tooBig.json.type], [{ g: 1 }, { 'a[b]': '1' }, 413, 'entity.too.large'])
    })
  })
})
