// The event-fed source (a request-like that is only an event emitter, as node-mocks-http's) against the path it stands in for:
// the same bodies, sent through such a fake and through a PassThrough, give the same body or error, for both entries and multipart().
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import fc from 'fast-check'
import { describeError, serialise } from '../differential/harness'
import * as modern from '../../src/index'
import * as legacy from '../../src/legacy'

const RUNS = Number(process.env.EVENT_SOURCE_RUNS ?? 400)

type Middleware = (req: IncomingMessage, res: unknown, next: (err?: unknown) => void) => void
type Kind = 'json' | 'text' | 'raw' | 'urlencoded' | 'multipart'
const TYPES: Record<Kind, string> = {
  json: 'application/json',
  text: 'text/plain',
  raw: 'application/octet-stream',
  urlencoded: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data; boundary=XyZ'
}

interface Drawn {
  kind: Kind
  entry: 'default' | 'legacy'
  payload: Buffer
  encoding: 'identity' | 'gzip' | 'deflate' | 'gzip-cut' | 'gzip-flipped'
  length: 'exact' | 'absent' | 'longer' | 'shorter' | 'not-a-number'
  limit: number
  charset: string | null
  pieces: number[]
}

/** Bodies each parser reads, and damaged ones: cut, bad syntax, random bytes. */
const payloads = fc.oneof(
  fc.json().map((text) => Buffer.from(text)),
  fc.string().map((text) => Buffer.from('{"a":' + text)),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 12 }), { maxKeys: 6 })
    .map((fields) => Buffer.from(new URLSearchParams(fields).toString())),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.array(fc.tuple(fc.constantFrom('a', 'b[c]', 'f'), fc.string({ maxLength: 20 }), fc.boolean()), { maxLength: 4 })
    .chain((parts) => fc.constantFrom('whole', 'cut').map((shape) => {
      const text = parts.map(([name, value, file]) => '--XyZ\r\nContent-Disposition: form-data; name="' + name + '"' +
        (file ? '; filename="f.txt"\r\nContent-Type: text/plain' : '') + '\r\n\r\n' + value + '\r\n').join('') + '--XyZ--\r\n'
      return Buffer.from(shape === 'whole' ? text : text.slice(0, Math.floor(text.length / 2)))
    }))
)

const drawn: fc.Arbitrary<Drawn> = fc.record({
  kind: fc.constantFrom<Kind>('json', 'text', 'raw', 'urlencoded', 'multipart'),
  entry: fc.constantFrom<'default' | 'legacy'>('default', 'legacy'),
  payload: payloads,
  encoding: fc.constantFrom<Drawn['encoding']>('identity', 'identity', 'gzip', 'deflate', 'gzip-cut', 'gzip-flipped'),
  length: fc.constantFrom<Drawn['length']>('exact', 'exact', 'absent', 'longer', 'shorter', 'not-a-number'),
  // Sizes around every body's length: the limit is drawn near it below.
  limit: fc.integer({ min: -3, max: 3 }),
  charset: fc.constantFrom(null, null, 'utf-8', 'iso-8859-1', 'utf-16le', 'koi8-r', 'x-unknown'),
  pieces: fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 5 })
})

function encode (payload: Buffer, encoding: Drawn['encoding']): Buffer {
  switch (encoding) {
    case 'identity': return payload
    case 'gzip': return zlib.gzipSync(payload)
    case 'deflate': return zlib.deflateSync(payload)
    case 'gzip-cut': { const bytes = zlib.gzipSync(payload); return bytes.subarray(0, Math.max(1, bytes.length - 5)) }
    case 'gzip-flipped': { const bytes = Buffer.from(zlib.gzipSync(payload)); bytes[Math.floor(bytes.length / 2)] ^= 0x55; return bytes }
  }
}

function headersFor (d: Drawn, wire: Buffer): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': TYPES[d.kind] + (d.charset !== null ? '; charset=' + d.charset : '') }
  if (d.encoding !== 'identity') headers['content-encoding'] = d.encoding.startsWith('gzip') ? 'gzip' : 'deflate'
  switch (d.length) {
    case 'exact': headers['content-length'] = String(wire.length); break
    case 'longer': headers['content-length'] = String(wire.length + 3); break
    case 'shorter': headers['content-length'] = String(Math.max(0, wire.length - 2)); break
    case 'not-a-number': headers['content-length'] = 'abc'; headers['transfer-encoding'] = 'chunked'; break
    case 'absent': headers['transfer-encoding'] = 'chunked'
  }
  return headers
}

function split (wire: Buffer, pieces: number[]): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  for (const size of pieces) {
    if (at >= wire.length) break
    out.push(wire.subarray(at, at + size))
    at += size
  }
  if (at < wire.length || out.length === 0) out.push(wire.subarray(at))
  return out
}

function middlewareFor (d: Drawn, limit: number): Middleware {
  const entry = (d.entry === 'default' ? modern : legacy) as unknown as Record<Kind, (options: object) => Middleware>
  if (d.kind === 'multipart') return entry.multipart({ limit, files: { storage: 'memory' } })
  return entry[d.kind]({ limit, ...(d.kind === 'urlencoded' ? { extended: true } : {}) })
}

/** A fake as node-mocks-http builds one: an event emitter whose body arrives as 'data' events, then 'end'. */
function eventRequest (headers: Record<string, string>): IncomingMessage & EventEmitter {
  return Object.assign(new EventEmitter(), { method: 'POST', url: '/', headers, body: {} }) as unknown as IncomingMessage & EventEmitter
}

function streamRequest (headers: Record<string, string>): IncomingMessage & PassThrough {
  return Object.assign(new PassThrough(), { method: 'POST', url: '/', headers, body: {} }) as unknown as IncomingMessage & PassThrough
}

/** What the app sees: the error as the differential suites describe it, or the body; a throw or a hang is a failure. */
function outcome (middleware: Middleware, req: IncomingMessage & { body?: unknown, files?: unknown }, send: () => void): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('hang: next was not called')) }, 5000)
    middleware(req, null, (err) => {
      clearTimeout(timer)
      resolve(err ? { error: describeError(err) } : { body: serialise(req.body), files: serialise(req.files) })
    })
    send()
  })
}

describe('event-fed requests (node-mocks-http) give the answer of the same body as a stream', () => {
  it(`agrees with the PassThrough path (${RUNS} drawn bodies: damaged, compressed, sizes around the limit)`, async () => {
    let errors = 0
    await fc.assert(fc.asyncProperty(drawn, async (d) => {
      const wire = encode(d.payload, d.encoding)
      const limit = Math.max(1, d.payload.length + d.limit)
      const headers = headersFor(d, wire)
      const chunks = split(wire, d.pieces)
      const viaStream = streamRequest(headers)
      const expected = await outcome(middlewareFor(d, limit), viaStream, () => {
        setImmediate(() => { for (const chunk of chunks) viaStream.write(chunk); viaStream.end() })
      })
      const viaEvents = eventRequest(headers)
      const actual = await outcome(middlewareFor(d, limit), viaEvents, () => {
        setImmediate(() => { for (const chunk of chunks) viaEvents.emit('data', chunk); viaEvents.emit('end') })
      })
      if ('error' in (expected as object)) errors++
      assert.deepEqual(actual, expected)
    }), { numRuns: RUNS })
    // The draw reaches both sides of the limit and damaged bodies: a run of only successes proves little.
    assert.ok(errors > RUNS / 10 && errors < RUNS, `errors in ${errors} of ${RUNS}`)
  })
})
