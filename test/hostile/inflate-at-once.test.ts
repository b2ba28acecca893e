// Issue 11: small compressed bodies are read off the wire, then inflated in one zlib call, with the streaming path's answers and bounds.
import assert from 'node:assert/strict'
import type { Transform } from 'node:stream'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import { AT_ONCE_MAX_LIMIT, atOnce, inflateAtOnce, inflateExactly, inflateUntilDamage, isEndedEarly, isSmallBrotli, type InflaterAtOnce } from '../../src/inflate'
import { MiB, endRequest, entries, fakeRequest, fakeResponse, sleep, spyInflated, tick, type HttpErrorLike, type Middleware } from './helpers'

const LIMIT = 100 * 1024
const zstd = zlib as unknown as { createZstdDecompress?: () => Transform, zstdCompressSync?: (input: Buffer | string) => Buffer }
const CHUNK = 16 * 1024
const streams: Record<string, () => Transform> = {
  gzip: () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
  // zstd where Node has it (22.15 and later)
  ...(zstd.createZstdDecompress ? { zstd: zstd.createZstdDecompress } : {})
}
const compressors: Record<string, (input: Buffer | string) => Buffer> = {
  gzip: (input) => zlib.gzipSync(input),
  deflate: (input) => zlib.deflateSync(input),
  br: (input) => zlib.brotliCompressSync(input),
  ...(zstd.zstdCompressSync ? { zstd: zstd.zstdCompressSync } : {})
}
const encodings = Object.keys(streams) as Array<keyof typeof atOnce>
/** The one-shot inflater of an encoding the running Node has. */
const inflaterOf = (encoding: keyof typeof atOnce): InflaterAtOnce => atOnce[encoding] as InflaterAtOnce

function viaAtOnce (inflater: InflaterAtOnce, input: Buffer, limit: number): Promise<{ err: (Error & Record<string, unknown>) | null, body?: Buffer }> {
  return new Promise((resolve) => inflateAtOnce(inflater, input, limit, (err, body) => resolve({ err: err as (Error & Record<string, unknown>) | null, body })))
}

/** What a decompression stream read by body-parser's rules gives for the whole input written at once. */
function viaStream (encoding: string, input: Buffer, limit: number): Promise<{ err: (Error & Record<string, unknown>) | null, body?: Buffer }> {
  return new Promise((resolve) => {
    const stream = streams[encoding]()
    const chunks: Buffer[] = []
    let received = 0
    stream.on('data', (chunk: Buffer) => {
      received += chunk.length
      chunks.push(chunk)
      if (received > limit) {
        stream.destroy()
        resolve({ err: Object.assign(new Error('request entity too large'), { received }) as unknown as Error & Record<string, unknown> })
      }
    })
    stream.on('error', (err) => resolve({ err: err as Error & Record<string, unknown> }))
    stream.on('end', () => resolve({ err: null, body: Buffer.concat(chunks) }))
    stream.end(input)
  })
}

const describeErr = (err: (Error & Record<string, unknown>) | null): unknown =>
  err === null ? null : { message: err.message, code: err.code, errno: err.errno, received: err.received }

