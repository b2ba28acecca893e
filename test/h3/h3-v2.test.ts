// h3 v2: a real app (H3) whose handlers read `event.req` with bodykit's promise API, served on Node (toNodeHandler on node:http, and srvx's serve) and called in process (app.fetch), its refusals answered as HTTPErrors, beside h3's own readers.
import assert from 'node:assert/strict'
import { readdirSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import { H3, bodyLimit, serve, toNodeHandler } from 'h3-2'
import { readJson } from '../../src/index'
import { listen, rawHead, rawRequest, sendRequest, type Payload, type RequestOptions } from '../helpers/server'
import {
  FILE_SIZE_LIMIT, FORM_TYPE, LIMIT, REFUSALS, UNCLOSED_FORM, UPLOADED, abortAfter, createV2App, h3v2Error, encodeForm, filePartHead, firstFileIn, formWithFile, sendHead,
  untilEmpty, uploadsFolder
} from './apps'

const JSON_TYPE = 'application/json'

/** Serves a fresh v2 app with `toNodeHandler` on a node:http server on 127.0.0.1 (closed after the test). */
async function start (t: TestContext) {
  const uploads = uploadsFolder(t)
  const { app, recorder } = createV2App(uploads)
  const server = await listen(t, toNodeHandler(app))
  return { ...server, app, uploads, recorder }
}

/** h3 v2's JSON error as the recipe makes it: `new HTTPError({ status, message, data: { type } })`. */
function h3Refusal (status: number, type: string, message: string): Payload {
  return { status, message, data: { type } }
}

/** The bodies every reader reads: route, headers, body, the handler's answer. */
const BODIES: Array<[string, Record<string, string>, string | Buffer, unknown]> = [
  ['/json', { 'content-type': JSON_TYPE }, '{"order":[1,2]}', { order: [1, 2] }],
  ['/json', { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync('{"zipped":true}'), { zipped: true }],
  ['/form', { 'content-type': 'application/x-www-form-urlencoded' }, 'user[name]=Ada&tags[]=a&tags[]=b', { user: { name: 'Ada' }, tags: ['a', 'b'] }],
  ['/text', { 'content-type': 'text/plain; charset=iso-8859-1' }, Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'café'],
  // Nothing to read: another Content-Type.
  ['/json', { 'content-type': 'text/plain' }, '{}', { $undefined: true }]
]

/** Calls the app in process with a Request and reads its JSON answer. */
async function call (app: H3, route: string, init: RequestInit & { duplex?: 'half' }): Promise<[number, unknown]> {
  const res = await app.fetch(new Request('http://localhost' + route, { method: 'POST', ...init }))
  return [res.status, await res.json()]
}

describe('h3 v2 on Node: srvx\'s request object', () => {
  it('is srvx\'s own class named Request, over the IncomingMessage, which bodykit reads as a Web Request', async (t) => {
    const { request, app } = await start(t)
    const overNode = await request({ path: '/request-class', headers: { 'content-type': JSON_TYPE }, body: '{}' })
    assert.deepEqual([overNode.status, overNode.json], [200, {
      name: 'Request', instanceOfRequest: true, requestPrototype: false, inheritsRequest: true, runtime: 'node', nodeRequest: true
    }])
    // In process, event.req is the Request given to app.fetch.
    assert.deepEqual(await call(app, '/request-class', {}), [200, {
      name: 'Request', instanceOfRequest: true, requestPrototype: true, inheritsRequest: true, runtime: null, nodeRequest: false
    }])
  })

  it('has a body stream for every POST, even one with no body (no Content-Length, no Transfer-Encoding): bodykit reads it as empty', async (t) => {
    const { port, app } = await start(t)
    // Over srvx: srvx makes a stream of the request for any method but GET and HEAD, so bodykit sees a body, empty.
    const overNode = await rawRequest(port, rawHead({ 'Content-Type': JSON_TYPE }, 'POST /json HTTP/1.1'))
    assert.deepEqual([overNode.status, overNode.json], [200, { body: {} }])
    // A Request without a body (h3 v1, and a Node request, give the same): nothing to read.
    assert.deepEqual(await call(app, '/json', { headers: { 'content-type': JSON_TYPE } }), [200, { body: { $undefined: true } }])
  })
})

describe('h3 v2 with bodykit on Node (toNodeHandler, node:http)', () => {
  it('reads JSON, a urlencoded form and text from event.req; gzip-compressed JSON is inflated', async (t) => {
    const { request } = await start(t)
    const cases: Array<[string, Record<string, string>, RequestOptions['body'], unknown]> = [...BODIES, ['/json', { 'content-type': JSON_TYPE }, ['{"chun', 'ked":true}'], { chunked: true }]]
    for (const [route, headers, body, expected] of cases) {
      const reply = await request({ path: route, headers, body })
      assert.deepEqual([reply.status, reply.json], [200, { body: expected }], route + ' ' + JSON.stringify(headers))
    }
  })

  it('takes a multipart upload to disk (readMultipart with res: event.runtime.node.res): the files are removed once h3 has answered', async (t) => {
    const { request, uploads } = await start(t)
    const { contentType, body } = await encodeForm()
    const reply = await request({ path: '/upload', headers: { 'content-type': contentType }, body })
    assert.deepEqual([reply.status, reply.json], [200, UPLOADED])
    await untilEmpty(t, uploads)
  })

  it('answers each refusal as an HTTPError: 415 charset and encoding, 400 bad JSON and poisoning, 413', async (t) => {
    const { request, recorder } = await start(t)
    for (const [headers, body, status, type, message] of REFUSALS) {
      const reply = await request({ path: '/json', headers, body })
      assert.deepEqual([reply.status, reply.json], [status, h3Refusal(status, type, message)], JSON.stringify(headers))
    }
    assert.deepEqual(recorder.outcomes, REFUSALS.map(([, , status, type, message]) => ({ route: '/json', ok: false, status, type, message })))
  })

  it('passes an error bodykit does not expose (a storage failure, 500) on unchanged: h3 answers 500 without detail and logs it', async (t) => {
    const { request } = await start(t)
    const logged: unknown[][] = []
    t.mock.method(console, 'error', (...args: unknown[]) => { logged.push(args) })
    const { contentType, body } = await encodeForm()
    const reply = await request({ path: '/upload-nowhere', headers: { 'content-type': contentType }, body })
    assert.deepEqual([reply.status, reply.json], [500, { status: 500, unhandled: true, message: 'HTTPError' }])
    const error = (args: unknown[]) => args[0] as { status?: unknown, message?: unknown, cause?: { type?: unknown } }
    assert.deepEqual(logged.map((args) => [error(args).status, error(args).message, error(args).cause?.type]), [[500, 'upload could not be stored', 'multipart.storage.failed']])
  })

  it('answers an honest Content-Length over the limit with 413 before any body byte is sent (1 GiB, and one byte over)', async (t) => {
    const { port, recorder } = await start(t)
    for (const length of [1024 ** 3, LIMIT + 1]) {
      const reply = await sendHead(port, rawHead({ 'Content-Type': JSON_TYPE, 'Content-Length': length }, 'POST /json HTTP/1.1'))
      assert.deepEqual([reply.status, reply.json, reply.written], [413, h3Refusal(413, 'entity.too.large', 'request entity too large'), 0], String(length))
    }
    const refused = { route: '/json', ok: false, status: 413, type: 'entity.too.large', message: 'request entity too large' }
    assert.deepEqual(recorder.outcomes, [refused, refused])
  })

  it('stops an endless chunked body near the limit with 413, and serves the next request', async (t) => {
    const { port, request } = await start(t)
    const chunk = Buffer.from((16384).toString(16) + '\r\n' + 'a'.repeat(16384) + '\r\n')
    const reply = await sendHead(port, rawHead({ 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }, 'POST /text HTTP/1.1'), chunk)
    assert.deepEqual([reply.status, reply.json], [413, h3Refusal(413, 'entity.too.large', 'request entity too large')])
    // bodykit cancels the body at the limit (a Request has no read-off): written is the limit plus what the sockets buffer.
    assert.ok(reply.written < LIMIT + 16 * 1024 * 1024, 'wrote ' + reply.written + ' bytes before the 413')
    const next = await request({ method: 'GET', path: '/ping' })
    assert.deepEqual([next.status, next.json], [200, { pong: true }])
  })

  it('leaves the upload directory empty after a file over fileSizeLimit (413) and a malformed form (400)', async (t) => {
    const { request, uploads } = await start(t)
    const tooLarge = await request({ path: '/upload', headers: { 'content-type': FORM_TYPE }, body: formWithFile(FILE_SIZE_LIMIT + 1) })
    assert.deepEqual([tooLarge.status, tooLarge.json], [413, h3Refusal(413, 'multipart.file.too.large', 'file too large in field "photo"')])
    assert.deepEqual(readdirSync(uploads), [])
    const malformed = await request({ path: '/upload', headers: { 'content-type': FORM_TYPE }, body: UNCLOSED_FORM })
    assert.deepEqual([malformed.status, malformed.json], [400, h3Refusal(400, 'multipart.unexpected.end', 'unexpected end of multipart body')])
    assert.deepEqual(readdirSync(uploads), [])
  })

  it('removes the partial file when the client leaves mid-file', async (t) => {
    const { port, uploads, recorder } = await start(t)
    const created = firstFileIn(t, uploads)
    const head = rawHead({ 'Content-Type': FORM_TYPE, 'Content-Length': 1024 * 1024 }, 'POST /upload HTTP/1.1')
    await abortAfter(port, head, filePartHead() + 'a'.repeat(32 * 1024), created)
    // The body's stream errs with Node's own "aborted" (srvx reads the IncomingMessage through Readable.toWeb), which
    // bodykit reports as a 400 without a type, where a Node request gives request.aborted (h3 v1).
    assert.deepEqual(await recorder.next(), { route: '/upload', ok: false, status: 400, type: undefined, message: 'aborted' })
    assert.deepEqual(readdirSync(uploads), [])
  })
})

describe('h3 v2 served with srvx\'s serve()', () => {
  it('reads JSON and a multipart upload, and refuses an honest Content-Length over the limit before the body', async (t) => {
    const uploads = uploadsFolder(t)
    const { app } = createV2App(uploads)
    const server = serve(app, { port: 0, hostname: '127.0.0.1', silent: true, gracefulShutdown: false })
    await server.ready()
    t.after(() => server.close(true))
    const { port } = server.node?.server?.address() as AddressInfo
    const json = await sendRequest(port, { path: '/json', headers: { 'content-type': JSON_TYPE }, body: '{"served":true}' })
    assert.deepEqual([json.status, json.json], [200, { body: { served: true } }])
    const { contentType, body } = await encodeForm()
    const upload = await sendRequest(port, { path: '/upload', headers: { 'content-type': contentType }, body })
    assert.deepEqual([upload.status, (upload.json.files as Payload[]).map((file) => file.size)], [200, [10, 6]])
    await untilEmpty(t, uploads)
    const early = await sendHead(port, rawHead({ 'Content-Type': JSON_TYPE, 'Content-Length': 1024 ** 3 }, 'POST /json HTTP/1.1'))
    assert.deepEqual([early.status, early.json, early.written], [413, h3Refusal(413, 'entity.too.large', 'request entity too large'), 0])
  })
})

describe('h3 v2 in process (app.fetch)', () => {
  it('reads JSON, a urlencoded form and text from the Request; gzip-compressed JSON is inflated', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    for (const [route, headers, body, expected] of BODIES) {
      assert.deepEqual(await call(app, route, { headers, body }), [200, { body: expected }], route + ' ' + JSON.stringify(headers))
    }
  })

  it('answers each refusal as an HTTPError', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    for (const [headers, body, status, type, message] of REFUSALS) {
      assert.deepEqual(await call(app, '/json', { headers, body }), [status, h3Refusal(status, type, message)], JSON.stringify(headers))
    }
  })

  it('refuses a declared Content-Length over the limit without pulling a byte of the body, and cancels it', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    let pulls = 0
    let cancelled = false
    // highWaterMark 0: the stream is pulled only when read.
    const body = new ReadableStream<Uint8Array>({
      pull (controller) {
        pulls++
        controller.enqueue(new Uint8Array(16384))
      },
      cancel () { cancelled = true }
    }, { highWaterMark: 0 })
    const reply = await call(app, '/json', { headers: { 'content-type': JSON_TYPE, 'content-length': String(1024 ** 3) }, body, duplex: 'half' })
    assert.deepEqual([reply, pulls, cancelled], [[413, h3Refusal(413, 'entity.too.large', 'request entity too large')], 0, true])
  })

  it('stops an endless stream near the limit with 413', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    let pulled = 0
    const body = new ReadableStream<Uint8Array>({
      pull (controller) {
        pulled += 16384
        controller.enqueue(new Uint8Array(16384).fill(0x61))
      }
    }, { highWaterMark: 0 })
    const reply = await call(app, '/text', { headers: { 'content-type': 'text/plain' }, body, duplex: 'half' })
    assert.deepEqual([reply, pulled], [[413, h3Refusal(413, 'entity.too.large', 'request entity too large')], LIMIT + 16384])
  })

  it('without a Node response to wait for, leaves a good upload\'s files to the handler, and removes them itself after an error', async (t) => {
    const uploads = uploadsFolder(t)
    const { app } = createV2App(uploads)
    const { contentType, body } = await encodeForm()
    const [status] = await call(app, '/upload', { headers: { 'content-type': contentType }, body })
    assert.equal(status, 200)
    // No `res`: nothing tells bodykit the response is done; the files are the handler's to move or remove.
    assert.equal(readdirSync(uploads).length, 2)
    for (const name of readdirSync(uploads)) rmSync(`${uploads}/${name}`)
    assert.deepEqual(await call(app, '/upload', { headers: { 'content-type': FORM_TYPE }, body: formWithFile(FILE_SIZE_LIMIT + 1) }),
      [413, h3Refusal(413, 'multipart.file.too.large', 'file too large in field "photo"')])
    assert.deepEqual(await call(app, '/upload', { headers: { 'content-type': FORM_TYPE }, body: UNCLOSED_FORM }),
      [400, h3Refusal(400, 'multipart.unexpected.end', 'unexpected end of multipart body')])
    assert.deepEqual(readdirSync(uploads), [])
  })
})

