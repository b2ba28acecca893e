// Issue 17's proof for its second path: generated requests (the fuzz model's payloads, damaged compressed bodies,
// limits around their size, many pieces) sent over HTTP/2 without a length must get the answer the same pieces get
// as an HTTP/1.1 chunked body, the path the HTTP/2 one stands for (itself checked against body-parser). With
// `readHttp2WithoutLength` off (issue 25), they must get the answer of the same request without a body.
import assert from 'node:assert/strict'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import http2, { type ClientHttp2Session } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { entries as allEntries } from '../hostile/helpers'
import { describeError, describeRequest, type Result } from '../helpers/server'
import { fuzzInput, middlewareFor, toWire, type FuzzInput } from '../fuzz/model'
import { comparableJson, connect, h2Request, listen, postHttp1, withHttp2Reading, type H2Server, type Middleware } from './helpers'

/** Requests per entry: HTTP2_FUZZ_RUNS, or a fast slice for npm test. */
const runs = Number(process.env.HTTP2_FUZZ_RUNS) || 200

/** The middleware each request path runs (one per generated request). */
const slots = new Map<string, Middleware>()

function handle (req: IncomingMessage, res: ServerResponse): void {
  const middleware = slots.get(req.url ?? '')
  if (middleware === undefined) {
    res.writeHead(404).end('{}')
    return
  }
  middleware(req, res, (err?: unknown) => {
    // A body the parser skipped is the app's to read: Node dumps it over HTTP/1.1, but an unread HTTP/2 stream
    // keeps its window of data in the session, and enough of them make the session refuse new streams.
    if (err === undefined && !req.complete) req.resume()
    const result: Result = err !== undefined ? describeError(err) : { status: 200, json: describeRequest(req) }
    res.writeHead(result.status, { 'content-type': 'application/json' })
    res.end(JSON.stringify(result.json))
  })
}

/** `received` of a 413 counts the pieces as they arrived, which the two protocols cut differently. */
function comparable (result: Result): Result {
  return { status: result.status, json: comparableJson(result.json, true) }
}

let h2: H2Server
let h11: http.Server
let ids = 0

before(async () => {
  h2 = await listen(http2.createServer((req, res) => handle(req as unknown as IncomingMessage, res as unknown as ServerResponse)), false)
  h11 = http.createServer(handle)
  await new Promise<void>((resolve) => h11.listen(0, '127.0.0.1', resolve))
})
after(async () => {
  await h2.close()
  h11.closeAllConnections()
  h11.close()
})

/** Requests that end as they should: an abort is a different event in each protocol (tested by example). */
const completeInput = fuzzInput.map((input): FuzzInput => ({ ...input, abortAfter: null, framing: 'chunked' }))

for (const on of [true, false]) {
  for (const entry of withHttp2Reading(allEntries, on)) {
    describe(`HTTP/2 without a length, ${entry.name} entry, readHttp2WithoutLength ${on ? 'on' : 'off'}: generated requests answered as ${on ? 'HTTP/1.1 chunked ones' : 'the same requests without a body'}`, () => {
      let session: ClientHttp2Session
      before(async () => { session = await connect(h2.origin) })
      after(() => { session.close() })

      // Off, a few requests prove the skip (every one is answered as without a body); on, the full count.
      const count = on ? runs : Math.max(20, Math.round(runs / 4))
      it(`${count} requests`, async () => {
        await fc.assert(fc.asyncProperty(completeInput, async (input) => {
          const wire = toWire(input)
          const headers: Record<string, string> = {}
          for (const name of ['content-type', 'content-encoding']) if (wire.headers[name] !== undefined) headers[name] = wire.headers[name]
          const path = `/${ids++}`
          slots.set(path, middlewareFor(entry, 'bodykit', input))
          try {
            const over2 = await h2Request(session, { path, headers, body: wire.chunks.length > 0 ? wire.chunks : [Buffer.alloc(0)] })
            if (!on) {
              const bodiless = await h2Request(session, { path, headers, body: null })
              assert.deepEqual(comparable(over2), comparable(bodiless))
              return
            }
            const over11 = await postHttp1((h11.address() as AddressInfo).port, path, headers, wire.chunks, true)
            // A damaged compressed body too: its answer is its first error in byte order however HTTP/2 frames and
            // TCP reads cut its pieces (issue 45).
            assert.deepEqual(comparable(over2), comparable(over11))
          } finally {
            slots.delete(path)
          }
        }), { numRuns: count })
      })
    })
  }
}
