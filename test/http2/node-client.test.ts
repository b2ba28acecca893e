// Issue 17: Node's http2 client (h2c and TLS) against both entries; a body with a length must get body-parser's
// answer, one without the answer body-parser gives the same request with a length.
import assert from 'node:assert/strict'
import type { ClientHttp2Session } from 'node:http2'
import { after, before, describe, it } from 'node:test'
import zlib from 'node:zlib'
import { entries as allEntries, type Factories } from '../hostile/helpers'
import { comparableJson, connect, h2Request, serveH2, type H2Answer, type H2Request, type H2Server, type Middleware, withHttp2Reading } from './helpers'

// bodykit's reading of HTTP/2 bodies without a length, on in both entries (bodykit/legacy's default is off).
const entries = withHttp2Reading(allEntries, true)

const MiB = 1024 * 1024

/** The routes every server has: each parser with its defaults, and the playground's 1 KiB upload chain. */
function routesOf (parsers: Factories): Record<string, Middleware[]> {
  return {
    '/json': [parsers.json()],
    '/form': [parsers.urlencoded({ extended: true })],
    '/text': [parsers.text()],
    '/raw': [parsers.raw()],
    '/small': [parsers.json({ limit: '1kb' }), parsers.raw({ type: () => true, limit: '1kb' })],
    '/tight': [parsers.raw({ type: () => true, limit: '1kb', discardLimit: '1mb' })]
  }
}

/**
 * Uploads `total` bytes with backpressure, as a client streaming a large file does, and resolves once the
 * response has arrived whole and the server asked the client to stop (RST_STREAM: 'aborted' here) or the stream
 * closed. Node's client keeps a stream whose upload was cut short open, so it is destroyed here.
 */
function upload (session: ClientHttp2Session, path: string, total: number, length: boolean): Promise<{ status: number, json: Record<string, unknown>, reset: boolean, sent: number }> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/octet-stream', ...(length ? { 'content-length': String(total) } : {}) })
    let status = 0
    let text = ''
    let ended = false
    let reset = false
    let sent = 0
    const settle = (): void => {
      if (!ended || (!reset && !stream.closed)) return
      stream.destroy()
      resolve({ status, json: JSON.parse(text) as Record<string, unknown>, reset, sent })
    }
    stream.on('response', (headers) => { status = Number(headers[':status']) })
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { text += chunk })
    stream.on('end', () => { ended = true; settle() })
    stream.on('aborted', () => { reset = true; settle() })
    stream.on('close', settle)
    stream.on('error', (err) => { if (status === 0) reject(err) })
    const chunk = Buffer.alloc(64 * 1024)
    const pump = (): void => {
      while (sent < total && !stream.destroyed && !reset) {
        sent += chunk.length
        if (!stream.write(chunk)) {
          stream.once('drain', pump)
          return
        }
      }
      if (!stream.destroyed && !reset) stream.end()
    }
    pump()
  })
}

function comparable (answer: H2Answer, sentLength: boolean): unknown {
  return { status: answer.status, json: comparableJson(answer.json, sentLength) }
}

const ndjson = JSON.stringify({ name: 'Ada', tags: ['x', 'y'], nested: { deep: [1, 2, { é: '漢字' }] } })

