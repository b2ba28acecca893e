// The rawBody option over HTTP for both entries and every parser: when req.rawBody is set, to what, and when not.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import type { TestContext } from 'node:test'
import { entries, type Factory } from '../helpers/entries'
import { buffer, encode, listen, type Next } from '../helpers/server'

type RawRequest = IncomingMessage & { rawBody?: unknown, body?: unknown, verified?: Buffer }

/** Records the Buffer verify got, so the test can tell it is the very one kept on req.rawBody. */
function recordVerified (req: IncomingMessage, _res: unknown, buf: Buffer): void {
  (req as RawRequest).verified = buf
  if (buf.toString() === 'reject me') throw new Error('signature mismatch')
}

/** A server running one middleware, answering with what it left on the request (error, body, rawBody). */
async function serveRaw (t: TestContext, middleware: ReturnType<Factory>): Promise<Awaited<ReturnType<typeof listen>>> {
  return listen(t, (incoming, res) => {
    const req = incoming as RawRequest
    const answer: Next = (err) => {
      const e = err as { status?: number, type?: string, message?: string } | undefined
      res.writeHead(200, { 'content-type': 'application/json', connection: 'close' })
      res.end(JSON.stringify({
        error: e ? `${e.status} ${e.type}: ${e.message}` : null,
        body: encode(req.body),
        rawBody: 'rawBody' in req ? encode(req.rawBody) : 'absent',
        sameAsVerified: req.verified !== undefined ? req.rawBody === req.verified : null,
        sameAsBody: Buffer.isBuffer(req.body) ? req.rawBody === req.body : null
      }))
    }
    middleware(req, res, answer)
  })
}

const CASES = {
  json: { type: 'application/json', body: '{"id":"evt_1","amount":42}', parsed: { id: 'evt_1', amount: 42 }, invalid: '{"id":' },
  raw: { type: 'application/octet-stream', body: 'bytes\u0000\u00ff', parsed: buffer('bytes\u0000\u00ff'), invalid: null },
  text: { type: 'text/plain', body: 'hello ✓', parsed: 'hello ✓', invalid: null },
  urlencoded: { type: 'application/x-www-form-urlencoded', body: 'a=1&b=2', parsed: { a: '1', b: '2' }, invalid: 'a[b][c][d]=1' }
} as const

for (const entry of entries) {
  describe(`${entry.name} entry: rawBody`, () => {
    for (const [name, c] of Object.entries(CASES)) {
      const factory = entry.parsers[name as keyof typeof CASES]
      const base = name === 'urlencoded' ? { extended: true, depth: 1 } : {}

      it(`${name}(): false and left out keep nothing on the request`, async (t) => {
        for (const rawBody of [false, undefined]) {
          const server = await serveRaw(t, factory({ ...base, rawBody }))
          const reply = await server.post(c.type, c.body)
          assert.deepEqual([reply.json.error, reply.json.body, reply.json.rawBody], [null, c.parsed, 'absent'])
        }
      })

      it(`${name}(): true keeps the bytes read, the very Buffer verify got`, async (t) => {
        const server = await serveRaw(t, factory({ ...base, rawBody: true, verify: recordVerified }))
        const reply = await server.post(c.type, c.body)
        assert.deepEqual(reply.json, {
          error: null,
          body: c.parsed,
          rawBody: buffer(c.body),
          sameAsVerified: true,
          // raw(): req.body and req.rawBody are one Buffer, not two copies.
          sameAsBody: name === 'raw' ? true : null
        })
      })

      it(`${name}(): true keeps the inflated bytes of a gzip body`, async (t) => {
        const server = await serveRaw(t, factory({ ...base, rawBody: true }))
        const reply = await server.post(c.type, zlib.gzipSync(c.body), { 'content-encoding': 'gzip' })
        assert.deepEqual([reply.json.error, reply.json.rawBody], [null, buffer(c.body)])
      })

      it(`${name}(): true keeps the bytes when verify throws`, async (t) => {
        const server = await serveRaw(t, factory({ ...base, rawBody: true, verify: recordVerified }))
        const reply = await server.post(c.type, 'reject me')
        assert.deepEqual([reply.json.error, reply.json.rawBody, reply.json.sameAsVerified], ['403 entity.verify.failed: signature mismatch', buffer('reject me'), true])
      })

      if (c.invalid !== null) {
        it(`${name}(): true keeps the bytes when parsing fails`, async (t) => {
          const server = await serveRaw(t, factory({ ...base, rawBody: true }))
          const reply = await server.post(c.type, c.invalid)
          assert.equal(reply.json.error !== null && String(reply.json.error).startsWith('400 '), true, String(reply.json.error))
          assert.deepEqual(reply.json.rawBody, buffer(c.invalid))
        })
      }

      it(`${name}(): true sets nothing on a skipped request (another type, no body)`, async (t) => {
        const server = await serveRaw(t, factory({ ...base, rawBody: true }))
        assert.deepEqual((await server.post('image/png', c.body)).json.rawBody, 'absent')
        assert.deepEqual((await server.request({ method: 'GET', headers: { 'content-type': c.type } })).json.rawBody, 'absent')
      })

      it(`${name}(): true sets nothing when the body was not read in full (413, 415)`, async (t) => {
        const server = await serveRaw(t, factory({ ...base, rawBody: true, limit: 4 }))
        const tooLarge = await server.post(c.type, c.body)
        assert.deepEqual([String(tooLarge.json.error).slice(0, 21), tooLarge.json.rawBody], ['413 entity.too.large:', 'absent'])
        const unsupported = await server.post(c.type, 'x', { 'content-encoding': 'compress' })
        assert.deepEqual([String(unsupported.json.error).slice(0, 25), unsupported.json.rawBody], ['415 encoding.unsupported:', 'absent'])
      })

      it(`${name}(): a rawBody that is not a boolean throws when the middleware is created`, () => {
        for (const rawBody of ['true', 1, 0, null, {}]) {
          assert.throws(() => factory({ ...base, rawBody }), { name: 'TypeError', message: 'option rawBody must be a boolean' })
        }
      })
    }
  })
}