describe('one-shot inflation (src/inflate.ts)', () => {
  for (const encoding of encodings) {
    const good = compressors[encoding](JSON.stringify({ list: Array.from({ length: 3000 }, (_, i) => i) }))
    const inputs: Record<string, Buffer> = {
      valid: good,
      truncated: good.subarray(0, good.length - 7),
      'cut in half': good.subarray(0, good.length >> 1),
      corrupt: Buffer.concat([good.subarray(0, 12), Buffer.from('not compressed data at all'), good.subarray(-8)]),
      empty: Buffer.alloc(0),
      'trailing bytes': Buffer.concat([good, Buffer.from('trailing')]),
      'one byte': Buffer.from([0x1f]),
      bomb: compressors[encoding](Buffer.alloc(8 * MiB)),
      'just over the limit': compressors[encoding](Buffer.alloc(LIMIT + 5, 0x20))
    }
    for (const [name, input] of Object.entries(inputs)) {
      it(`${encoding}, ${name}: the body or error a stream gives for it in one piece`, async () => {
        const [mine, stream] = await Promise.all([viaAtOnce(inflaterOf(encoding), input, LIMIT), viaStream(encoding, input, LIMIT)])
        assert.deepEqual(describeErr(mine.err), describeErr(stream.err))
        assert.deepEqual(mine.body, stream.body)
        if (mine.err?.received !== undefined) {
          assert.equal(mine.err.status, 413)
          assert.equal(mine.err.type, 'entity.too.large')
          assert.equal(mine.err.limit, LIMIT)
        }
      })
    }
  }

  it('inflateUntilDamage: the output of the longest prefix that inflates without error, and zlib\'s error for the whole (issue 45)', () => {
    const text = Buffer.from('abcde'.repeat(400))
    for (const encoding of ['gzip', 'deflate', 'br'] as const) {
      const packed = compressors[encoding](text)
      const intact = inflateUntilDamage(inflaterOf(encoding), packed, 4096)
      assert.deepEqual([intact.inflated, intact.error], [text, null], `${encoding} intact`)
      const cut = inflateUntilDamage(inflaterOf(encoding), packed.subarray(0, -1), 4096)
      assert.ok(text.subarray(0, cut.inflated.length).equals(cut.inflated), `${encoding} cut: a prefix of the body`)
      assert.equal((cut.error as Error & { code?: string }).code, 'Z_BUF_ERROR', `${encoding} cut`)
      // Past maxOutput: more than it, by at most one 16 KiB chunk, and the body's first bytes. (brotli holds back the
      // long copy this body is until its last bytes: its prefix inflates to a few bytes.)
      const past = inflateUntilDamage(inflaterOf(encoding), packed.subarray(0, -1), 100)
      assert.ok(text.subarray(0, past.inflated.length).equals(past.inflated), `${encoding} past maxOutput: the body's first bytes`)
      if (encoding !== 'br') assert.ok(past.inflated.length > 100 && past.inflated.length <= 100 + CHUNK, `${encoding} past maxOutput: ${past.inflated.length} bytes`)
    }
    const gzipped = compressors.gzip(text)
    const checksum = Buffer.from(gzipped)
    checksum[checksum.length - 8] ^= 1
    const flipped = inflateUntilDamage(inflaterOf('gzip'), checksum, 4096)
    assert.deepEqual([flipped.inflated, flipped.error?.message], [text, 'incorrect data check'])
  })

  it('a damaged body: 413 when its longest clean prefix inflates past the limit, whatever its pieces (issue 45)', async () => {
    const text = Buffer.alloc(1034, 0x61)
    // (brotli outputs a short stream only once it has all of it: a cut br body is a 400 for body-parser too.)
    for (const encoding of ['gzip', 'deflate'] as const) {
      const cut = compressors[encoding](text).subarray(0, -1)
      const once = await viaAtOnce(inflaterOf(encoding), cut, 1024)
      assert.equal(once.err?.status, undefined, `${encoding}: one call sees only the damage`)
      // The whole of it but its last byte inflates without error: all 1,034 bytes.
      const exact = await new Promise<Error & Record<string, unknown>>((resolve) => {
        inflateExactly(inflaterOf(encoding), cut, 1024, (err) => { resolve(err as Error & Record<string, unknown>) })
      })
      assert.deepEqual([exact.status, exact.type, exact.received], [413, 'entity.too.large', 1034], encoding)
    }
  })

  it('workerd\'s one-shot zlib (nodejs_compat): its "Memory limit exceeded" is past the output limit, and its errors without a code are still read', async () => {
    // workerd throws a RangeError without `code` past maxOutputLength, and zlib's errors without `code`/`errno`.
    const asWorkerd = (encoding: 'gzip'): InflaterAtOnce => ({
      ...inflaterOf(encoding),
      sync: (input, options) => {
        try {
          return inflaterOf(encoding).sync(input, options)
        } catch (err) {
          const { code } = err as { code?: string }
          throw code === 'ERR_BUFFER_TOO_LARGE' ? new RangeError('Memory limit exceeded') : new Error((err as Error).message)
        }
      }
    })
    const bomb = zlib.gzipSync(Buffer.alloc(4 * 1024 * 1024))
    const refused = await viaAtOnce(asWorkerd('gzip'), bomb, 1024)
    assert.deepEqual([refused.err?.status, refused.err?.type], [413, 'entity.too.large'])
    // A body cut short: "unexpected end of file" without Z_BUF_ERROR is where it was cut, not a damage.
    assert.equal(isEndedEarly(new Error('unexpected end of file')), true)
    assert.equal(isEndedEarly(new Error('incorrect data check')), false)
    const cut = zlib.gzipSync(Buffer.alloc(1034, 0x61)).subarray(0, -1)
    const exact = await new Promise<Error & Record<string, unknown>>((resolve) => {
      inflateExactly(asWorkerd('gzip'), cut, 1024, (err) => { resolve(err as Error & Record<string, unknown>) })
    })
    assert.deepEqual([exact.status, exact.type], [413, 'entity.too.large'])
  })

  it('a bomb stops at the first 16 KiB output chunk past the limit, on the loop or on the thread pool', async () => {
    for (const encoding of encodings) {
      for (const onLoop of [true, false]) {
        const inflater = { ...inflaterOf(encoding), onLoop: () => onLoop }
        const { err } = await viaAtOnce(inflater, compressors[encoding](Buffer.alloc(64 * MiB)), LIMIT)
        assert.deepEqual([err?.status, err?.received], [413, Math.ceil((LIMIT + 1) / CHUNK) * CHUNK], `${encoding}, on loop: ${onLoop}`)
      }
    }
  })

  it('br takes the loop only when its first meta-block is its last and within the limit', () => {
    const quality = (q: number, lgwin = 22): zlib.BrotliOptions => ({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: q, [zlib.constants.BROTLI_PARAM_LGWIN]: lgwin } })
    const json = JSON.stringify(Array.from({ length: 4000 }, (_, i) => ({ i, s: 'x' + i })))
    // Node's default quality (11) and a middle one; the fastest qualities may split a body into several.
    for (const q of [5, 11]) {
      for (const lgwin of [16, 22, 24]) assert.ok(isSmallBrotli(zlib.brotliCompressSync(json, quality(q, lgwin)), LIMIT), `q${q} w${lgwin}`)
    }
    assert.ok(isSmallBrotli(zlib.brotliCompressSync(''), LIMIT), 'an empty stream')
    assert.ok(!isSmallBrotli(zlib.brotliCompressSync(json), 1000), 'a meta-block over the limit')
    assert.ok(!isSmallBrotli(zlib.brotliCompressSync(Buffer.alloc(64 * MiB), quality(5, 24)), LIMIT), 'a bomb with a 16 MiB window')
    assert.ok(!isSmallBrotli(Buffer.alloc(0), LIMIT), 'no bytes: the decoder reports it')
    assert.ok(!isSmallBrotli(Buffer.from([0x11, 0x00]), LIMIT), 'a large-window stream')
  })
})

