// The read pipeline over HTTP, for both entries: skip checks, req.body defaults, inflation, limits,
// verify and every error row of spec section 7 except the urlencoded ones (see urlencoded.test.ts).
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import net from 'node:net'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import { entries, hasZstd } from '../helpers/entries'
import { assertBody, assertReply, httpError, jsonParseMessage } from '../helpers/expect'
import { buffer, chunkedBody, rawHead, serve, type Middleware } from '../helpers/server'

type BodyRequest = IncomingMessage & { body?: unknown, _body?: unknown }

const JSON_TYPE = 'application/json'

/** A middleware that sets `req.body` (and optionally the 1.x flag) before the parser runs. */
function preset (body: unknown, flag?: boolean): Middleware {
  return function presetBody (req, _res, next) {
    (req as BodyRequest).body = body
    if (flag) (req as BodyRequest)._body = true
    next()
  }
}

/** A middleware that reads the whole body itself, as a misplaced second body reader would. */
const consumeBody: Middleware = function consumeBody (req, _res, next) {
  req.on('data', () => {})
  req.on('end', () => next())
}

for (const entry of entries) {
  const { json, raw, text, urlencoded } = entry.parsers

  describe(`${entry.name} entry: when nothing is parsed`, () => {
    it('leaves req.body at its unparsed value for a request without a body', async (t) => {
      const server = await serve(t, json())
      const reply = await server.raw(rawHead({ 'Content-Type': JSON_TYPE }))
      assert.deepEqual({ status: reply.status, json: reply.json }, { status: 200, json: { body: entry.unparsedBody } })
    })

    it('leaves req.body at its unparsed value when the Content-Type does not match', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post('text/plain', '{"a":1}'), 200, { body: entry.unparsedBody })
    })

    it('leaves req.body at its unparsed value without a Content-Type', async (t) => {
      const server = await serve(t, [json(), raw(), text(), urlencoded({ extended: true })])
      assertReply(await server.post(undefined, '{"a":1}'), 200, { body: entry.unparsedBody })
    })

    it('keeps a body set earlier when the type does not match', async (t) => {
      const server = await serve(t, json(), { before: [preset({ earlier: true })] })
      assertReply(await server.post('text/plain', 'x'), 200, { body: { earlier: true } })
    })

    it('handles a falsy body set earlier as its variant does', async (t) => {
      const server = await serve(t, json(), { before: [preset('')] })
      const expected = entry.name === 'default' ? '' : {}
      assertReply(await server.post('text/plain', 'x'), 200, { body: expected })
    })

    it('parses a GET request that has a body (the method is not checked)', async (t) => {
      const server = await serve(t, json())
      const reply = await server.request({ method: 'GET', headers: { 'content-type': JSON_TYPE }, body: '{"get":true}' })
      assertBody(reply, { get: true })
    })

    it('parses a DELETE request that has a chunked body', async (t) => {
      const server = await serve(t, json())
      const reply = await server.request({ method: 'DELETE', headers: { 'content-type': JSON_TYPE }, body: ['{"del', 'ete":1}'] })
      assertBody(reply, { delete: 1 })
    })

    it('treats Content-Length: 0 as an empty body that each parser parses', async (t) => {
      for (const [factory, contentType, expected] of [
        [json, JSON_TYPE, {}],
        [raw, 'application/octet-stream', buffer('')],
        [text, 'text/plain', ''],
        [urlencoded, 'application/x-www-form-urlencoded', {}]
      ] as const) {
        const server = await serve(t, factory({ extended: false }))
        assertBody(await server.post(contentType, ''), expected)
      }
    })
  })

  describe(`${entry.name} entry: an already read body`, () => {
    it(entry.bodyFlag ? 'sets req._body once it reads a body' : 'sets no req._body flag', async (t) => {
      const server = await serve(t, json())
      const expected = entry.bodyFlag ? { body: { a: 1 }, _body: true } : { body: { a: 1 } }
      assertReply(await server.post(JSON_TYPE, '{"a":1}'), 200, expected)
    })

    it(entry.bodyFlag ? 'skips a request whose req._body is already set' : 'ignores a foreign req._body flag', async (t) => {
      const server = await serve(t, json(), { before: [preset(undefined, true)] })
      // The preset leaves `body` defined but undefined, so the legacy skip shows it untouched.
      const expected = entry.bodyFlag
        ? { body: { $undefined: true }, _body: true }
        : { body: { a: 1 }, _body: true }
      assertReply(await server.post(JSON_TYPE, '{"a":1}'), 200, expected)
    })

    it('lets the first matching parser read the body and the next ones pass', async (t) => {
      const server = await serve(t, [json(), json({ type: () => true }), text({ type: '*/*' })])
      assertBody(await server.post(JSON_TYPE, '{"first":true}'), { first: true })
    })

    it(entry.consumedStream === 'skip'
      ? 'passes a request whose body was consumed elsewhere without touching req.body'
      : 'answers 500 stream.not.readable when the body was consumed elsewhere', async (t) => {
      const server = await serve(t, json(), { before: [consumeBody] })
      const reply = await server.post(JSON_TYPE, '{"a":1}')
      if (entry.consumedStream === 'skip') {
        assertReply(reply, 200, {})
      } else {
        assertReply(reply, 500, httpError(500, 'stream is not readable', { type: 'stream.not.readable' }))
      }
    })
  })

  describe(`${entry.name} entry: reading errors (spec section 7)`, () => {
    it('answers 500 stream.encoding.set when req.setEncoding was called', async (t) => {
      const setEncoding: Middleware = function setEncoding (req, _res, next) {
        req.setEncoding('utf8')
        next()
      }
      const server = await serve(t, json(), { before: [setEncoding] })
      assertReply(await server.post(JSON_TYPE, '{"a":1}'), 500,
        httpError(500, 'stream encoding should not be set', { type: 'stream.encoding.set' }))
    })

    it('answers 413 entity.too.large from a declared length over the limit', async (t) => {
      const server = await serve(t, json({ limit: 10 }))
      assertReply(await server.post(JSON_TYPE, '{"a":"12345678"}'), 413,
        httpError(413, 'request entity too large', { expected: 16, length: 16, limit: 10, type: 'entity.too.large' }))
    })

    it('answers 413 entity.too.large with `received` for a chunked body over the limit', async (t) => {
      const server = await serve(t, text({ limit: 10 }))
      const reply = await server.raw([rawHead({ 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }) + chunkedBody(['x'.repeat(11)]).toString()])
      assertReply({ status: reply.status, json: reply.json ?? {} }, 413,
        httpError(413, 'request entity too large', { limit: 10, received: 11, type: 'entity.too.large' }))
    })

    it('answers 400 request.size.invalid when fewer bytes than declared reach the parser', async (t) => {
      // Something read 3 bytes first, so the parser sees a body shorter than its Content-Length.
      const readThree: Middleware = function readThree (req, _res, next) {
        req.once('readable', () => {
          req.read(3)
          next()
        })
      }
      const server = await serve(t, text(), { before: [readThree] })
      assertReply(await server.post('text/plain', 'hello world'), 400,
        httpError(400, 'request size did not match content length', { expected: 11, length: 11, received: 8, type: 'request.size.invalid' }))
    })

    it('reports 400 request.aborted with received and expected when the client leaves', async (t) => {
      let arrived!: () => void
      const arrival = new Promise<void>((resolve) => { arrived = resolve })
      const signal: Middleware = function signalArrival (_req, _res, next) {
        arrived()
        next()
      }
      const server = await serve(t, text(), { before: [signal] })
      const socket = net.connect(server.port, '127.0.0.1')
      socket.on('error', () => {})
      socket.write(rawHead({ 'Content-Type': 'text/plain', 'Content-Length': 100 }) + '0123456789')
      await arrival
      await new Promise((resolve) => setImmediate(resolve))
      socket.destroy()
      const result = await server.nextResult()
      assertReply(result, 400, httpError(400, 'request aborted', {
        code: 'ECONNABORTED', expected: 100, length: 100, received: 10, type: 'request.aborted'
      }))
    })

    it('answers 415 charset.unsupported for a charset the parser refuses', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post('application/json; charset=koi8-r', '{}'), 415,
        httpError(415, 'unsupported charset "KOI8-R"', { charset: 'koi8-r', type: 'charset.unsupported' }))
    })

    it('answers 415 charset.unsupported for a charset nobody can decode', async (t) => {
      const server = await serve(t, text())
      assertReply(await server.post('text/plain; charset=x-bogus', 'hi'), 415,
        httpError(415, 'unsupported charset "X-BOGUS"', { charset: 'x-bogus', type: 'charset.unsupported' }))
    })

    it('answers 400 entity.parse.failed with the body and the parser message', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post(JSON_TYPE, '{"a":'), 400,
        httpError(400, jsonParseMessage('{"a":'), { name: 'SyntaxError', body: '{"a":', type: 'entity.parse.failed' }))
    })
  })

  describe(`${entry.name} entry: Content-Encoding`, () => {
    const payload = '{"compressed":true}'
    const compressors: Record<string, (data: string) => Buffer> = {
      gzip: (data) => zlib.gzipSync(data),
      deflate: (data) => zlib.deflateSync(data),
      br: (data) => zlib.brotliCompressSync(data),
      ...(hasZstd ? { zstd: (data: string) => (zlib as unknown as { zstdCompressSync: (d: string) => Buffer }).zstdCompressSync(data) } : {})
    }

    for (const [encoding, compress] of Object.entries(compressors)) {
      const supported = entry.encodings.includes(encoding)
      it(supported ? `inflates ${encoding}` : `answers 415 for ${encoding}`, async (t) => {
        const server = await serve(t, json())
        const reply = await server.post(JSON_TYPE, compress(payload), { 'content-encoding': encoding })
        if (supported) assertBody(reply, { compressed: true })
        else {
          assertReply(reply, 415, httpError(415, `unsupported content encoding "${encoding}"`, { encoding, type: 'encoding.unsupported' }))
        }
      })
    }

    it(hasZstd && entry.encodings.includes('zstd')
      ? 'decodes zstd on this Node (zlib.createZstdDecompress exists)'
      : 'answers 415 for zstd on this Node (no zlib.createZstdDecompress, or a variant without it)', async (t) => {
      const server = await serve(t, raw())
      const body = hasZstd ? compressors.zstd('zstd body') : Buffer.from('not really zstd')
      const reply = await server.post('application/octet-stream', body, { 'content-encoding': 'zstd' })
      if (hasZstd && entry.encodings.includes('zstd')) assertBody(reply, buffer('zstd body'))
      else assertReply(reply, 415, httpError(415, 'unsupported content encoding "zstd"', { encoding: 'zstd', type: 'encoding.unsupported' }))
    })

    it('reads an unknown Content-Encoding as 415 with the lower-cased encoding', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post(JSON_TYPE, payload, { 'content-encoding': 'X-Compress' }), 415,
        httpError(415, 'unsupported content encoding "x-compress"', { encoding: 'x-compress', type: 'encoding.unsupported' }))
    })

    it('matches the encoding name case-insensitively and accepts identity', async (t) => {
      const server = await serve(t, json())
      assertBody(await server.post(JSON_TYPE, zlib.gzipSync(payload), { 'content-encoding': 'GZip' }), { compressed: true })
      assertBody(await server.post(JSON_TYPE, payload, { 'content-encoding': 'identity' }), { compressed: true })
    })

    it('inflates a chunked gzip body', async (t) => {
      const server = await serve(t, text())
      const zipped = zlib.gzipSync('chunked and zipped')
      const reply = await server.request({ headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: [zipped.subarray(0, 7), zipped.subarray(7)] })
      assertBody(reply, 'chunked and zipped')
    })

    it('answers 415 "content encoding unsupported" with inflate: false', async (t) => {
      const server = await serve(t, json({ inflate: false }))
      assertReply(await server.post(JSON_TYPE, zlib.gzipSync(payload), { 'content-encoding': 'gzip' }), 415,
        httpError(415, 'content encoding unsupported', { encoding: 'gzip', type: 'encoding.unsupported' }))
      assertBody(await server.post(JSON_TYPE, payload, { 'content-encoding': 'identity' }), { compressed: true })
    })

    it('applies the limit to the inflated size', async (t) => {
      const server = await serve(t, text({ limit: 100 }))
      const reply = await server.post('text/plain', zlib.gzipSync('a'.repeat(1000)), { 'content-encoding': 'gzip' })
      assert.deepEqual({ status: reply.status, type: reply.json.type, limit: reply.json.limit }, { status: 413, type: 'entity.too.large', limit: 100 })
    })

    it('answers 400 with zlib\'s error for a corrupt gzip body', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post(JSON_TYPE, 'not gzip at all', { 'content-encoding': 'gzip' }), 400,
        httpError(400, 'incorrect header check', { name: 'Error', errno: -3, code: 'Z_DATA_ERROR' }))
    })

    it('gives verify the inflated bytes', async (t) => {
      const seen: string[] = []
      const server = await serve(t, json({ verify: (_req: unknown, _res: unknown, buf: Buffer) => { seen.push(buf.toString()) } }))
      assertBody(await server.post(JSON_TYPE, zlib.deflateSync(payload), { 'content-encoding': 'deflate' }), { compressed: true })
      assert.deepEqual(seen, [payload])
    })
  })

  describe(`${entry.name} entry: limit`, () => {
    it('defaults to 100kb (102400 bytes)', async (t) => {
      const server = await serve(t, raw())
      const ok = await server.post('application/octet-stream', Buffer.alloc(102400, 1))
      assert.equal(ok.status, 200)
      assertReply(await server.post('application/octet-stream', Buffer.alloc(102401, 1)), 413,
        httpError(413, 'request entity too large', { expected: 102401, length: 102401, limit: 102400, type: 'entity.too.large' }))
    })

    it('reads null as the default', async (t) => {
      const server = await serve(t, raw({ limit: null }))
      assert.equal((await server.post('application/octet-stream', Buffer.alloc(102401))).json.limit, 102400)
    })

    for (const [limit, bytes] of [[5, 5], ['1kb', 1024], ['2 KB', 2048], ['1.5kb', 1536], ['7', 7]] as const) {
      it(`takes ${JSON.stringify(limit)} as ${bytes} bytes`, async (t) => {
        const server = await serve(t, text({ limit }))
        assertBody(await server.post('text/plain', 'x'.repeat(bytes)), 'x'.repeat(bytes))
        assertReply(await server.post('text/plain', 'x'.repeat(bytes + 1)), 413, httpError(413, 'request entity too large', {
          expected: bytes + 1, length: bytes + 1, limit: bytes, type: 'entity.too.large'
        }))
      })
    }

    it('counts bytes, not characters', async (t) => {
      const server = await serve(t, text({ limit: 4 }))
      assertBody(await server.post('text/plain', 'éé'), 'éé')
      assert.equal((await server.post('text/plain', 'ééé')).status, 413)
    })
  })

  describe(`${entry.name} entry: verify`, () => {
    it('is called once with req, res, the Buffer and the charset', async (t) => {
      const calls: unknown[] = []
      function verify (req: IncomingMessage, res: unknown, buf: Buffer, encoding: string | null) {
        calls.push([typeof req.headers, typeof (res as { setHeader?: unknown }).setHeader, Buffer.isBuffer(buf), buf.toString('latin1'), encoding])
      }
      const server = await serve(t, [json({ verify }), raw({ verify }), text({ verify }), urlencoded({ verify, extended: false })])
      await server.post(JSON_TYPE, '{"a":1}')
      await server.post('application/octet-stream', 'raw')
      await server.post('text/plain; charset=iso-8859-1', Buffer.from([0xe9]))
      await server.post('application/x-www-form-urlencoded', 'a=b')
      assert.deepEqual(calls, [
        ['object', 'function', true, '{"a":1}', 'utf-8'],
        ['object', 'function', true, 'raw', null],
        ['object', 'function', true, '\u00e9', 'iso-8859-1'],
        ['object', 'function', true, 'a=b', 'utf-8']
      ])
    })

    it('answers 403 entity.verify.failed with the raw body when it throws', async (t) => {
      const server = await serve(t, json({ verify: () => { throw new Error('signature mismatch') } }))
      assertReply(await server.post(JSON_TYPE, '{"a":1}'), 403,
        httpError(403, 'signature mismatch', { name: 'Error', body: buffer('{"a":1}'), type: 'entity.verify.failed' }))
    })

    it('keeps the status and type of the thrown error', async (t) => {
      const verify = () => { throw Object.assign(new Error('no token'), { status: 401, type: 'auth.missing' }) }
      const server = await serve(t, text({ verify }))
      assertReply(await server.post('text/plain', 'hi'), 401,
        httpError(401, 'no token', { name: 'Error', body: buffer('hi'), type: 'auth.missing' }))
    })

    it('does not reject when it returns false', async (t) => {
      const server = await serve(t, text({ verify: () => false }))
      assertBody(await server.post('text/plain', 'fine'), 'fine')
    })

    it('is not called for a request that is not parsed', async (t) => {
      let called = 0
      const server = await serve(t, json({ verify: () => { called++ } }))
      await server.post('text/plain', 'x')
      assert.equal(called, 0)
    })

    it('with an unknown charset, answers 415 before reading', async (t) => {
      const server = await serve(t, text({ verify: () => {} }))
      assertReply(await server.post('text/plain; charset=x-unknown', 'hi'), 415,
        httpError(415, 'unsupported charset "X-UNKNOWN"', { charset: 'x-unknown', type: 'charset.unsupported' }))
    })

    it(`with an unknown charset and encoding, reports the ${entry.charsetErrorFirst ? 'charset' : 'encoding'} first`, async (t) => {
      const server = await serve(t, text({ verify: () => {} }))
      const reply = await server.post('text/plain; charset=x-unknown', 'hi', { 'content-encoding': 'x-zip' })
      assert.deepEqual({ status: reply.status, type: reply.json.type, first: 'charset' in reply.json ? 'charset' : 'encoding' },
        { status: 415, type: entry.charsetErrorFirst ? 'charset.unsupported' : 'encoding.unsupported', first: entry.charsetErrorFirst ? 'charset' : 'encoding' })
    })
  })

  describe(`${entry.name} entry: type option`, () => {
    const cases: ReadonlyArray<[string, unknown, string, boolean]> = [
      ['a mime type', 'application/vnd.custom-type', 'application/vnd.custom-type', true],
      ['a mime type, other type', 'application/vnd.custom-type', 'application/octet-stream', false],
      ['an extension name', 'bin', 'application/octet-stream', true],
      ['an extension name', 'html', 'text/html; charset=utf-8', true],
      ['the urlencoded alias', 'urlencoded', 'application/x-www-form-urlencoded', true],
      ['*/*', '*/*', 'image/png', true],
      ['type wildcard', 'application/*', 'application/pdf', true],
      ['type wildcard, other type', 'application/*', 'text/pdf', false],
      ['subtype wildcard', '*/pdf', 'image/pdf', true],
      ['+suffix', '+json', 'application/vnd.api+json', true],
      ['*/*+suffix', '*/*+json', 'application/ld+json', true],
      ['application/*+suffix', 'application/*+json', 'application/ld+json', true],
      ['application/*+suffix, no suffix', 'application/*+json', 'application/json', false],
      ['an array', ['text/html', 'image/*'], 'image/gif', true],
      ['an array, no member matching', ['text/html', 'image/*'], 'text/css', false],
      ['an empty string (the default)', '', 'application/octet-stream', true],
      ['a header in any case', 'application/octet-stream', 'APPLICATION/Octet-Stream', true],
      ['a configured type with capitals (compared as given)', 'Application/Octet-Stream', 'application/octet-stream', false]
    ]
    for (const [label, type, contentType, matches] of cases) {
      it(`${label}: ${JSON.stringify(type)} ${matches ? 'matches' : 'does not match'} ${contentType}`, async (t) => {
        const server = await serve(t, raw({ type }))
        const reply = await server.post(contentType, 'bytes')
        assertBody(reply, matches ? buffer('bytes') : entry.unparsedBody)
      })
    }

    it('calls a function with the request and parses when it returns truthy', async (t) => {
      const seen: string[] = []
      const type = (req: IncomingMessage) => {
        seen.push(String(req.headers['x-parse']))
        return req.headers['x-parse'] === 'yes' ? 1 : ''
      }
      const server = await serve(t, text({ type }))
      assertBody(await server.post('application/anything', 'p', { 'x-parse': 'yes' }), 'p')
      assertBody(await server.post('text/plain', 'p', { 'x-parse': 'no' }), entry.unparsedBody)
      assert.deepEqual(seen, ['yes', 'no'])
    })

    it('does not call the type function for a request without a body', async (t) => {
      let calls = 0
      const server = await serve(t, text({ type: () => { calls++; return true } }))
      await server.request({ method: 'GET' })
      assert.equal(calls, 0)
    })
  })

  describe(`${entry.name} entry: next and middleware names`, () => {
    it('returns named middleware functions', () => {
      assert.deepEqual([json().name, raw().name, text().name, urlencoded({ extended: true }).name],
        ['jsonParser', 'rawParser', 'textParser', 'urlencodedParser'])
    })

    it('calls next exactly once on success, skip and error', async (t) => {
      const counts: number[] = []
      const parser = json({ limit: 5 })
      const counting: Middleware = function countingJson (req, res, next) {
        let calls = 0
        counts.push(0)
        const slot = counts.length - 1
        parser(req, res, (err) => {
          counts[slot] = ++calls
          next(err)
        })
      }
      const server = await serve(t, counting)
      await server.post(JSON_TYPE, '{}')
      await server.post('text/plain', 'x')
      await server.post(JSON_TYPE, '{"too":"long"}')
      await server.post(JSON_TYPE, '{"bad"')
      await new Promise((resolve) => setImmediate(resolve))
      assert.deepEqual(counts, [1, 1, 1, 1])
    })

    it('calls next asynchronously for a parsed body', async (t) => {
      const order: string[] = []
      const parser = json()
      const wrap: Middleware = function wrapJson (req, res, next) {
        parser(req, res, (err) => { order.push('next'); next(err) })
        order.push('returned')
      }
      const server = await serve(t, wrap)
      await server.post(JSON_TYPE, '{}')
      assert.deepEqual(order, ['returned', 'next'])
    })
  })
}
