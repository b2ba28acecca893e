// The event-fed source (a request-like that is only an event emitter, as node-mocks-http's) against the path it stands in for:
// the same bodies, sent through such a fake and through a PassThrough, give the same body or error, for both entries and multipart().
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import type { IncomingMessage } from 'node:http'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { describeError, serialise } from '../differential/harness'
import * as modern from '../../src/index'
import * as legacy from '../../src/legacy'
import { drawn, encode, headersFor, split, type Drawn, type Kind } from './drawn-bodies'

const RUNS = Number(process.env.EVENT_SOURCE_RUNS ?? 400)

type Middleware = (req: IncomingMessage, res: unknown, next: (err?: unknown) => void) => void
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
