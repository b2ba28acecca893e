// bodykit's json() and urlencoded() in a real NestJS app: Nest keeps them in place of its own, and every answer
// (body, rawBody, status, Nest's error JSON) is the one Nest gives with body-parser, which it mounts by default.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import fc from 'fast-check'
import { RequestMethod } from '@nestjs/common'
import bodyParser from 'body-parser'
import * as bodykit from '../../src/index'
import { rawRequest, sendRequest, type Reply, type RequestOptions } from '../helpers/server'
import { layersNamed, startNestApp, type NestApp, type NestAppOptions } from './apps'

/** The parsers as Nest mounts its own (urlencoded with extended: true), with `rawBody` as Nest's option sets it. */
function bodykitParsers (rawBody = false): NestAppOptions['setup'] {
  return (app) => {
    app.use(bodykit.json({ rawBody }))
    app.use(bodykit.urlencoded({ extended: true, rawBody }))
  }
}

async function answer (app: NestApp, request: RequestOptions): Promise<Pick<Reply, 'status' | 'json'>> {
  const { status, json } = await sendRequest(app.port, { path: '/echo', ...request })
  return { status, json }
}

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const post = (type: string | undefined, body: string | Buffer | string[], headers: Record<string, string> = {}): RequestOptions =>
  ({ headers: type === undefined ? headers : { 'content-type': type, ...headers }, body })

/** Requests that reach each branch of both parsers: bodies, every error class Nest answers, inflation. */
const REQUESTS: Array<[string, RequestOptions]> = [
  ['a JSON object', post(JSON_TYPE, '{"user":"tobi","tags":["a","b"]}')],
  ['JSON with a charset', post('application/json; charset=utf-8', '{"a":1}')],
  ['JSON in UTF-16', post('application/json; charset=utf-16', Buffer.from('\ufeff{"a":"é"}', 'utf16le'))],
  ['JSON whose charset is not UTF', post('application/json; charset=latin1', '{"a":1}')],
  ['malformed JSON', post(JSON_TYPE, '{"a":')],
  ['a JSON string (strict)', post(JSON_TYPE, '"text"')],
  ['an empty JSON body', post(JSON_TYPE, '')],
  ['JSON with a __proto__ key', post(JSON_TYPE, '{"__proto__":{"polluted":true},"a":1}')],
  ['JSON over 100kb by its length', post(JSON_TYPE, JSON.stringify({ a: 'x'.repeat(110 * 1024) }))],
  ['JSON over 100kb, chunked', post(JSON_TYPE, Array.from({ length: 12 }, () => 'x'.repeat(10 * 1024)))],
  ['gzip JSON', post(JSON_TYPE, zlib.gzipSync('{"zipped":true}'), { 'content-encoding': 'gzip' })],
  ['deflate JSON', post(JSON_TYPE, zlib.deflateSync('{"deflated":true}'), { 'content-encoding': 'deflate' })],
  ['brotli JSON', post(JSON_TYPE, zlib.brotliCompressSync('{"br":true}'), { 'content-encoding': 'br' })],
  ['damaged gzip JSON', post(JSON_TYPE, zlib.gzipSync('{"zipped":true}').subarray(0, 12), { 'content-encoding': 'gzip' })],
  ['an unsupported Content-Encoding', post(JSON_TYPE, '{"a":1}', { 'content-encoding': 'compress' })],
  ['a gzip bomb', post(JSON_TYPE, zlib.gzipSync('[' + '0,'.repeat(200 * 1024) + '0]'), { 'content-encoding': 'gzip' })],
  ['a nested form (extended)', post(FORM_TYPE, 'user[name]=tobi&user[tags][]=a&user[tags][]=b&plain=1')],
  ['a form with a charset not UTF-8', post('application/x-www-form-urlencoded; charset=koi8-r', 'a=1')],
  ['a form of 1001 parameters', post(FORM_TYPE, Array.from({ length: 1001 }, (_, i) => `p${i}=${i}`).join('&'))],
  ['a form nested deeper than qs goes', post(FORM_TYPE, 'a' + '[b]'.repeat(40) + '=1')],
  ['text, which neither parser reads', post('text/plain', 'hello')],
  ['no Content-Type', post(undefined, 'hello')]
]

