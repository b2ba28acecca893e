// bodykit/h3 against h3 itself: the same drawn requests to h3 1.15's and 2.x's own readers and to bodykit/h3's, same answers within the limits; past them, bodykit's refusals as h3's errors.
import assert from 'node:assert/strict'
import net from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import { type } from 'arktype'
import fc from 'fast-check'
import * as h3v1 from 'h3'
import * as h3v2 from 'h3-2'
import * as bodykitH3 from '../../src/h3'
import { createH3Readers } from '../../src/h3/adapter'
import { nodeBuild } from '../../src/h3/node-build'
import type { H3Readers } from '../../src/h3/types'
import { listen, sendRequest, type Payload, type RequestOptions } from '../helpers/server'
import { abortAfter } from './apps'

const RUNS = Number(process.env.H3_DIFFERENTIAL_RUNS ?? 120)

/** bodykit/h3 for h3 2.x events: the entry's readers over h3 2's module (the entry itself takes the app's `h3`, here 1.x). */
const v2Readers: H3Readers = createH3Readers(nodeBuild, h3v2 as never)

/** What JSON cannot show, tagged: undefined, non-finite numbers, bytes, and whether an object has a prototype. */
function describeValue (value: unknown): unknown {
  if (value === undefined) return { $undefined: true }
  if (typeof value === 'number' && !Number.isFinite(value)) return { $number: String(value) }
  if (value instanceof Uint8Array) return { $bytes: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64'), buffer: Buffer.isBuffer(value) }
  if (Array.isArray(value)) return value.map(describeValue)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = { $proto: Object.getPrototypeOf(value) === Object.prototype ? 'object' : Object.getPrototypeOf(value) === null ? 'null' : 'other' }
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: describeValue((value as Record<string, unknown>)[key]), enumerable: true })
    }
    return out
  }
  return value
}

/** A read's outcome, answered with 200 whatever it was (so both sides' answers are compared, not h3's error pages). */
async function outcome (read: () => Promise<unknown>): Promise<Payload> {
  try {
    return { ok: true, value: describeValue(await read()) }
  } catch (err) {
    const e = err as { statusCode?: number, status?: number, statusMessage?: string, statusText?: string, message?: string, data?: { type?: unknown }, constructor?: { __h3_error__?: boolean }, name?: string }
    return {
      ok: false,
      status: e.statusCode ?? e.status,
      statusMessage: e.statusMessage ?? e.statusText,
      message: e.message,
      type: e.data?.type ?? null,
      h3Error: e.constructor?.__h3_error__ === true || e.name === 'HTTPError'
    }
  }
}

type Reader = 'body' | 'strict' | 'raw' | 'bytes' | 'parts' | 'form-data' | 'as-json' | 'as-text' | 'as-urlencoded'

/** Each reader as one route per side: `/<reader>/h3` (h3's own) and `/<reader>/bk` (bodykit/h3). */
function v1Routes (): ReturnType<typeof h3v1.createApp> {
  const bk = bodykitH3
  const reads: Record<Reader, [(e: h3v1.H3Event) => Promise<unknown>, (e: h3v1.H3Event) => Promise<unknown>]> = {
    body: [(e) => h3v1.readBody(e), (e) => bk.readBody(e)],
    strict: [(e) => h3v1.readBody(e, { strict: true }), (e) => bk.readBody(e, { strict: true })],
    raw: [(e) => h3v1.readRawBody(e), (e) => bk.readRawBody(e)],
    bytes: [(e) => h3v1.readRawBody(e, false), (e) => bk.readRawBody(e, false)],
    parts: [(e) => h3v1.readMultipartFormData(e), (e) => bk.readMultipartFormData(e)],
    'form-data': [async (e) => formEntries(await h3v1.readFormData(e)), async (e) => formEntries(await bk.readFormData(e))],
    // h3 1.x has no `type` option: the same as readBody.
    'as-json': [(e) => h3v1.readBody(e), (e) => bk.readBody(e)],
    'as-text': [(e) => h3v1.readBody(e), (e) => bk.readBody(e)],
    'as-urlencoded': [(e) => h3v1.readBody(e), (e) => bk.readBody(e)]
  }
  const router = h3v1.createRouter()
  for (const [name, [own, ours]] of Object.entries(reads)) {
    router.post(`/${name}/h3`, h3v1.defineEventHandler((event) => outcome(() => own(event))))
    router.post(`/${name}/bk`, h3v1.defineEventHandler((event) => outcome(() => ours(event))))
  }
  const app = h3v1.createApp()
  app.use(router)
  return app
}

