// One regression test per entry of research/security-history.md that applies to a body parser, for
// both entries. Early 413s, bounded draining, byte counting, aborts and fuzzing live in test/hostile
// and test/fuzz.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { rawHead, serve, type Middleware } from '../helpers/server'

const JSON_TYPE = 'application/json'
const FORM = 'application/x-www-form-urlencoded'

// Any uncaught error (a late zlib error, say) is recorded here and fails the suite below.
const uncaught: unknown[] = []
function onUncaught (err: unknown): void {
  uncaught.push(err)
}
const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort()
before(() => { process.on('uncaughtException', onUncaught) })
after(() => { process.off('uncaughtException', onUncaught) })

/** Records, on the server, what a parsed body's prototype is and whether `{}` gained properties. */
const inspectPrototype: Middleware = function inspectPrototype (req, res, next) {
  const body = (req as IncomingMessage & { body?: unknown }).body
  res.setHeader('x-body-proto', body !== null && typeof body === 'object'
    ? (Object.getPrototypeOf(body) === Object.prototype ? 'Object.prototype' : Object.getPrototypeOf(body) === null ? 'null' : 'other')
    : typeof body)
  res.setHeader('x-polluted', String(({} as Record<string, unknown>).polluted))
  next()
}

for (const entry of entries) {
  const { json, raw, text, urlencoded } = entry.parsers

  describe(`${entry.name} entry: security regressions`, () => {
    it('CVE-2024-45590: 33 levels of nesting give 400 querystring.parse.rangeError, 32 parse', async (t) => {
      const server = await serve(t, urlencoded({ extended: true }))
      const ok = 'a' + '[b]'.repeat(32) + '=1'
      assert.equal((await server.post(FORM, ok)).status, 200)
      const deep = 'a' + '[b]'.repeat(33) + '=1'
      assertReply(await server.post(FORM, deep), 400,
        httpError(400, 'The input exceeded the depth', { body: deep, type: 'querystring.parse.rangeError' }))
    })

    it('CVE-2025-13466: a body of one million "&" gets 413 parameters.too.many', async (t) => {
      const server = await serve(t, [urlencoded({ extended: false, limit: '2mb' }), urlencoded({ extended: true, limit: '2mb', type: () => true })])
      const reply = await server.post(FORM, '&'.repeat(1_000_000))
      assert.deepEqual([reply.status, reply.json.type, reply.json.message], [413, 'parameters.too.many', 'too many parameters'])
      const extended = await serve(t, urlencoded({ extended: true, limit: '2mb' }))
      assert.equal((await extended.post(FORM, 'a=1' + '&'.repeat(1_000_000))).status, 413)
    })

    it('GHSA-v422-hmwv-36x6: a limit bytes cannot read throws when the middleware is created', () => {
      for (const factory of [json, raw, text, urlencoded]) {
        for (const [limit, shown] of [['abc', 'abc'], [NaN, 'NaN'], [true, 'true'], [{}, '[object Object]']] as const) {
          assert.throws(() => factory({ limit, extended: true }), { name: 'TypeError', message: `option limit "${shown}" is invalid` })
        }
      }
    })

    it('GHSA-v422-hmwv-36x6: limit null means 100kb', async (t) => {
      const server = await serve(t, json({ limit: null }))
      assertReply(await server.post(JSON_TYPE, '[' + '1,'.repeat(51200) + '1]'), 413,
        httpError(413, 'request entity too large', { expected: 102403, length: 102403, limit: 102400, type: 'entity.too.large' }))
    })

    it('CVE-2018-3711: every parser applies a default limit', async (t) => {
      const big = Buffer.alloc(102401, 0x61)
      for (const [factory, contentType] of [[json, JSON_TYPE], [raw, 'application/octet-stream'], [text, 'text/plain'], [urlencoded, FORM]] as const) {
        const server = await serve(t, factory({ extended: false }))
        assert.equal((await server.post(contentType, big)).json.limit, 102400)
      }
    })

    it('bp #255: a gzip bomb over the limit gives exactly one 413 and no uncaught error', async (t) => {
      const server = await serve(t, json())
      const bomb = zlib.gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20))
      const reply = await server.post(JSON_TYPE, bomb, { 'content-encoding': 'gzip' })
      assert.deepEqual([reply.status, reply.json.type, reply.json.limit], [413, 'entity.too.large', 102400])
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual([server.results.length, uncaught], [1, []])
    })

    it('2.4.0 hardening: bytes after the gzip member give one reply and no uncaught error', async (t) => {
      const server = await serve(t, json())
      const body = Buffer.concat([zlib.gzipSync('{"a":1}'), Buffer.from('trailing bytes')])
      const reply = await server.post(JSON_TYPE, body, { 'content-encoding': 'gzip' })
      assertReply(reply, 400, httpError(400, 'incorrect header check', { name: 'Error', errno: -3, code: 'Z_DATA_ERROR' }))
      const chunked = await server.request({ headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, body: [zlib.gzipSync('{"a":1}'), Buffer.from([0x1f, 0x8b])] })
      assertReply(chunked, 400, httpError(400, 'unexpected end of file', { name: 'Error', errno: -5, code: 'Z_BUF_ERROR' }))
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual([server.results.length, uncaught], [2, []])
    })

    it('2.4.0 hardening: gzip + verify + an unknown charset gives 415 and no uncaught error', async (t) => {
      const server = await serve(t, text({ verify: () => {} }))
      for (const body of [zlib.gzipSync('hello'), Buffer.from('not gzip at all')]) {
        assertReply(await server.post('text/plain; charset=x-bogus', body, { 'content-encoding': 'gzip' }), 415,
          httpError(415, 'unsupported charset "X-BOGUS"', { charset: 'x-bogus', type: 'charset.unsupported' }))
      }
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(uncaught, [])
    })

    it('CVE-2022-24999: a[__proto__]=b&a[__proto__]&a[length]=100000000 parses without expansion', async (t) => {
      const server = await serve(t, urlencoded({ extended: true }))
      assertBody(await server.post(FORM, 'a[__proto__]=b&a[__proto__]&a[length]=100000000'), { a: { length: '100000000' } })
    })

    it('CVE-2025-15284: many a[]= give an array bounded by parameterLimit, and more give 413', async (t) => {
      const server = await serve(t, urlencoded({ extended: true }))
      const reply = await server.post(FORM, Array(1000).fill('a[]=').join('&'))
      assert.deepEqual([reply.status, (reply.json.body as { a: unknown[] }).a.length], [200, 1000])
      assert.equal((await server.post(FORM, Array(1001).fill('a[]=').join('&'))).status, 413)
      const small = await serve(t, urlencoded({ extended: true, parameterLimit: 5 }))
      assert.equal((await small.post(FORM, Array(6).fill('a[]=x').join('&'))).json.type, 'parameters.too.many')
    })

    it('CVE-2022-39288: Content-Types and charsets named after Object.prototype members do not throw', async (t) => {
      const server = await serve(t, [json(), raw(), text(), urlencoded({ extended: true })])
      for (const contentType of ['constructor', 'toString', '__proto__', 'hasOwnProperty', 'constructor/prototype', '__proto__/__proto__']) {
        assertBody(await server.post(contentType, '{"a":1}'), entry.unparsedBody)
      }
      const texts = await serve(t, text())
      for (const charset of ['constructor', 'tostring', '__proto__', 'hasownproperty']) {
        assertReply(await texts.post(`text/plain; charset=${charset}`, 'x'), 415,
          httpError(415, `unsupported charset "${charset.toUpperCase()}"`, { charset, type: 'charset.unsupported' }))
      }
    })

    it('CVE-2022-39288: a type option named after an Object.prototype member matches nothing', async (t) => {
      for (const type of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
        const server = await serve(t, json({ type }))
        assertBody(await server.post(JSON_TYPE, '{"a":1}'), entry.unparsedBody)
        assertBody(await server.post(type, '{"a":1}'), entry.unparsedBody)
      }
    })

    it('CVE-2022-41919: a text/plain body holding JSON never reaches json()', async (t) => {
      const server = await serve(t, [json(), text()])
      assertBody(await server.post('text/plain', '{"csrf":true}'), '{"csrf":true}')
      const jsonOnly = await serve(t, json())
      assertBody(await jsonOnly.post('text/plain', '{"csrf":true}'), entry.unparsedBody)
      assertBody(await jsonOnly.post(FORM, '{"csrf":true}'), entry.unparsedBody)
      assertBody(await jsonOnly.post('multipart/form-data; boundary=x', '{"csrf":true}'), entry.unparsedBody)
    })

    it('CVE-2025-32442: case and whitespace variants of the Content-Type reach the same parser', async (t) => {
      const server = await serve(t, [json(), text()])
      for (const contentType of ['application/json', 'Application/JSON', 'APPLICATION/JSON; CHARSET=UTF-8', 'application/json ;charset=utf-8', 'application/json;  charset=utf-8']) {
        assertBody(await server.post(contentType, '{"v":1}'), { v: 1 })
      }
    })

    it('CVE-2026-25223: a tab before ";" is read as its variant reads it', async (t) => {
      const server = await serve(t, json())
      const reply = await server.raw(rawHead({ 'Content-Type': 'application/json\t; x=1', 'Content-Length': 7 }) + '{"t":1}')
      assert.deepEqual({ status: reply.status, body: reply.json?.body }, { status: 200, body: entry.lenientContentTypes ? { t: 1 } : entry.unparsedBody })
    })

    it('CVE-2026-3419: "application/json garbage" does not match', async (t) => {
      const server = await serve(t, json())
      assertBody(await server.post('application/json garbage', '{"g":1}'), entry.unparsedBody)
      assertBody(await server.post('application/jsongarbage', '{"g":1}'), entry.unparsedBody)
    })

    it('CVE-2026-33806: leading whitespace in the header gives the canonical type', async (t) => {
      const server = await serve(t, json())
      const reply = await server.raw(rawHead({ 'Content-Type': '   \tapplication/json', 'Content-Length': 7 }) + '{"l":1}')
      assert.deepEqual({ status: reply.status, body: reply.json?.body }, { status: 200, body: { l: 1 } })
    })

    it('GHSA-v8w9-8mx6-g223: nesting never creates or walks __proto__, constructor or prototype', async (t) => {
      const server = await serve(t, [urlencoded({ extended: true }), inspectPrototype])
      const cases: ReadonlyArray<[string, unknown]> = [
        ['__proto__[polluted]=1', {}],
        ['a[__proto__][polluted]=1', { a: {} }],
        ['a[b][__proto__][polluted]=1', { a: { b: {} } }],
        ['constructor[prototype][polluted]=1', { constructor: { prototype: { polluted: '1' } } }],
        ['a.__proto__.polluted=1', { 'a.__proto__.polluted': '1' }]
      ]
      for (const [body, expected] of cases) {
        const reply = await server.post(FORM, body)
        assert.deepEqual([reply.json.body, reply.headers['x-body-proto'], reply.headers['x-polluted']], [expected, 'Object.prototype', 'undefined'])
      }
    })

    it('GHSA-v8w9-8mx6-g223: a JSON __proto__ key stays an own property', async (t) => {
      const server = await serve(t, [json(), inspectPrototype])
      const reply = await server.post(JSON_TYPE, '{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}}}')
      assert.deepEqual([reply.json.body, reply.headers['x-body-proto'], reply.headers['x-polluted']],
        [{ ['__proto__']: { polluted: 1 }, constructor: { prototype: { polluted: 1 } } }, 'Object.prototype', 'undefined'])
    })

    it(`simple mode: a __proto__ key ${entry.simpleMode === 'querystring' ? 'is kept on a null-prototype object' : 'is dropped'}`, async (t) => {
      const server = await serve(t, [urlencoded({ extended: false }), inspectPrototype])
      const reply = await server.post(FORM, '__proto__=x&constructor=y')
      assert.deepEqual([reply.json.body, reply.headers['x-body-proto'], reply.headers['x-polluted']], entry.simpleMode === 'querystring'
        ? [{ ['__proto__']: 'x', constructor: 'y' }, 'null', 'undefined']
        : [{ constructor: 'y' }, 'Object.prototype', 'undefined'])
    })
  })
}

describe('after every regression above', () => {
  it('Object.prototype has the same properties and nothing was thrown uncaught', () => {
    assert.deepEqual([Object.getOwnPropertyNames(Object.prototype).sort(), uncaught], [prototypeBefore, []])
  })
})