describe('Nest keeps bodykit\'s parsers and adds none of its own', () => {
  it('json() and urlencoded() mounted before Nest starts are the only layers with the names Nest looks for', async (t) => {
    const json = bodykit.json()
    const urlencoded = bodykit.urlencoded({ extended: true })
    const app = await startNestApp(t, { setup: (nest) => nest.use(json, urlencoded) })
    assert.deepEqual(layersNamed(app.app, 'jsonParser'), [json])
    assert.deepEqual(layersNamed(app.app, 'urlencodedParser'), [urlencoded])
  })

  it('without them, Nest mounts its own (the body-parser Express exports)', async (t) => {
    const app = await startNestApp(t)
    const [nestJson] = layersNamed(app.app, 'jsonParser')
    assert.equal(typeof nestJson, 'function')
    assert.notEqual(nestJson, bodykit.json())
    assert.equal(layersNamed(app.app, 'urlencodedParser').length, 1)
  })

  it('bodyParser: false then app.use() gives the same stack', async (t) => {
    const json = bodykit.json()
    const app = await startNestApp(t, { factory: { bodyParser: false }, setup: (nest) => nest.use(json) })
    assert.deepEqual([layersNamed(app.app, 'jsonParser'), layersNamed(app.app, 'urlencodedParser')], [[json], []])
  })
})

describe('a Nest app answers as with its own parsers', () => {
  for (const rawBody of [false, true]) {
    it(`every request${rawBody ? ', rawBody: true (bodykit\'s rawBody option beside Nest\'s)' : ''}`, async (t) => {
      const nest = await startNestApp(t, { factory: { rawBody } })
      const withBodykit = await startNestApp(t, { factory: { rawBody }, setup: bodykitParsers(rawBody) })
      for (const [name, request] of REQUESTS) {
        assert.deepEqual(await answer(withBodykit, request), await answer(nest, request), name)
      }
    })
  }

  it('bodykit\'s 400, 413 and 415 in Nest\'s error JSON, pinned', async (t) => {
    const app = await startNestApp(t, { setup: bodykitParsers() })
    const [malformed, large, charset] = await Promise.all([
      answer(app, post(JSON_TYPE, '{"a":')),
      answer(app, post(JSON_TYPE, 'x'.repeat(200 * 1024))),
      answer(app, post('application/json; charset=latin1', '{}'))
    ])
    assert.equal(malformed.status, 400)
    assert.equal(malformed.json.statusCode, 400)
    assert.deepEqual(large, { status: 413, json: { statusCode: 413, message: 'request entity too large' } })
    assert.deepEqual(charset, { status: 415, json: { statusCode: 415, message: 'unsupported charset "LATIN1"' } })
  })

  it('rawBody holds the inflated bytes, as Nest\'s rawBody: true does', async (t) => {
    const app = await startNestApp(t, { factory: { rawBody: true }, setup: bodykitParsers(true) })
    const reply = await answer(app, post(JSON_TYPE, zlib.gzipSync('{"signed":true}'), { 'content-encoding': 'gzip' }))
    assert.deepEqual(reply.json, { body: { signed: true }, rawBody: Buffer.from('{"signed":true}').toString('base64') })
  })

  it('drawn bodies: damaged, compressed, and sized around the limit', async (t) => {
    const nest = await startNestApp(t)
    const withBodykit = await startNestApp(t, { setup: bodykitParsers() })
    const LIMIT = 100 * 1024
    const body = fc.oneof(
      fc.json().map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      fc.string({ maxLength: 64 }).map((text) => Buffer.from(text)),
      fc.integer({ min: LIMIT - 16, max: LIMIT + 16 }).map((size) => Buffer.from(JSON.stringify('x'.repeat(Math.max(0, size - 2)))))
    )
    const request = fc.record({
      body,
      type: fc.constantFrom(JSON_TYPE, FORM_TYPE, 'application/json; charset=utf-16le', 'application/vnd.api+json'),
      encoding: fc.constantFrom('identity', 'gzip', 'deflate', 'br'),
      damage: fc.nat({ max: 40 }),
      chunked: fc.boolean()
    }).map(({ body, type, encoding, damage, chunked }): RequestOptions => {
      const packed = encoding === 'gzip' ? zlib.gzipSync(body) : encoding === 'deflate' ? zlib.deflateSync(body) : encoding === 'br' ? zlib.brotliCompressSync(body) : body
      // A damage of n cuts the last n bytes of a compressed body.
      const sent = encoding === 'identity' ? packed : packed.subarray(0, Math.max(0, packed.length - damage))
      const headers = { 'content-type': type, 'content-encoding': encoding }
      return { headers, body: chunked ? [sent] : sent }
    })
    await fc.assert(fc.asyncProperty(request, async (drawn) => {
      assert.deepEqual(await answer(withBodykit, drawn), await answer(nest, drawn))
    }), { numRuns: Number(process.env.NEST_DRAWN_RUNS ?? 60) })
  })
})

