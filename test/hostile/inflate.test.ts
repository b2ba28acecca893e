// Issue 5.2 and 5.3: `limit` holds on the wire and after inflation; bombs get a 413 with bounded inflation and no uncaught error.
import assert from 'node:assert/strict'
import { after, afterEach, before, beforeEach, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { MiB, endRequest, entries, fakeRequest, fakeResponse, sleep, spyInflated, tick, type Entry, type HttpErrorLike, type Middleware } from './helpers'

const LIMIT = 100 * 1024
const CHUNK = 64 * 1024
const hasZstd = typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function'

/** Compressed zeros: a bomb of `size` bytes once inflated. */
export function bomb (encoding: string, size: number): Buffer {
  const zeros = Buffer.alloc(size)
  if (encoding === 'gzip') return zlib.gzipSync(zeros, { level: 9 })
  if (encoding === 'deflate') return zlib.deflateSync(zeros, { level: 9 })
  if (encoding === 'br') return zlib.brotliCompressSync(zeros)
  const zstd = (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync
  return zstd ? zstd(zeros) : Buffer.alloc(64)
}

/** A valid gzip member of about `size` bytes that inflates to nothing: empty stored blocks (RFC 1951 §3.2.4). */
export function emptyGzip (size: number): Buffer {
  const blocks = Math.max(1, Math.floor((size - 18) / 5))
  const out = Buffer.alloc(10 + blocks * 5 + 8)
  Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]).copy(out, 0)
  for (let i = 0; i < blocks; i++) {
    const at = 10 + i * 5
    out[at] = i === blocks - 1 ? 1 : 0
    out[at + 3] = 0xff
    out[at + 4] = 0xff
  }
  return out // CRC32 and ISIZE of nothing are zero
}

interface Run { calls: number, err?: HttpErrorLike, body?: unknown, pushed: number }

/** Feeds `body` in 64 KiB chunks, one per turn of the event loop, stopping as soon as `next` was called. */
async function run (mw: Middleware, headers: Record<string, string>, body: Buffer, options: { stopEarly?: boolean } = {}): Promise<Run> {
  const framing: Record<string, string> = 'transfer-encoding' in headers ? {} : { 'content-length': String(body.length) }
  const req = fakeRequest({ ...framing, ...headers })
  const result: Run = { calls: 0, pushed: 0 }
  mw(req, fakeResponse(req), (err) => {
    result.calls++
    result.err = err as HttpErrorLike | undefined
    result.body = (req as { body?: unknown }).body
  })
  for (let i = 0; i < body.length && !(options.stopEarly !== false && result.calls); i += CHUNK) {
    const accepted = req.push(body.subarray(i, i + CHUNK))
    result.pushed += Math.min(CHUNK, body.length - i)
    await tick()
    // Like a TCP peer under flow control, send no more while the request's buffer is full.
    for (let wait = 0; !accepted && req.readableLength > 0 && !result.calls && wait < 1000; wait++) await tick()
  }
  if (!result.calls || options.stopEarly === false) endRequest(req)
  for (let i = 0; i < 200 && !result.calls; i++) await sleep(2)
  await sleep(20)
  return result
}

let uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => { process.off('uncaughtException', record); process.off('unhandledRejection', record) })
beforeEach(() => { uncaught = [] })
afterEach(() => { assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection') })

function supported (entry: Entry, encoding: string): boolean {
  if (encoding === 'zstd') return entry.name === 'default' && hasZstd
  return entry.name === 'default' || encoding !== 'br'
}

for (const entry of entries) {
  describe(`inflation under limit (${entry.name} entry)`, () => {
    const json = entry.bodykit.json({ limit: LIMIT })

    for (const encoding of ['gzip', 'deflate', 'br', 'zstd']) {
      it(`a ${encoding} bomb (64 MiB of zeros) gets one 413 and inflation stops near the limit`, async () => {
        const spy = spyInflated()
        try {
          const result = await run(json, { 'content-type': 'application/json', 'content-encoding': encoding }, bomb(encoding, 64 * MiB))
          assert.equal(result.calls, 1)
          if (!supported(entry, encoding)) {
            const reference = await run(entry.reference.json({ limit: LIMIT }), { 'content-type': 'application/json', 'content-encoding': encoding }, bomb(encoding, 1024))
            assert.equal(result.err?.status, 415)
            assert.equal(result.err?.message, reference.err?.message)
            return
          }
          assert.equal(result.err?.status, 413)
          assert.equal(result.err?.type, 'entity.too.large')
          assert.equal(result.err?.limit, LIMIT)
          await sleep(50)
          assert.ok(spy.total() <= LIMIT + 2 * CHUNK, `inflated ${spy.total()} bytes`)
        } finally {
          spy.restore()
        }
      })
    }

    it('a 32 MiB gzip body that inflates to nothing gets 413 on its wire size (body-parser accepts it)', async () => {
      const body = emptyGzip(32 * MiB)
      assert.equal(zlib.gunzipSync(body).length, 0)
      const result = await run(json, { 'content-type': 'application/json', 'content-encoding': 'gzip', 'transfer-encoding': 'chunked' }, body)
      assert.equal(result.calls, 1)
      assert.equal(result.err?.status, 413)
      assert.equal(result.err?.type, 'entity.too.large')
      assert.equal(result.err?.limit, LIMIT)
      assert.ok((result.err?.received as number) > LIMIT && (result.err?.received as number) <= LIMIT + CHUNK)
      assert.ok(result.pushed <= LIMIT + 2 * CHUNK, `read ${result.pushed} bytes`)
      const small = emptyGzip(2 * MiB)
      const reference = await run(entry.reference.raw({ limit: LIMIT, type: '*/*' }), { 'content-type': 'application/json', 'content-encoding': 'gzip' }, small)
      assert.equal(reference.err, undefined, 'body-parser was expected to accept it (the gap this closes)')
    })

    it('a compressed body declared larger than the limit is refused before inflating', async () => {
      const spy = spyInflated()
      try {
        const gz = zlib.gzipSync('{"a":1}')
        const req = fakeRequest({ 'content-type': 'application/json', 'content-encoding': 'gzip', 'content-length': String(LIMIT + 1) })
        const err = await new Promise<HttpErrorLike>((resolve) => json(req, fakeResponse(req), (e) => resolve(e as HttpErrorLike)))
        req.push(gz)
        assert.equal(err.status, 413)
        assert.deepEqual([err.type, err.expected, err.length, err.limit, 'received' in err], ['entity.too.large', LIMIT + 1, LIMIT + 1, LIMIT, false])
        await sleep(20)
        assert.equal(spy.total(), 0)
      } finally {
        spy.restore()
      }
    })

    it('bytes after a deflate stream count on the wire: within the limit as body-parser, over it 413', async () => {
      const headers = { 'content-type': 'application/json', 'content-encoding': 'deflate' }
      const small = Buffer.concat([zlib.deflateSync('{"a":1}'), Buffer.alloc(1000, 0x41)])
      const mine = await run(json, headers, small, { stopEarly: false })
      const reference = await run(entry.reference.json({ limit: LIMIT }), headers, small, { stopEarly: false })
      assert.deepEqual([mine.calls, mine.err?.type, mine.err?.message, mine.body], [1, reference.err?.type, reference.err?.message, reference.body])
      const big = Buffer.concat([zlib.deflateSync('{"a":1}'), Buffer.alloc(4 * LIMIT, 0x41)])
      const over = await run(json, headers, big, { stopEarly: false })
      assert.equal(over.calls, 1)
      assert.equal(over.err?.status, 413)
      assert.equal(over.err?.type, 'entity.too.large')
    })

    it('an inflated body within the limit parses as with body-parser', async () => {
      for (const encoding of ['gzip', 'deflate', 'br']) {
        if (!supported(entry, encoding)) continue
        const compress = encoding === 'gzip' ? zlib.gzipSync : encoding === 'deflate' ? zlib.deflateSync : zlib.brotliCompressSync
        const body = compress(JSON.stringify({ list: Array.from({ length: 2000 }, (_, i) => i) }))
        const headers = { 'content-type': 'application/json', 'content-encoding': encoding }
        const mine = await run(json, headers, body)
        const reference = await run(entry.reference.json({ limit: LIMIT }), headers, body)
        assert.equal(mine.err, undefined)
        assert.deepEqual(mine.body, reference.body)
      }
    })
  })
}