function v2Routes (): h3v2.H3 {
  const bk = v2Readers
  const reads: Record<Reader, [(e: h3v2.H3Event) => Promise<unknown>, (e: h3v2.H3Event) => Promise<unknown>]> = {
    body: [(e) => h3v2.readBody(e), (e) => bk.readBody(e)],
    strict: [(e) => h3v2.readBody(e), (e) => bk.readBody(e)],
    raw: [(e) => h3v2.readRawBody(e), (e) => bk.readRawBody(e)],
    bytes: [(e) => h3v2.readRawBody(e, false), (e) => bk.readRawBody(e, false)],
    parts: [(e) => h3v2.readMultipartFormData(e), (e) => bk.readMultipartFormData(e)],
    'form-data': [async (e) => formEntries(await h3v2.readFormData(e)), async (e) => formEntries(await bk.readFormData(e))],
    'as-json': [(e) => h3v2.readBody(e, { type: 'json' }), (e) => bk.readBody(e, { type: 'json' })],
    'as-text': [(e) => h3v2.readBody(e, { type: 'text' }), (e) => bk.readBody(e, { type: 'text' })],
    'as-urlencoded': [(e) => h3v2.readBody(e, { type: 'urlencoded' }), (e) => bk.readBody(e, { type: 'urlencoded' })]
  }
  const app = new h3v2.H3()
  for (const [name, [own, ours]] of Object.entries(reads)) {
    app.post(`/${name}/h3`, (event) => outcome(() => own(event)))
    app.post(`/${name}/bk`, (event) => outcome(() => ours(event)))
  }
  return app
}

/** A FormData's entries, files as their name, type and bytes. */
async function formEntries (form: FormData): Promise<unknown[]> {
  const entries: unknown[] = []
  for (const [name, value] of form.entries()) {
    entries.push(typeof value === 'string' ? [name, value] : [name, value.name, value.type, Buffer.from(await value.arrayBuffer()).toString('base64')])
  }
  return entries
}

interface Servers { v1: number, v2: number }

async function startBoth (t: TestContext): Promise<Servers> {
  const one = await listen(t, h3v1.toNodeListener(v1Routes()))
  const two = await listen(t, h3v2.toNodeHandler(v2Routes()))
  return { v1: one.port, v2: two.port }
}

/** The same request to h3's route and bodykit's: both answers. */
async function both (port: number, reader: Reader, request: RequestOptions): Promise<[Payload, Payload]> {
  const own = await sendRequest(port, { ...request, path: `/${reader}/h3` })
  const ours = await sendRequest(port, { ...request, path: `/${reader}/bk` })
  assert.equal(own.status, 200)
  assert.equal(ours.status, 200)
  return [own.json, ours.json]
}

/** bodykit answers as h3 does: the same value, or the same status and message (bodykit's errors also carry `data.type`). */
function assertSameAnswer (own: Payload, ours: Payload, context: unknown): void {
  if (own.ok === true || ours.ok === true) {
    assert.deepEqual(ours, own, JSON.stringify(context))
    return
  }
  assert.deepEqual({ status: ours.status, message: ours.message, h3Error: ours.h3Error }, { status: own.status, message: own.message, h3Error: own.h3Error }, JSON.stringify(context))
}