describe('options per route and app.useBodyParser', () => {
  it('a larger limit on one route, through Nest\'s MiddlewareConsumer, as with body-parser', async (t) => {
    const largeRoute = { path: 'large', method: RequestMethod.POST }
    const routes = (json: typeof bodykit.json): NestAppOptions => ({
      factory: { bodyParser: false },
      configure: (consumer) => {
        consumer.apply(json({ limit: '1mb' })).forRoutes(largeRoute)
        consumer.apply(json()).exclude(largeRoute).forRoutes('*path')
      }
    })
    const nest = await startNestApp(t, routes(bodyParser.json as typeof bodykit.json))
    const withBodykit = await startNestApp(t, routes(bodykit.json))
    const request = post(JSON_TYPE, JSON.stringify({ a: 'x'.repeat(200 * 1024) }))
    for (const path of ['/large', '/echo']) {
      const [expected, actual] = [await sendRequest(nest.port, { ...request, path }), await sendRequest(withBodykit.port, { ...request, path })]
      assert.deepEqual([actual.status, actual.json], [expected.status, expected.json], path)
    }
    assert.equal((await sendRequest(withBodykit.port, { ...request, path: '/echo' })).status, 413)
  })

  it('app.useBodyParser(\'text\') and (\'raw\') still add body-parser\'s, beside bodykit\'s json and urlencoded', async (t) => {
    const app = await startNestApp(t, {
      setup: (nest) => {
        bodykitParsers()?.(nest)
        nest.useBodyParser('text')
        nest.useBodyParser('raw', { type: 'application/octet-stream' })
      }
    })
    assert.deepEqual((await answer(app, post('text/plain', 'hello'))).json, { body: 'hello' })
    assert.deepEqual((await answer(app, post('application/octet-stream', 'bytes'))).json, { body: { $buffer: Buffer.from('bytes').toString('base64') } })
    assert.deepEqual((await answer(app, post(JSON_TYPE, '{"a":1}'))).json, { body: { a: 1 } })
  })

  it('app.useBodyParser(\'json\', { limit }) and app.use(json({ limit })) answer alike around the limit', async (t) => {
    const nest = await startNestApp(t, { setup: (app) => app.useBodyParser('json', { limit: '2kb' }) })
    const withBodykit = await startNestApp(t, { setup: (app) => app.use(bodykit.json({ limit: '2kb' })) })
    for (const size of [2046, 2047, 2048, 2049, 2050]) {
      const request = post(JSON_TYPE, JSON.stringify('x'.repeat(size - 2)))
      assert.deepEqual(await answer(withBodykit, request), await answer(nest, request), `${size} bytes`)
    }
  })
})

describe('beyond body-parser, in a Nest app', () => {
  it('a body declared over the limit is answered 413 before it is sent', async (t) => {
    const app = await startNestApp(t, { setup: bodykitParsers() })
    const head = `POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: 10000000\r\nConnection: close\r\n\r\n`
    const reply = await rawRequest(app.port, head)
    assert.deepEqual([reply.status, reply.json], [413, { statusCode: 413, message: 'request entity too large' }])
  })

  it('a body too large to read off is not read: the 413 closes the connection', async (t) => {
    const app = await startNestApp(t, { setup: (nest) => nest.use(bodykit.json({ discardLimit: '64kb' })) })
    const head = `POST /echo HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${64 * 1024 * 1024}\r\n\r\n`
    const reply = await rawRequest(app.port, [head, ...Array.from({ length: 1024 }, () => Buffer.alloc(64 * 1024, 0x20))])
    assert.deepEqual([reply.status, reply.headers.connection], [413, 'close'])
  })

  it('the poisoning guard, opt-in: a __proto__ key is a 400 in Nest\'s JSON', async (t) => {
    const app = await startNestApp(t, { setup: (nest) => nest.use(bodykit.json({ onProtoPoisoning: 'error' })) })
    const reply = await answer(app, post(JSON_TYPE, '{"__proto__":{"admin":true}}'))
    assert.deepEqual(reply.status, 400)
    assert.equal(reply.json.statusCode, 400)
  })
})
