// The promise API (readJson, readRaw, readText, readUrlencoded) in plain node:http, Koa (ctx.req) and fastify (a content-type parser).
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import zlib from 'node:zlib'
import Fastify from 'fastify'
import Koa from 'koa'
import bodykit, { readJson, readRaw, readText, readUrlencoded } from '../../src/index'
import { httpError, jsonParseMessage } from '../helpers/expect'
import { buffer, describeError, encode, listen } from '../helpers/server'

const JSON_TYPE = 'application/json'

type Read = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>

/** A node:http server whose handler awaits `read`, then answers the body (200) or the rejection, described. */
async function serveRead (t: TestContext, read: Read): Promise<Awaited<ReturnType<typeof listen>>> {
  return listen(t, (req, res) => {
    read(req, res).then((body) => {
      const text = JSON.stringify({ body: encode(body), reqBody: 'body' in req ? 'set' : 'absent', rawBody: encode((req as { rawBody?: unknown }).rawBody) })
      res.writeHead(200, { 'content-type': JSON_TYPE, connection: 'close' }).end(text)
    }, (err: unknown) => {
      const { status, json } = describeError(err)
      res.writeHead(status, { 'content-type': JSON_TYPE, connection: 'close' }).end(JSON.stringify(json))
    })
  })
}

describe('promise API in node:http', () => {
  it('each reader resolves with what its middleware puts on req.body, and leaves req.body alone', async (t) => {
    const cases: Array<[Read, string, string, unknown]> = [
      [(req) => readJson(req), JSON_TYPE, '{"a":[1,2]}', { a: [1, 2] }],
      [(req) => readRaw(req), 'application/octet-stream', '\u0001\u0002', buffer('\u0001\u0002')],
      [(req) => readText(req), 'text/plain; charset=utf-8', 'héllo', 'héllo'],
      [(req) => readUrlencoded(req), 'application/x-www-form-urlencoded', 'a=1&a=2&b[c]=3', { a: ['1', '2'], 'b[c]': '3' }],
      [(req) => readUrlencoded(req, { extended: true }), 'application/x-www-form-urlencoded', 'b[c]=3', { b: { c: '3' } }]
    ]
    for (const [read, type, body, expected] of cases) {
      const server = await serveRead(t, read)
      const reply = await server.post(type, body)
      assert.deepEqual([reply.status, reply.json.body, reply.json.reqBody], [200, expected, 'absent'])
    }
  })

  it('resolves undefined for no body, another Content-Type, and a request already read', async (t) => {
    const server = await serveRead(t, (req) => readJson(req))
    assert.deepEqual((await server.request({ method: 'GET' })).json.body, { $undefined: true })
    assert.deepEqual((await server.post('text/plain', '{"a":1}')).json.body, { $undefined: true })
    const twice = await serveRead(t, async (req) => { await readJson(req); return readJson(req) })
    assert.deepEqual((await twice.post(JSON_TYPE, '{"a":1}')).json.body, { $undefined: true })
  })

  it('rejects with the middleware\'s errors: same status, type, message and properties', async (t) => {
    const server = await serveRead(t, (req, res) => readJson(req, { limit: 10, res }))
    assert.deepEqual((await server.post(JSON_TYPE, '{"a":')).json,
      httpError(400, jsonParseMessage('{"a":'), { name: 'SyntaxError', body: '{"a":', type: 'entity.parse.failed' }))
    assert.deepEqual((await server.post(JSON_TYPE, '{"a":"0123456789"}')).json,
      httpError(413, 'request entity too large', { expected: 18, length: 18, limit: 10, type: 'entity.too.large' }))
    assert.deepEqual((await server.post('application/json; charset=latin1', '{}')).json,
      httpError(415, 'unsupported charset "LATIN1"', { charset: 'latin1', type: 'charset.unsupported' }))
  })

  it('takes every middleware option: type, inflate, verify (with res), rawBody, poisoning', async (t) => {
    let verifiedWith: unknown = null
    const options: bodykit.ReadJsonOptions = {
      type: 'application/*+json',
      rawBody: true,
      onProtoPoisoning: 'remove',
      verify: (_req, res) => { verifiedWith = res }
    }
    const server = await serveRead(t, (req, res) => readJson(req, { ...options, res }))
    const reply = await server.post('application/vnd.api+json', zlib.gzipSync('{"a":1,"__proto__":{"x":1}}'), { 'content-encoding': 'gzip' })
    assert.deepEqual([reply.json.body, reply.json.rawBody], [{ a: 1 }, buffer('{"a":1,"__proto__":{"x":1}}')])
    assert.equal(typeof (verifiedWith as ServerResponse).setHeader, 'function')
    assert.deepEqual((await server.post(JSON_TYPE, '{"a":1}')).json.body, { $undefined: true })
  })

  it('closes the connection after the answer when given res and a body too large to read off', async (t) => {
    const server = await serveRead(t, (req, res) => readRaw(req, { limit: 10, res }))
    const reply = await server.post('application/octet-stream', [Buffer.alloc(64 * 1024), Buffer.alloc(64 * 1024)])
    assert.deepEqual([reply.status, reply.json.type, reply.headers.connection], [413, 'entity.too.large', 'close'])
  })

  it('validates options as the factories do: the same TypeError, as a rejection', async () => {
    const pairs = [[readJson, bodykit.json], [readRaw, bodykit.raw], [readText, bodykit.text], [readUrlencoded, bodykit.urlencoded]] as const
    const bad: Array<Record<string, unknown>> = [{ limit: 'abc' }, { verify: 'x' }, { rawBody: 'yes' }, { parameterLimit: 0 }, { onProtoPoisoning: 'drop' }]
    for (const [read, factory] of pairs) {
      for (const options of bad) {
        let thrown: unknown = null
        try { (factory as (o: unknown) => unknown)(options) } catch (err) { thrown = err }
        const req = { headers: {} } as IncomingMessage
        if (thrown === null) assert.equal(await (read as (r: IncomingMessage, o: unknown) => Promise<unknown>)(req, options), undefined)
        else await assert.rejects((read as (r: IncomingMessage, o: unknown) => Promise<unknown>)(req, options), thrown as Error)
      }
    }
  })

  it('rejects with what a type function throws (the middleware throws it)', async (t) => {
    const boom = new Error('type function threw')
    const server = await serveRead(t, (req) => readJson(req, { type: () => { throw boom } }))
    assert.deepEqual((await server.post(JSON_TYPE, '{}')).json, { name: 'Error', message: 'type function threw' })
  })

  it('rejects with the factory\'s TypeError for a bad option, and validates a shared options object once', async (t) => {
    const server = await serveRead(t, (req) => readJson(req, { limit: 'lots' }))
    assert.deepEqual((await server.post(JSON_TYPE, '{}')).json, { name: 'TypeError', message: 'option limit "lots" is invalid' })
    let reads = 0
    const shared = { get inflate () { reads++; return true } }
    const reused = await serveRead(t, (req) => readText(req, shared))
    for (let i = 0; i < 3; i++) assert.equal((await reused.post('text/plain', 'hi')).json.body, 'hi')
    assert.equal(reads, 1)
  })
})