for (const tls of [false, true]) {
  for (const entry of entries) {
    describe(`Node's http2 client over ${tls ? 'TLS' : 'h2c'}, ${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'}`, () => {
      let mine: H2Server, reference: H2Server
      let toMine: ClientHttp2Session, toReference: ClientHttp2Session
      before(async () => {
        mine = await serveH2(routesOf(entry.bodykit), { tls })
        reference = await serveH2(routesOf(entry.reference), { tls })
        toMine = await connect(mine.origin)
        toReference = await connect(reference.origin)
      })
      after(async () => {
        toMine.close()
        toReference.close()
        await mine.close()
        await reference.close()
      })

      /** Sends `request` to bodykit as is, and to body-parser with a Content-Length; both answers must agree. */
      async function same (request: H2Request): Promise<H2Answer> {
        const answer = await h2Request(toMine, request)
        const expected = await h2Request(toReference, { ...request, length: request.body !== null })
        assert.deepEqual(comparable(answer, true), comparable(expected, request.length === true))
        return answer
      }

      for (const length of [true, false]) {
        const how = length ? 'with content-length' : 'without content-length'
        it(`JSON, a form, text and raw ${how}`, async () => {
          const json = await same({ path: '/json', headers: { 'content-type': 'application/json' }, body: ndjson, length })
          assert.deepEqual(json.json.body, JSON.parse(ndjson))
          const form = await same({ path: '/form', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a[b]=1&c=%C3%A9&c=2', length })
          assert.deepEqual(form.json.body, { a: { b: '1' }, c: ['é', '2'] })
          const text = await same({ path: '/text', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: 'héllo', length })
          assert.equal(text.json.body, 'héllo')
          await same({ path: '/raw', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 1, 2, 255]), length })
        })

        it(`a body in many DATA frames, and a gzip body, ${how}`, async () => {
          const pieces = Array.from({ length: 20 }, (_, i) => `${i === 0 ? '[' : ','}{"n":${i}}`).concat(']')
          const many = await same({ path: '/json', headers: { 'content-type': 'application/json' }, body: pieces, length })
          assert.equal((many.json.body as unknown[]).length, 20)
          const gzip = await same({ path: '/json', headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: zlib.gzipSync(ndjson), length })
          assert.deepEqual(gzip.json.body, JSON.parse(ndjson))
        })

        it(`400 for malformed JSON and 415 for an unknown charset ${how}`, async () => {
          assert.equal((await same({ path: '/json', headers: { 'content-type': 'application/json' }, body: '{"a":', length })).json.type, 'entity.parse.failed')
          assert.equal((await same({ path: '/text', headers: { 'content-type': 'text/plain; charset=klingon' }, body: 'x', length })).json.type, 'charset.unsupported')
        })

        it(`limit: a body of exactly 1 KiB passes, one byte more is a 413, ${how}`, async () => {
          assert.equal((await same({ path: '/small', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(1024, 7), length })).status, 200)
          const over = await same({ path: '/small', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(1025, 7), length })
          assert.equal(over.json.type, 'entity.too.large')
        })

        it(`a 5 MiB body to the 1 KiB route is a 413 ${how}, and the session goes on`, async () => {
          const answer = await same({ path: '/small', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(5 * MiB), length })
          assert.equal(answer.status, 413)
          assert.equal(answer.json.type, 'entity.too.large')
          assert.equal((await h2Request(toMine, { path: '/json', headers: { 'content-type': 'application/json' }, body: '{"after":1}', length })).status, 200)
        })
      }

      it('past discardLimit the stream is no longer read and ends (its client stops, or it is reset) once the response is out; the session goes on', async () => {
        for (const length of [true, false]) {
          const answer = await upload(toMine, '/tight', 64 * MiB, length)
          assert.equal(answer.status, 413)
          assert.equal(answer.json.type, 'entity.too.large')
          assert.ok(answer.sent < 16 * MiB, `the client could send ${answer.sent} bytes`)
          // The reset stream is freed too: a paused one would hold its window of DATA, and never emit 'close'.
          await mine.streamsClosed()
          assert.equal(mine.openStreams(), 0, 'a server stream was left open')
          assert.equal((await h2Request(toMine, { path: '/json', headers: { 'content-type': 'application/json' }, body: '{"after":1}' })).status, 200)
        }
      })

      it('a stream that ended with its HEADERS has no body: skipped, as body-parser skips it', async () => {
        const answer = await same({ path: '/json', headers: { 'content-type': 'application/json' }, body: null })
        assert.deepEqual(answer.json.body, entry.name === 'default' ? { $undefined: true } : {})
      })

      it('an empty DATA frame after the HEADERS is an empty body, as with content-length: 0', async () => {
        const answer = await same({ path: '/json', headers: { 'content-type': 'application/json' }, body: '' })
        assert.deepEqual(answer.json.body, {})
      })

      it('several streams at once on one session, one refused mid-upload: the others get their bodies', async () => {
        const refused = h2Request(toMine, { path: '/small', headers: { 'content-type': 'application/octet-stream' }, body: Array.from({ length: 64 }, () => Buffer.alloc(64 * 1024)) })
        const others = Array.from({ length: 6 }, (_, i) => h2Request(toMine, { path: '/json', headers: { 'content-type': 'application/json' }, body: [`{"stream":`, `${i}}`], length: i % 2 === 0 }))
        const answers = await Promise.all([refused, ...others])
        assert.equal(answers[0].status, 413)
        assert.deepEqual(answers.slice(1).map((answer) => answer.json.body), [0, 1, 2, 3, 4, 5].map((i) => ({ stream: i })))
        assert.equal(toMine.closed || toMine.destroyed, false)
      })

      // destroy() resets the stream without END_STREAM; close(code) would end the body first, then reset.
      it('a client that resets its stream mid-body gets request.aborted on the server, as body-parser gives it', async () => {
        for (const [server, session, length] of [[mine, toMine, false], [mine, toMine, true], [reference, toReference, true]] as const) {
          const before = server.results.length
          const stream = session.request({ ':method': 'POST', ':path': '/json', 'content-type': 'application/json', ...(length ? { 'content-length': '100' } : {}) })
          stream.on('error', () => {})
          stream.write('{"partial":')
          await new Promise((resolve) => setTimeout(resolve, 50))
          stream.destroy()
          assert.equal((await server.result(before)).json.type, 'request.aborted')
        }
      })
    })
  }
}
