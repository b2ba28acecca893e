// isBodyParserError: true for exactly the errors bodykit passed to `next` (zlib's included), in both entries.
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { serve, type Middleware, type RequestOptions } from '../helpers/server'

/** Every `type` the README lists, as the guard's union promises; `undefined` is the zlib pass-through. */
const TYPES = new Set([
  'charset.unsupported', 'encoding.unsupported', 'entity.parse.failed', 'entity.too.large', 'entity.verify.failed',
  'parameters.too.many', 'querystring.parse.rangeError', 'request.aborted', 'request.size.invalid',
  'stream.encoding.set', 'stream.not.readable', undefined
])

/** Sends one request through a middleware and returns the error it passed to `next` (or undefined). */
async function errorOf (t: TestContext, middleware: Middleware, request: RequestOptions, before: Middleware[] = []): Promise<unknown> {
  let captured: unknown
  const server = await serve(t, (req, res, next) => {
    middleware(req, res, (err) => {
      captured = err
      next(err)
    })
  }, { before })
  await server.request({ method: 'POST', ...request })
  return captured
}

const post = (contentType: string, body: string | Buffer, headers: Record<string, string> = {}): RequestOptions =>
  ({ headers: { 'content-type': contentType, ...headers }, body })

const setEncoding: Middleware = (req: IncomingMessage, _res: ServerResponse, next) => {
  req.setEncoding('utf8')
  next()
}

for (const [name, entry] of [['bodykit', bodykit], ['bodykit/legacy', legacy]] as const) {
  describe(name + ': isBodyParserError', () => {
    // [what, middleware, request, expected type, middlewares run before]
    const cases: Array<[string, Middleware, RequestOptions, string | undefined, Middleware[]?]> = [
      ['a JSON syntax error', entry.json(), post('application/json', '{'), 'entity.parse.failed'],
      ['a reviver that throws', entry.json({ reviver: () => { throw new Error('no') } }), post('application/json', '{"a":1}'), 'entity.parse.failed'],
      ['a declared length over the limit', entry.json({ limit: 2 }), post('application/json', '{"a":1}'), 'entity.too.large'],
      ['an unsupported charset', entry.json(), post('application/json; charset=klingon', '{}'), 'charset.unsupported'],
      ['inflate disabled', entry.json({ inflate: false }), post('application/json', zlib.gzipSync('{}'), { 'content-encoding': 'gzip' }), 'encoding.unsupported'],
      ['an unknown encoding', entry.raw(), post('application/octet-stream', 'x', { 'content-encoding': 'compress' }), 'encoding.unsupported'],
      ['a verify that throws', entry.raw({ verify () { throw new Error('signature') } }), post('application/octet-stream', 'x'), 'entity.verify.failed'],
      ['too many parameters', entry.urlencoded({ extended: false, parameterLimit: 1 }), post('application/x-www-form-urlencoded', 'a=1&b=2'), 'parameters.too.many'],
      ['a form nested too deep', entry.urlencoded({ extended: true, depth: 1 }), post('application/x-www-form-urlencoded', 'a[b][c][d]=1'), 'querystring.parse.rangeError'],
      ['an encoding set on the stream', entry.text(), post('text/plain', 'x'), 'stream.encoding.set', [setEncoding]],
      ['a corrupt gzip body (zlib\'s error)', entry.json(), post('application/json', Buffer.from('not gzip'), { 'content-encoding': 'gzip' }), undefined]
    ]
    for (const [what, middleware, request, type, before] of cases) {
      it('recognises ' + what + ' (' + String(type) + ')', async (t) => {
        const err = await errorOf(t, middleware, request, before)
        assert.ok(entry.isBodyParserError(err), 'not recognised: ' + String(err))
        assert.equal(err.type, type)
        assert.ok(TYPES.has(err.type))
        assert.equal(typeof err.status, 'number')
        if (type === undefined) assert.equal((err as { code?: unknown }).code, 'Z_DATA_ERROR')
      })
    }

    it('recognises the errors of the other entry (one guard for the package)', async (t) => {
      const other = entry === bodykit ? legacy : bodykit
      assert.ok(entry.isBodyParserError(await errorOf(t, other.json(), post('application/json', '['))))
    })

    it('does not recognise look-alikes, other errors or non-objects', () => {
      const lookAlike = Object.assign(new Error('request entity too large'), { status: 413, statusCode: 413, expose: true, type: 'entity.too.large', limit: 1 })
      for (const value of [lookAlike, { type: 'entity.parse.failed', status: 400 }, new SyntaxError('x'), null, undefined, 'entity.too.large', 413]) {
        assert.equal(entry.isBodyParserError(value), false, String(value))
      }
    })

    it('leaves an error that verify threw with its own type to the caller, with status and body added', async (t) => {
      const own = Object.assign(new Error('bad signature'), { type: 'webhook.signature', status: 401 })
      const err = await errorOf(t, entry.raw({ verify () { throw own } }), post('application/octet-stream', 'x'))
      assert.equal(err, own)
      assert.equal(entry.isBodyParserError(err), false)
      assert.deepEqual([own.status, (own as unknown as { body: Buffer }).body], [401, Buffer.from('x')])
    })

    it('recognises a verify error without a type, keeping its status', async (t) => {
      const err = await errorOf(t, entry.json({ verify () { throw Object.assign(new Error('nope'), { status: 401 }) } }), post('application/json', '{}'))
      assert.ok(entry.isBodyParserError(err))
      assert.deepEqual([err.type, err.status], ['entity.verify.failed', 401])
    })
  })
}
