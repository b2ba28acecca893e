// Issue 5.8: regressions for the hostile-input entries of security-history.md (the others are in test/http/security-history.test.ts).
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import zlib from 'node:zlib'
import express from 'express'
import { MiB, endRequest, entries, fakeRequest, fakeResponse, generatedBody, sleep, startServer, until, type HttpErrorLike, type Middleware } from './helpers'

const LIMIT = 100 * 1024

let uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => { process.off('uncaughtException', record); process.off('unhandledRejection', record) })
beforeEach(() => { uncaught = [] })
afterEach(async () => {
  await sleep(30)
  assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection')
})

/** Feeds a whole buffered body at once (as a serverless adapter does) and collects every next() call. */
async function buffered (mw: Middleware, headers: Record<string, string>, body: Buffer): Promise<{ calls: number, err?: HttpErrorLike, body: unknown }> {
  const req = fakeRequest(headers)
  const result: { calls: number, err?: HttpErrorLike, body: unknown } = { calls: 0, body: undefined }
  mw(req, fakeResponse(req), (err) => {
    result.calls++
    result.err = err as HttpErrorLike | undefined
    result.body = (req as { body?: unknown }).body
  })
  req.push(body)
  endRequest(req)
  await until(() => result.calls > 0)
  // A window for a second call, which would be a bug; its length never makes a correct run fail.
  await sleep(20)
  return result
}

for (const entry of entries) {
  describe(`security history (${entry.name} entry)`, () => {
    it('bp #255: a gzip bomb over the limit gives exactly one 413 and no uncaught zlib error', async () => {
      const server = await startServer(entry.bodykit.json({ limit: LIMIT }))
      try {
        const bomb = zlib.gzipSync(Buffer.alloc(64 * MiB))
        const res = await fetch(`http://127.0.0.1:${server.port}/`, { method: 'POST', body: bomb, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
        assert.equal(res.status, 413)
        assert.equal(await res.text(), '[entity.too.large] request entity too large')
        await sleep(50)
        assert.equal((await server.outcome(0)).calls, 1)
      } finally {
        await server.close()
      }
    })

    it('bp #454: after a 413 the decompressor is gone; only the raw request is read off, within the bound', async () => {
      const mw = entry.bodykit.json({ limit: LIMIT })
      const body = Buffer.concat([zlib.gzipSync(Buffer.alloc(8 * MiB)), Buffer.alloc(300 * 1024)])
      const req = fakeRequest({ 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(body.length) })
      const pipes: unknown[] = []
      const err = await new Promise<HttpErrorLike>((resolve) => {
        mw(req, fakeResponse(req), (e) => resolve(e as HttpErrorLike))
        req.push(body.subarray(0, 8192))
      })
      pipes.push(...((req as unknown as { _readableState: { pipes: unknown[] } })._readableState.pipes))
      assert.equal(err.status, 413)
      assert.deepEqual(pipes, [], 'the decompressor is still piped')
      req.push(body.subarray(8192))
      endRequest(req)
      // Read off means read to its end: waited for with no time bound (a body never read off hangs the test).
      await until(() => req.readableEnded)
    })

    it('2.4.0 hardening: bytes after the gzip member, and gzip + verify + bogus charset, never crash', async () => {
      const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' }
      const trailing = Buffer.concat([zlib.gzipSync('{"a":1}'), Buffer.from('garbage after the member')])
      const mine = await buffered(entry.bodykit.json(), { ...headers, 'content-length': String(trailing.length) }, trailing)
      const reference = await buffered(entry.reference.json(), { ...headers, 'content-length': String(trailing.length) }, trailing)
      assert.equal(mine.calls, 1)
      assert.deepEqual([mine.err?.status, mine.err?.type, mine.body], [reference.err?.status, reference.err?.type, reference.body])
      const gz = zlib.gzipSync('{"a":1}')
      const verify = (): void => {}
      const bogus = { ...headers, 'content-type': 'application/json; charset=x-bogus', 'content-length': String(gz.length) }
      const mine2 = await buffered(entry.bodykit.json({ verify }), bogus, gz)
      const reference2 = await buffered(entry.reference.json({ verify }), bogus, gz)
      assert.equal(mine2.calls, 1)
      assert.deepEqual([mine2.err?.status, mine2.err?.type, mine2.err?.message], [reference2.err?.status, reference2.err?.type, reference2.err?.message])
    })

    it('aborts: a client gone mid-body gets request.aborted on the server, for plain and gzip bodies', async () => {
      for (const encoding of ['identity', 'gzip']) {
        const req = fakeRequest({ 'content-type': 'application/json', 'content-encoding': encoding, 'content-length': '5000' })
        const calls: HttpErrorLike[] = []
        entry.bodykit.json()(req, fakeResponse(req), (e) => { calls.push(e as HttpErrorLike) })
        req.push(encoding === 'gzip' ? zlib.gzipSync('{"a":').subarray(0, 12) : Buffer.from('{"a":'))
        await sleep(5)
        req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
        await until(() => calls.length > 0)
        await sleep(20)
        assert.equal(calls.length, 1, encoding)
        assert.deepEqual([calls[0]?.status, calls[0]?.type], [400, 'request.aborted'], encoding)
      }
    })

    it('CVE-2026-44456: a chunked body over the limit never reaches the handler; the 413 comes before the body is read', async () => {
      const app = express()
      let handled = 0
      let bytesAtError = 0
      app.post('/', entry.bodykit.json({ limit: LIMIT }) as express.RequestHandler, (_req, res) => { handled++; res.end('handled') })
      app.use((err: HttpErrorLike, req: express.Request, res: express.Response, _next: express.NextFunction) => {
        bytesAtError = req.socket.bytesRead
        res.status(err.status).end(err.type)
      })
      const server = http.createServer(app)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      try {
        const body = generatedBody(20 * MiB)
        const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST', body: body.stream, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
        assert.equal(res.status, 413)
        assert.equal(await res.text(), 'entity.too.large')
        assert.equal(handled, 0)
        assert.ok(bytesAtError < LIMIT + 256 * 1024, `the verdict came after ${bytesAtError} bytes`)
      } finally {
        server.closeAllConnections()
        server.close()
      }
    })

    it('CVE-2026-54288: an understated Content-Length is not trusted; the real bytes are counted', async () => {
      const mw = entry.bodykit.json({ limit: LIMIT })
      const huge = Buffer.alloc(MiB, 0x20)
      const over = await buffered(mw, { 'content-type': 'application/json', 'content-length': '10' }, huge)
      assert.deepEqual([over.calls, over.err?.status, over.err?.type, over.err?.limit], [1, 413, 'entity.too.large', LIMIT])
      const lie = await buffered(mw, { 'content-type': 'application/json', 'content-length': '2' }, Buffer.from('{"a":1}'))
      assert.deepEqual([lie.calls, lie.err?.status, lie.err?.type], [1, 400, 'request.size.invalid'])
      const gz = zlib.gzipSync(Buffer.alloc(2 * MiB))
      const overGz = await buffered(mw, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': '10' }, Buffer.concat([gz, Buffer.alloc(LIMIT)]))
      assert.deepEqual([overGz.calls, overGz.err?.status, overGz.err?.type], [1, 413, 'entity.too.large'])
    })
  })
}