describe('h3 v2: what h3 does with a bodykit error thrown as is', () => {
  it('answers its status, but as an unhandled error: logged, and its message replaced by "HTTPError"', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    const logged: unknown[][] = []
    t.mock.method(console, 'error', (...args: unknown[]) => { logged.push(args) })
    assert.deepEqual(await call(app, '/as-is/json', { headers: { 'content-type': JSON_TYPE }, body: '{"a":' }), [400, { status: 400, unhandled: true, message: 'HTTPError' }])
    assert.deepEqual(await call(app, '/as-is/json', { headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ big: 'x'.repeat(LIMIT) }) }),
      [413, { status: 413, unhandled: true, message: 'HTTPError' }])
    assert.equal(logged.length, 2)
  })
})

describe('h3 v2\'s own readers, for comparison (h3 2.0)', () => {
  it('readRawBody reads a body far past any limit: 5 MiB whole', async (t) => {
    const { request } = await start(t)
    const reply = await request({ path: '/h3/raw', headers: { 'content-type': JSON_TYPE }, body: Buffer.alloc(5 * 1024 * 1024, 0x20) })
    assert.deepEqual([reply.status, reply.json], [200, { size: 5 * 1024 * 1024 }])
  })

  it('readBody keeps a __proto__ key as an own property (plain JSON.parse), never inflates, and checks no charset', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    assert.deepEqual(await call(app, '/h3/body', { headers: { 'content-type': JSON_TYPE }, body: '{"__proto__":{"admin":true},"a":1}' }),
      [200, { type: 'object', keys: ['__proto__', 'a'], ownProto: true, plainPrototype: true }])
    assert.deepEqual(await call(app, '/h3/body', { headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, body: zlib.gzipSync('{"zipped":true}') }),
      [400, { status: 400, statusText: 'Bad Request', message: 'Invalid JSON body' }])
    assert.deepEqual(await call(app, '/h3/body', { headers: { 'content-type': 'application/json; charset=klingon' }, body: '{"a":1}' }),
      [200, { type: 'object', keys: ['a'], ownProto: false, plainPrototype: true }])
  })

  it('readMultipartFormData and readFormData hold every file in memory, with no limit, and answer a malformed form with an unhandled 500', async (t) => {
    const { app } = createV2App(uploadsFolder(t))
    t.mock.method(console, 'error', () => {})
    const large = formWithFile(3 * 1024 * 1024)
    assert.deepEqual(await call(app, '/h3/multipart', { headers: { 'content-type': FORM_TYPE }, body: large }),
      [200, { parts: [{ name: 'photo', filename: 'big.bin', size: 3 * 1024 * 1024 }] }])
    assert.deepEqual(await call(app, '/h3/form-data', { headers: { 'content-type': FORM_TYPE }, body: large }), [200, { entries: [['photo', 3 * 1024 * 1024]] }])
    for (const route of ['/h3/multipart', '/h3/form-data']) {
      assert.deepEqual(await call(app, route, { headers: { 'content-type': FORM_TYPE }, body: UNCLOSED_FORM }), [500, { status: 500, unhandled: true, message: 'HTTPError' }], route)
    }
  })
})

describe('h3 v2\'s own bodyLimit before bodykit', () => {
  it('a chunked body past bodyLimit: its HTTPError fails the stream bodykit reads, and is answered 413 (it ended the process before)', async (t) => {
    const app = new H3().use(bodyLimit(1024)).post('/json', async (event) => ({ body: await readJson(event.req).catch(h3v2Error) }))
    const server = await listen(t, toNodeHandler(app))
    const reply = await server.request({ path: '/json', headers: { 'content-type': JSON_TYPE }, body: ['{"a":"', 'x'.repeat(4096), '"}'] })
    assert.equal(reply.status, 413)
    assert.deepEqual(await call(app, '/json', { headers: { 'content-type': JSON_TYPE }, body: '{"a":1}' }), [200, { body: { a: 1 } }])
  })
})