const JSONISH = fc.oneof(
  fc.json({ maxDepth: 3 }),
  fc.constantFrom('true', ' FALSE ', 'null', 'NaN', 'Infinity', '-infinity', 'undefined', '"quoted"', '"esc\\"aped"', '123', '-1.5e5',
    '12345678901234567', 'hello', '{"a":', '[1,2', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"y":1}}}', '\uFEFF{"bom":1}',
    '', ' ', '{"a":1}  ', '"unterminated', '0x10', '{"a":"\\u00e9"}'),
  fc.string({ maxLength: 40 })
)
const FORM_TEXT = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'a[]', 'x y', '__proto__', 'constructor', 'é', ''), fc.string({ maxLength: 8 })), { maxLength: 6 })
  .chain((pairs) => fc.constantFrom(
    pairs.map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&'),
    pairs.map(([k, v]) => k + '=' + v).join('&')
  ))
const TYPES = fc.constantFrom<string | undefined>('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'text/plain',
  'text/html; charset=UTF-8', 'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', undefined,
  'application/octet-stream', 'application/vnd.api+json')

/** A request body as drawn: its Content-Type, its text, and whether it is sent chunked. */
const BODY = fc.record({
  contentType: TYPES,
  text: fc.oneof(JSONISH, FORM_TEXT),
  chunked: fc.boolean()
})

function requestOf ({ contentType, text, chunked }: { contentType: string | undefined, text: string, chunked: boolean }): RequestOptions {
  const bytes = Buffer.from(text)
  return {
    headers: contentType === undefined ? {} : { 'content-type': contentType },
    body: chunked ? (bytes.length === 0 ? [] : [bytes.subarray(0, 1), bytes.subarray(1)]) : bytes
  }
}

/** A multipart form as a browser encodes it: fields and files in a drawn order. */
const FORM_PARTS = fc.array(fc.oneof(
  fc.record({ name: fc.constantFrom('title', 'tag', 'é', 'a b'), value: fc.string({ maxLength: 20 }) }),
  fc.record({ name: fc.constantFrom('photo', 'doc'), filename: fc.constantFrom('a.txt', 'b.bin', 'naïve.png', 'x y.pdf'), type: fc.constantFrom('text/plain', 'image/png', ''), bytes: fc.uint8Array({ maxLength: 64 }) })
), { minLength: 1, maxLength: 6 })

async function encodeParts (parts: Array<{ name: string, value?: string, filename?: string, type?: string, bytes?: Uint8Array }>): Promise<RequestOptions> {
  const form = new FormData()
  for (const part of parts) {
    if (part.filename === undefined) form.append(part.name, part.value as string)
    else form.append(part.name, new Blob([part.bytes as Uint8Array<ArrayBuffer>], { type: part.type }), part.filename)
  }
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return { headers: { 'content-type': request.headers.get('content-type') as string }, body: Buffer.from(await request.arrayBuffer()) }
}