/** Pushes `body` in `pieces` chunks, one per turn of the event loop, then ends the request; resolves with what next got. */
async function send (mw: Middleware, headers: Record<string, string>, body: Buffer, pieces: number): Promise<{ err?: HttpErrorLike, body?: unknown }> {
  const req = fakeRequest('transfer-encoding' in headers ? headers : { 'content-length': String(body.length), ...headers })
  const result: { err?: HttpErrorLike, body?: unknown, done: boolean } = { done: false }
  mw(req, fakeResponse(req), (err) => {
    result.done = true
    result.err = err as HttpErrorLike | undefined
    result.body = (req as { body?: unknown }).body
  })
  const size = Math.ceil(body.length / pieces)
  for (let i = 0; i < body.length; i += size) {
    req.push(body.subarray(i, i + size))
    await tick()
  }
  endRequest(req)
  for (let i = 0; i < 200 && !result.done; i++) await sleep(2)
  return result
}

/** Counts the bytes decompression streams push: zero when a body was inflated in one call. */
async function streamedBytes (work: () => Promise<unknown>): Promise<number> {
  const spy = spyInflated()
  try {
    await work()
  } finally {
    spy.restore()
  }
  return spy.total()
}

for (const entry of entries) {
  describe(`one-shot inflation in the pipeline (${entry.name} entry)`, () => {
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' }
    const json = JSON.stringify({ list: Array.from({ length: 20000 }, (_, i) => i) })

    it(`inflates at once up to a limit of ${AT_ONCE_MAX_LIMIT} bytes, and streams above it, with the same body`, async () => {
      const body = zlib.gzipSync(json)
      let small: unknown
      let large: unknown
      assert.equal(await streamedBytes(async () => { small = (await send(entry.bodykit.json({ limit: AT_ONCE_MAX_LIMIT }), headers, body, 3)).body }), 0)
      assert.ok(await streamedBytes(async () => { large = (await send(entry.bodykit.json({ limit: AT_ONCE_MAX_LIMIT + 1 }), headers, body, 3)).body }) > 0)
      assert.deepEqual(small, JSON.parse(json))
      assert.deepEqual(large, small)
    })

    it('a 413 after inflation: received is past the limit by at most one 16 KiB chunk, and body-parser\'s own when in one piece', async () => {
      const body = zlib.gzipSync(JSON.stringify({ text: 'lorem ipsum '.repeat(10000) }))
      const limit = 20000
      for (const pieces of [1, 4, 17]) {
        const [mine, reference] = await Promise.all([
          send(entry.bodykit.json({ limit }), headers, body, pieces),
          send(entry.reference.json({ limit }), headers, body, pieces)
        ])
        for (const err of [mine.err, reference.err]) {
          assert.deepEqual([err?.status, err?.type, err?.message, err?.limit], [413, 'entity.too.large', 'request entity too large', limit])
          assert.ok((err?.received as number) > limit && (err?.received as number) <= limit + CHUNK, `received ${String(err?.received)}`)
        }
        if (pieces === 1) assert.equal(mine.err?.received, reference.err?.received)
      }
    })

    it('the wire bytes count first: a compressed body over the limit on the wire gets 413 on its wire size', async () => {
      // Stored blocks (level 0): the wire size is the inflated size.
      const body = zlib.gzipSync(' '.repeat(3 * LIMIT), { level: 0 })
      assert.ok(body.length > LIMIT)
      const mine = await send(entry.bodykit.json({ limit: LIMIT }), { ...headers, 'transfer-encoding': 'chunked' }, body, 8)
      assert.deepEqual([mine.err?.status, mine.err?.type], [413, 'entity.too.large'])
      assert.ok((mine.err?.received as number) > LIMIT && (mine.err?.received as number) <= body.length)
    })
  })
}