describe('promise API in Koa', () => {
  it('reads ctx.req; Koa answers the rejection with its status and message', async (t) => {
    const app = new Koa()
    app.use(async (ctx) => {
      ctx.body = { received: await readJson(ctx.req, { res: ctx.res, onConstructorPoisoning: 'error' }) }
    })
    app.silent = true
    const server = await listen(t, app.callback())
    const ok = await server.post(JSON_TYPE, '{"order":7}')
    assert.deepEqual([ok.status, ok.json], [200, { received: { order: 7 } }])
    const text = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', headers: { 'content-type': JSON_TYPE }, body: '{"constructor":{"prototype":{}}}' })
    assert.deepEqual([text.status, await text.text()], [400, 'Object contains forbidden prototype property'])
  })
})

describe('promise API in fastify', () => {
  it('serves as the content-type parser for every type, with fastify\'s own parsers removed', async (t) => {
    const app = Fastify()
    app.removeAllContentTypeParsers()
    app.addContentTypeParser('*', (request, _payload, done) => {
      readJson(request.raw, { type: ['application/json', 'application/*+json'] }).then((body) => done(null, body), done)
    })
    app.post('/', async (request) => ({ received: request.body ?? null }))
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.after(() => app.close())
    const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}/`
    const post = async (type: string, body: string): Promise<[number, unknown]> => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': type }, body })
      return [res.status, await res.json()]
    }
    assert.deepEqual(await post(JSON_TYPE, '{"a":1}'), [200, { received: { a: 1 } }])
    assert.deepEqual(await post('application/ld+json', '[1]'), [200, { received: [1] }])
    assert.deepEqual(await post('text/plain', 'not json'), [200, { received: null }])
    const [status, error] = await post(JSON_TYPE, '{"a":')
    assert.deepEqual([status, (error as { message: string }).message], [400, jsonParseMessage('{"a":')])
  })
})