describe('bodykit/h3 answers as h3 does within the limits (differential)', () => {
  for (const major of ['v1', 'v2'] as const) {
    it(`${major}: readBody (and strict), readRawBody as text and bytes, on drawn bodies and Content-Types`, async (t) => {
      const ports = await startBoth(t)
      await fc.assert(fc.asyncProperty(BODY, fc.constantFrom<Reader>('body', 'strict', 'raw', 'bytes', 'as-json', 'as-text', 'as-urlencoded'), async (drawn, reader) => {
        const [own, ours] = await both(ports[major], reader, requestOf(drawn))
        assertSameAnswer(own, ours, { drawn, reader })
      }), { numRuns: RUNS })
    })

    it(`${major}: readMultipartFormData and readFormData on forms a browser encodes`, async (t) => {
      const ports = await startBoth(t)
      await fc.assert(fc.asyncProperty(FORM_PARTS, fc.constantFrom<Reader>('parts', 'form-data'), async (parts, reader) => {
        const [own, ours] = await both(ports[major], reader, await encodeParts(parts))
        assertSameAnswer(own, ours, { parts, reader })
      }), { numRuns: Math.ceil(RUNS / 2) })
    })

    it(`${major}: the form readers on a urlencoded body, and with no body`, async (t) => {
      const ports = await startBoth(t)
      for (const reader of ['parts', 'form-data'] as const) {
        for (const request of [
          { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=1&a=2&b=%C3%A9' },
          { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '' }
        ]) {
          const [own, ours] = await both(ports[major], reader, request)
          // Request.formData() cannot read an empty multipart body (a TypeError, h3's 500); bodykit reads an empty form.
          if (request.body === '' && (major === 'v2' || reader === 'form-data')) assert.deepEqual([own.ok, own.h3Error, ours.ok], [false, false, true])
          else assertSameAnswer(own, ours, { reader, request })
        }
      }
    })
  }
})

/** An app of one route per major reading with `read`, answering the outcome. */
async function serveRead (t: TestContext, major: 'v1' | 'v2', read: (readers: H3Readers, event: never) => Promise<unknown>): Promise<number> {
  if (major === 'v1') {
    const app = h3v1.createApp()
    app.use(h3v1.defineEventHandler((event) => outcome(() => read(bodykitH3 as unknown as H3Readers, event as never))))
    return (await listen(t, h3v1.toNodeListener(app))).port
  }
  const app = new h3v2.H3().all('/**', (event) => outcome(() => read(v2Readers, event as never)))
  return (await listen(t, h3v2.toNodeHandler(app))).port
}

const JSON_TYPE = { 'content-type': 'application/json' }

describe('bodykit/h3 past the limits: bodykit\'s refusals as h3\'s errors', () => {
  for (const major of ['v1', 'v2'] as const) {
    const statusMessage = (text: string) => text
    it(`${major}: a body over 100 KiB is refused with 413 by default; a route raises its limit`, async (t) => {
      const port = await serveRead(t, major, (readers, event) => readers.readBody(event))
      const raised = await serveRead(t, major, (readers, event) => readers.readBody(event, { limit: '1mb' }))
      const big = JSON.stringify({ big: 'x'.repeat(100 * 1024) })
      const refused = (await sendRequest(port, { headers: JSON_TYPE, body: big })).json
      assert.deepEqual(refused, { ok: false, status: 413, statusMessage: statusMessage('Request Entity Too Large'), message: 'request entity too large', type: 'entity.too.large', h3Error: true })
      // Chunked, so the limit is met while reading.
      const chunked = (await sendRequest(port, { headers: JSON_TYPE, body: [big.slice(0, 1000), big.slice(1000)] })).json
      assert.equal(chunked.type, 'entity.too.large')
      assert.deepEqual((await sendRequest(raised, { headers: JSON_TYPE, body: big })).json.ok, true)
    })

    it(`${major}: gzip is inflated and counted; an unknown charset is 415; another charset is decoded`, async (t) => {
      const port = await serveRead(t, major, (readers, event) => readers.readBody(event))
      const zipped = (await sendRequest(port, { headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, body: zlib.gzipSync('{"zipped":true}') })).json
      assert.deepEqual(zipped, { ok: true, value: { $proto: 'object', zipped: true } })
      const bomb = (await sendRequest(port, { headers: { ...JSON_TYPE, 'content-encoding': 'gzip' }, body: zlib.gzipSync(Buffer.alloc(20 * 1024 * 1024, 0x20)) })).json
      assert.equal(bomb.type, 'entity.too.large')
      const klingon = (await sendRequest(port, { headers: { 'content-type': 'application/json; charset=klingon' }, body: '{}' })).json
      assert.deepEqual([klingon.status, klingon.type], [415, 'charset.unsupported'])
      const latin1 = (await sendRequest(port, { headers: { 'content-type': 'application/json; charset=iso-8859-1' }, body: Buffer.from([0x22, 0x63, 0x61, 0x66, 0xe9, 0x22]) })).json
      assert.deepEqual(latin1, { ok: true, value: 'café' })
      const compress = (await sendRequest(port, { headers: { ...JSON_TYPE, 'content-encoding': 'compress' }, body: '{}' })).json
      assert.deepEqual([compress.status, compress.type], [415, 'encoding.unsupported'])
    })

    it(`${major}: onProtoPoisoning 'error' refuses a __proto__ key; createBodyReaders binds options and checks them at once`, async (t) => {
      const guarded = await serveRead(t, major, (readers, event) => readers.readBody(event, { onProtoPoisoning: 'error' }))
      const poisoned = (await sendRequest(guarded, { headers: JSON_TYPE, body: '{"a":{"__proto__":{"admin":true}}}' })).json
      assert.deepEqual([poisoned.status, poisoned.type], [400, 'entity.parse.failed'])
      const readers = major === 'v1' ? bodykitH3 : v2Readers
      assert.throws(() => readers.createBodyReaders({ limit: 'lots' }), TypeError)
      assert.throws(() => readers.createBodyReaders({ files: { fileLimit: 'two' as never } }), TypeError)
      const small = readers.createBodyReaders({ limit: 8 })
      const bound = await serveRead(t, major, (_readers, event) => small.readBody(event))
      assert.equal((await sendRequest(bound, { headers: JSON_TYPE, body: '{"a":12345}' })).json.type, 'entity.too.large')
    })

    it(`${major}: multipart's limits hold for the form readers`, async (t) => {
      const port = await serveRead(t, major, (readers, event) => readers.readMultipartFormData(event, { files: { fileSizeLimit: 10, fileLimit: 1 } }))
      const tooLarge = (await sendRequest(port, await encodeParts([{ name: 'doc', filename: 'a.bin', type: 'application/octet-stream', bytes: new Uint8Array(11) }]))).json
      assert.deepEqual([tooLarge.status, tooLarge.type], [413, 'multipart.file.too.large'])
      const tooMany = (await sendRequest(port, await encodeParts([
        { name: 'doc', filename: 'a.bin', type: 'text/plain', bytes: new Uint8Array(1) }, { name: 'doc', filename: 'b.bin', type: 'text/plain', bytes: new Uint8Array(1) }
      ]))).json
      assert.deepEqual([tooMany.status, tooMany.type], [413, 'multipart.files.too.many'])
      const cut = (await sendRequest(port, { headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\nabc' })).json
      assert.deepEqual([cut.status, cut.type], [400, 'multipart.unexpected.end'])
    })

    it(`${major}: a client that leaves mid-body gets its read rejected, and the app goes on`, async (t) => {
      let settled!: (value: Payload) => void
      const done = new Promise<Payload>((resolve) => { settled = resolve })
      const port = await serveRead(t, major, async (readers, event) => {
        try {
          return await readers.readBody(event)
        } finally {
          // Reported either way; the client is gone.
          void outcome(() => Promise.reject(new Error('left'))).then(settled)
        }
      })
      await abortAfter(port, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n', '{"a":', Promise.resolve())
      await done
      assert.equal((await sendRequest(port, { headers: JSON_TYPE, body: '{"next":1}' })).json.ok, true)
    })
  }

  for (const major of ['v1', 'v2'] as const) {
    it(`${major}: a handler that answers before the body is read, to a client that then leaves: the read settles, and the app goes on`, async (t) => {
      let settled!: (outcome: Payload) => void
      const read = new Promise<Payload>((resolve) => { settled = resolve })
      const port = await serveRead(t, major, async (readers, event) => {
        // Not awaited: the handler answers first, the read goes on.
        void outcome(() => readers.readBody(event)).then(settled)
        return 'answered'
      })
      const head = 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n'
      // The client leaves once the answer has come, its body unfinished.
      await new Promise<void>((resolve) => {
        const socket = net.connect(port, '127.0.0.1', () => { socket.write(head + '5\r\n{"a":\r\n') })
        socket.once('data', () => { socket.destroy() })
        socket.on('error', () => {})
        socket.on('close', () => { resolve() })
      })
      assert.equal((await read).ok, false)
      assert.equal((await sendRequest(port, { headers: JSON_TYPE, body: '{"next":1}' })).json.ok, true)
    })
  }

  it('v1: errors are h3 1.x\'s H3Error, with bodykit\'s error as cause; v2: h3 2.x\'s HTTPError', async () => {
    const event = h3v1.createEvent(Object.assign(new (await import('node:stream')).PassThrough(), { method: 'POST', url: '/', headers: { 'content-type': 'application/json', 'content-length': '200000' } }) as never, {} as never)
    const err = await bodykitH3.readBody(event).catch((e: unknown) => e)
    assert.ok(err instanceof h3v1.H3Error)
    assert.equal(err.statusCode, 413)
    assert.equal(bodykitH3.isBodyParserError(err.cause), true)
    const request = new Request('http://localhost/', { method: 'POST', headers: { ...JSON_TYPE, 'content-length': '200000' }, body: 'x' })
    const v2Error = await v2Readers.readBody(new h3v2.H3Event(request as never) as never).catch((e: unknown) => e)
    assert.ok(v2Error instanceof h3v2.HTTPError)
    assert.equal(v2Error.status, 413)
  })
})

describe('bodykit/h3 keeps h3\'s cache and validation', () => {
  it('v1: readBody twice gives the cached body; h3\'s own readRawBody and readBody after bodykit\'s read the bytes bodykit read', async (t) => {
    const app = h3v1.createApp()
    app.use(h3v1.defineEventHandler(async (event) => {
      const first = await bodykitH3.readBody(event)
      const second = await bodykitH3.readBody(event)
      return { same: first === second, raw: await h3v1.readRawBody(event), h3: await h3v1.readBody(event) }
    }))
    const { port } = await listen(t, h3v1.toNodeListener(app))
    assert.deepEqual((await sendRequest(port, { headers: JSON_TYPE, body: '{"a":1}' })).json, { same: true, raw: '{"a":1}', h3: { a: 1 } })
  })

  it('v1: after bodykit\'s form readers, h3\'s own readers get an error where they would wait for good; bodykit\'s give the form again', async (t) => {
    const app = h3v1.createApp()
    app.use(h3v1.defineEventHandler(async (event) => {
      const parts = await bodykitH3.readMultipartFormData(event)
      const again = await bodykitH3.readMultipartFormData(event)
      const own = await outcome(() => h3v1.readRawBody(event))
      return { parts: parts?.length, again: again?.length, own: [own.ok, own.status] }
    }))
    const { port } = await listen(t, h3v1.toNodeListener(app))
    const form = await encodeParts([{ name: 'a', value: '1' }, { name: 'f', filename: 'a.txt', type: 'text/plain', bytes: new Uint8Array(3) }])
    assert.deepEqual((await sendRequest(port, form)).json, { parts: 2, again: 2, own: [false, 500] })
  })

  it('v2: readBody twice reads the Request once (h3 2.x itself cannot read a body twice)', async (t) => {
    const app = new h3v2.H3().post('/', async (event) => ({ first: await v2Readers.readBody(event), second: await v2Readers.readBody(event), raw: await v2Readers.readRawBody(event) }))
    const { port } = await listen(t, h3v2.toNodeHandler(app))
    assert.deepEqual((await sendRequest(port, { headers: JSON_TYPE, body: '{"a":1}' })).json, { first: { a: 1 }, second: { a: 1 }, raw: '{"a":1}' })
  })

  const User = type({ name: 'string' })
  for (const major of ['v1', 'v2'] as const) {
    it(`${major}: readValidatedBody with a function and with a Standard Schema, as h3 validates`, async (t) => {
      const own = major === 'v1' ? h3v1.readValidatedBody : h3v2.readValidatedBody
      const readers = major === 'v1' ? bodykitH3 : v2Readers
      const validators: Array<(data: unknown) => unknown> = [
        (data) => typeof (data as { name?: unknown }).name === 'string',
        (data) => ({ checked: data }),
        () => { throw new Error('nope') },
        () => undefined
      ]
      for (const [index, validate] of validators.entries()) {
        const ownPort = await serveRead(t, major, (_r, event) => (own as (e: never, v: unknown) => Promise<unknown>)(event, validate))
        const ourPort = await serveRead(t, major, (_r, event) => readers.readValidatedBody(event, validate as never))
        for (const body of ['{"name":"Ada"}', '{"name":1}']) {
          const request = { headers: JSON_TYPE, body }
          assertSameAnswer((await sendRequest(ownPort, request)).json, (await sendRequest(ourPort, request)).json, { index, body })
        }
      }
      const schemaPort = await serveRead(t, major, (_r, event) => readers.readValidatedBody(event, User))
      assert.deepEqual((await sendRequest(schemaPort, { headers: JSON_TYPE, body: '{"name":"Ada"}' })).json, { ok: true, value: { $proto: 'object', name: 'Ada' } })
      const invalid = (await sendRequest(schemaPort, { headers: JSON_TYPE, body: '{"name":1}' })).json
      assert.deepEqual([invalid.ok, invalid.status, invalid.h3Error], [false, 400, true])
    })
  }

  it('v2: h3 2.x\'s bodyLimit applies to bodykit\'s readers too', async (t) => {
    const app = new h3v2.H3().post('/', (event) => outcome(() => v2Readers.readBody(event)), { middleware: [h3v2.bodyLimit(10)] })
    const { port } = await listen(t, h3v2.toNodeHandler(app))
    const declared = await sendRequest(port, { headers: JSON_TYPE, body: '{"a":"0123456789"}' })
    assert.equal(declared.status, 413)
    const chunked = await sendRequest(port, { headers: JSON_TYPE, body: ['{"a":', '"0123456789"}'] })
    assert.deepEqual([chunked.json.ok, chunked.json.status], [false, 413])
  })

  it('v1: a method without a body is h3\'s 405; v2 reads no body as h3 2.x does', async (t) => {
    const one = await serveRead(t, 'v1', (readers, event) => readers.readBody(event))
    assert.deepEqual((await sendRequest(one, { method: 'GET' })).json, { ok: false, status: 405, statusMessage: 'HTTP method is not allowed.', message: 'HTTP method is not allowed.', type: null, h3Error: true })
    const two = await serveRead(t, 'v2', (readers, event) => readers.readBody(event))
    assert.deepEqual((await sendRequest(two, { method: 'GET' })).json, { ok: true, value: { $undefined: true } })
  })

  it('v1: a fake request that only emits (no removeListener) is read, whatever the case of its chunked Transfer-Encoding', async () => {
    for (const transferEncoding of ['chunked', 'Chunked', 'CHUNKED', 'identity']) {
      const fake = {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'transfer-encoding': transferEncoding },
        on (name: string, listener: (chunk?: Buffer) => void) {
          if (name === 'data') listener(Buffer.from('{"fake":true}'))
          if (name === 'end') listener()
          return fake
        }
      }
      const event = { method: 'POST', node: { req: fake, res: undefined } }
      assert.equal(await bodykitH3.readRawBody(event), transferEncoding === 'identity' ? undefined : '{"fake":true}', transferEncoding)
    }
  })

  it('v1: a body Nitro hands over as a stream (`event._requestBody`) is read within the limit', async (t) => {
    const app = h3v1.createApp()
    app.use(h3v1.defineEventHandler(async (event) => {
      const body = Buffer.from(event.node.req.headers['x-body'] as string)
      Object.assign(event, { _requestBody: new Blob([body]).stream() })
      return outcome(() => bodykitH3.readBody(event, { limit: 10 }))
    }))
    const { port } = await listen(t, h3v1.toNodeListener(app))
    assert.deepEqual((await sendRequest(port, { method: 'POST', headers: { ...JSON_TYPE, 'x-body': '{"a":1}' } })).json, { ok: true, value: { $proto: 'object', a: 1 } })
    assert.equal((await sendRequest(port, { method: 'POST', headers: { ...JSON_TYPE, 'x-body': '{"a":"long enough"}' } })).json.type, 'entity.too.large')
  })
})

describe('bodykit/h3 on h3 2.x on Node: srvx\'s Node request, read in place of its Web stream, gives the stream\'s answers', () => {
  const LIMIT_HERE = 64
  /** A route per path: `/direct` reads the untouched request; `/streamed` first makes srvx's stream of it (as bodyLimit() does). */
  function pathRoutes (read: (event: h3v2.H3Event) => Promise<unknown>): h3v2.H3 {
    return new h3v2.H3()
      .post('/direct', (event) => outcome(() => read(event)))
      .post('/streamed', (event) => {
        void event.req.body
        return outcome(() => read(event))
      })
      .post('/which', (event) => {
        const before = nodeBuild.untouchedNodeRequest(event.req) !== null
        void event.req.body
        return { before, after: nodeBuild.untouchedNodeRequest(event.req) !== null }
      })
  }

  it('is read in place only while untouched', async (t) => {
    const { port } = await listen(t, h3v2.toNodeHandler(pathRoutes((event) => v2Readers.readBody(event))))
    assert.deepEqual((await sendRequest(port, { path: '/which', headers: JSON_TYPE, body: '{}' })).json, { before: true, after: false })
  })

  it('the same answer on drawn bodies around the limit, compressed (whole or cut) or not, whole or chunked', async (t) => {
    const options = { limit: LIMIT_HERE }
    const reads: Record<string, (event: h3v2.H3Event) => Promise<unknown>> = {
      body: (event) => v2Readers.readBody(event, options),
      bytes: (event) => v2Readers.readRawBody(event, false, options),
      parts: (event) => v2Readers.readMultipartFormData(event, { limit: LIMIT_HERE * 4 })
    }
    const ports: Record<string, number> = {}
    for (const [name, read] of Object.entries(reads)) ports[name] = (await listen(t, h3v2.toNodeHandler(pathRoutes(read)))).port
    const drawn = fc.record({
      reader: fc.constantFrom('body', 'bytes', 'parts'),
      size: fc.integer({ min: 0, max: LIMIT_HERE * 2 }),
      coding: fc.constantFrom('identity', 'gzip', 'gzip-cut', 'deflate'),
      chunked: fc.boolean(),
      contentType: fc.constantFrom('application/json', 'text/plain; charset=latin1', 'application/json; charset=klingon', 'multipart/form-data; boundary=b')
    })
    await fc.assert(fc.asyncProperty(drawn, async ({ reader, size, coding, chunked, contentType }) => {
      const text = contentType.startsWith('multipart')
        ? `--b\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\n${'x'.repeat(size)}\r\n--b--\r\n`
        : JSON.stringify('x'.repeat(Math.max(0, size - 2)))
      let body = Buffer.from(text)
      if (coding === 'gzip' || coding === 'gzip-cut') body = zlib.gzipSync(body)
      if (coding === 'gzip-cut') body = body.subarray(0, Math.ceil(body.length / 2))
      if (coding === 'deflate') body = zlib.deflateSync(body)
      const headers: Record<string, string> = { 'content-type': contentType }
      if (coding !== 'identity') headers['content-encoding'] = coding === 'gzip-cut' ? 'gzip' : coding
      const request = { headers, body: chunked ? [body.subarray(0, 3), body.subarray(3)] : body }
      const direct = await sendRequest(ports[reader], { ...request, path: '/direct' })
      const streamed = await sendRequest(ports[reader], { ...request, path: '/streamed' })
      assert.deepEqual(direct.json, streamed.json, JSON.stringify({ reader, size, coding, chunked, contentType }))
    }), { numRuns: RUNS })
  })
})
