// The default entry inside Express 5, in the spec's three typical uses: app-wide parsers, per-route
// parsers, and parsers with a custom `type` for other media types.
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { describe, it } from 'node:test'
import express, { type ErrorRequestHandler, type Request, type Response } from 'express'
import { json, raw, text, urlencoded } from '../../src/index'
import { buffer, encode, listen } from '../helpers/server'

/** Echoes what the route saw: whether req.body exists and its (tagged) value. */
function echo (req: Request, res: Response): void {
  res.json({ route: req.path, hasBody: 'body' in req, body: encode(req.body) })
}

/** Answers errors with their status, type and message, as an application would. */
const onError: ErrorRequestHandler = (err, _req, res, _next) => {
  res.status(err.status ?? 500).json({ type: err.type, message: err.message })
}

describe('Express 5 with bodykit', () => {
  describe('parsers applied to the whole application', () => {
    function createApp () {
      const app = express()
      app.use(json())
      app.use(urlencoded({ extended: false }))
      app.post('/echo', echo)
      app.get('/echo', echo)
      app.use(onError)
      return app
    }

    it('parses json and urlencoded bodies for every route', async (t) => {
      const server = await listen(t, createApp())
      const jsonReply = await server.request({ path: '/echo', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' })
      const formReply = await server.request({ path: '/echo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&a=2&b[c]=3' })
      assert.deepEqual([jsonReply.status, jsonReply.json], [200, { route: '/echo', hasBody: true, body: { a: [1, 2] } }])
      assert.deepEqual([formReply.status, formReply.json], [200, { route: '/echo', hasBody: true, body: { a: ['1', '2'], 'b[c]': '3' } }])
    })

    it('leaves req.body undefined when nothing was parsed', async (t) => {
      const server = await listen(t, createApp())
      const get = await server.request({ method: 'GET', path: '/echo' })
      const other = await server.request({ path: '/echo', headers: { 'content-type': 'text/plain' }, body: 'hi' })
      assert.deepEqual([get.json, other.json], [
        { route: '/echo', hasBody: true, body: { $undefined: true } },
        { route: '/echo', hasBody: true, body: { $undefined: true } }
      ])
    })

    it('hands parse, size and charset errors to the error handler', async (t) => {
      const server = await listen(t, createApp())
      const replies = await Promise.all([
        server.request({ path: '/echo', headers: { 'content-type': 'application/json' }, body: '{"a":' }),
        server.request({ path: '/echo', headers: { 'content-type': 'application/json' }, body: '"' + 'x'.repeat(102400) + '"' }),
        server.request({ path: '/echo', headers: { 'content-type': 'application/json; charset=latin1' }, body: '{}' }),
        server.request({ path: '/echo', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Array(1001).fill('a=1').join('&') })
      ])
      assert.deepEqual(replies.map((reply) => [reply.status, reply.json.type]), [
        [400, 'entity.parse.failed'],
        [413, 'entity.too.large'],
        [415, 'charset.unsupported'],
        [413, 'parameters.too.many']
      ])
      assert.equal(replies[2].json.message, 'unsupported charset "LATIN1"')
    })

    it('inflates gzip and brotli bodies', async (t) => {
      const server = await listen(t, createApp())
      const gz = await server.request({ path: '/echo', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zlib.gzipSync('{"z":1}') })
      const br = await server.request({ path: '/echo', headers: { 'content-type': 'application/json', 'content-encoding': 'br' }, body: zlib.brotliCompressSync('{"b":1}') })
      assert.deepEqual([gz.json.body, br.json.body], [{ z: 1 }, { b: 1 }])
    })
  })

  describe('parsers applied to specific routes', () => {
    function createApp () {
      const app = express()
      const router = express.Router()
      router.post('/login', urlencoded({ extended: false }), echo)
      router.post('/api/users', json(), echo)
      router.post('/upload', raw({ limit: '1mb' }), echo)
      router.post('/none', echo)
      app.use(router)
      app.use(onError)
      return app
    }

    it('parses only where a parser is mounted', async (t) => {
      const server = await listen(t, createApp())
      const login = await server.request({ path: '/login', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'user=tobi&pass=ferret' })
      const users = await server.request({ path: '/api/users', headers: { 'content-type': 'application/json' }, body: '{"name":"tobi"}' })
      const upload = await server.request({ path: '/upload', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([1, 2, 3]) })
      const none = await server.request({ path: '/none', headers: { 'content-type': 'application/json' }, body: '{"name":"tobi"}' })
      assert.deepEqual([login.json, users.json, upload.json, none.json], [
        { route: '/login', hasBody: true, body: { user: 'tobi', pass: 'ferret' } },
        { route: '/api/users', hasBody: true, body: { name: 'tobi' } },
        { route: '/upload', hasBody: true, body: buffer(Buffer.from([1, 2, 3])) },
        { route: '/none', hasBody: false, body: { $undefined: true } }
      ])
    })

    it('does not parse a json body sent to the form route', async (t) => {
      const server = await listen(t, createApp())
      const reply = await server.request({ path: '/login', headers: { 'content-type': 'application/json' }, body: '{"user":"tobi"}' })
      assert.deepEqual(reply.json, { route: '/login', hasBody: true, body: { $undefined: true } })
    })

    it('reports a route parser\'s error through the app error handler', async (t) => {
      const server = await listen(t, createApp())
      const reply = await server.request({ path: '/api/users', headers: { 'content-type': 'application/json' }, body: 'true' })
      assert.deepEqual([reply.status, reply.json], [400, { type: 'entity.parse.failed', message: 'Unexpected token \'t\', "true" is not valid JSON' }])
    })
  })

  describe('parsers with a custom type', () => {
    function createApp () {
      const app = express()
      app.use(raw({ type: 'application/vnd.custom-type' }))
      app.use(json({ type: 'application/*+json' }))
      app.use(text({ type: 'text/html' }))
      app.use(json({ type: (req) => req.headers['x-json'] === '1' }))
      app.post('/', echo)
      app.use(onError)
      return app
    }

    it('parses a vendor type with raw, +json types with json and text/html with text', async (t) => {
      const server = await listen(t, createApp())
      const vendor = await server.post('application/vnd.custom-type', Buffer.from('custom\u0000data'))
      const plusJson = await server.post('application/ld+json; charset=utf-8', '{"@id":"x"}')
      const html = await server.post('text/html', '<b>hi</b>')
      assert.deepEqual([vendor.json.body, plusJson.json.body, html.json.body], [buffer('custom\u0000data'), { '@id': 'x' }, '<b>hi</b>'])
    })

    it('uses a type function to pick requests', async (t) => {
      const server = await listen(t, createApp())
      const picked = await server.post('application/octet-stream', '{"picked":true}', { 'x-json': '1' })
      const skipped = await server.post('application/json', '{"picked":true}')
      assert.deepEqual([picked.json.body, skipped.json.body], [{ picked: true }, { $undefined: true }])
    })

    it('reports errors of a custom-typed parser', async (t) => {
      const server = await listen(t, createApp())
      const reply = await server.post('application/problem+json', '{oops')
      assert.deepEqual([reply.status, reply.json.type], [400, 'entity.parse.failed'])
    })
  })
})
