// h3 v1 (Nuxt 3/4, Nitro 2): a real app (createApp, toNodeListener, node:http) whose handlers read `event.node.req` with bodykit's promise API, its refusals answered as h3's own errors, beside h3's own readers.
import assert from 'node:assert/strict'
import { readdirSync } from 'node:fs'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import { toNodeListener } from 'h3'
import { listen, rawHead, rawRequest, type Payload, type RequestOptions } from '../helpers/server'
import {
  FILE_SIZE_LIMIT, FORM_TYPE, LIMIT, REFUSALS, UNCLOSED_FORM, UPLOADED, abortAfter, createV1App, encodeForm, filePartHead, firstFileIn, formWithFile, sendHead,
  untilEmpty, uploadsFolder
} from './apps'

const JSON_TYPE = 'application/json'

/** Serves a fresh v1 app on 127.0.0.1 (closed after the test). */
async function start (t: TestContext) {
  const uploads = uploadsFolder(t)
  const { app, recorder } = createV1App(uploads)
  const server = await listen(t, toNodeListener(app))
  return { ...server, uploads, recorder }
}

/** h3 v1's JSON error as the recipe makes it: `createError({ statusCode, message, data: { type } })`. */
function h3Refusal (statusCode: number, type: string): Payload {
  return { statusCode, stack: [], data: { type } }
}

describe('h3 v1 with bodykit (createApp, toNodeListener, node:http)', () => {
  it('reads JSON, a urlencoded form and text from event.node.req; gzip-compressed JSON is inflated', async (t) => {
    const { request } = await start(t)
    const cases: Array<[string, Record<string, string>, RequestOptions['body'], unknown]> = [
      ['/json', { 'content-type': JSON_TYPE }, '{"order":[1,2]}', { order: [1, 2] }],
      ['/json', { 'content-type': JSON_TYPE }, ['{"chun', 'ked":true}'], { chunked: true }],
      ['/json', { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync('{"zipped":true}'), { zipped: true }],
      ['/form', { 'content-type': 'application/x-www-form-urlencoded' }, 'user[name]=Ada&tags[]=a&tags[]=b', { user: { name: 'Ada' }, tags: ['a', 'b'] }],
      ['/text', { 'content-type': 'text/plain; charset=iso-8859-1' }, Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'café'],
      // Nothing to read: another Content-Type, or none.
      ['/json', { 'content-type': 'text/plain' }, '{}', { $undefined: true }],
      ['/json', {}, '{}', { $undefined: true }]
    ]
    for (const [route, headers, body, expected] of cases) {
      const reply = await request({ path: route, headers, body })
      assert.deepEqual([reply.status, reply.json], [200, { body: expected }], route + ' ' + JSON.stringify(headers))
    }
  })

  it('gives undefined for a POST without a body (no Content-Length, no Transfer-Encoding)', async (t) => {
    const { port } = await start(t)
    const reply = await rawRequest(port, rawHead({ 'Content-Type': JSON_TYPE }, 'POST /json HTTP/1.1'))
    assert.deepEqual([reply.status, reply.json], [200, { body: { $undefined: true } }])
  })

  it('takes a multipart upload to disk (readMultipart with res): the files are there in the handler, removed once it has answered', async (t) => {
    const { request, uploads } = await start(t)
    const { contentType, body } = await encodeForm()
    const reply = await request({ path: '/upload', headers: { 'content-type': contentType }, body })
    assert.deepEqual([reply.status, reply.json], [200, UPLOADED])
    await untilEmpty(t, uploads)
  })

  it('answers each refusal as h3 answers its own errors (createError): 415 charset and encoding, 400 bad JSON and poisoning, 413', async (t) => {
    const { request, recorder } = await start(t)
    for (const [headers, body, status, type] of REFUSALS) {
      const reply = await request({ path: '/json', headers, body })
      assert.deepEqual([reply.status, reply.json], [status, h3Refusal(status, type)], JSON.stringify(headers))
    }
    // The messages stay on the server (h3 v1 sends statusCode, statusMessage and data, never message), as h3's own do.
    assert.deepEqual(recorder.outcomes, REFUSALS.map(([, , status, type, message]) => ({ route: '/json', ok: false, status, type, message })))
  })

  it('passes an error bodykit does not expose (a storage failure, 500) on unchanged: h3 answers 500 without detail and logs it', async (t) => {
    const { request } = await start(t)
    const logged: unknown[][] = []
    t.mock.method(console, 'error', (...args: unknown[]) => { logged.push(args) })
    const { contentType, body } = await encodeForm()
    const reply = await request({ path: '/upload-nowhere', headers: { 'content-type': contentType }, body })
    assert.deepEqual([reply.status, reply.json], [500, { statusCode: 500, stack: [] }])
    const error = (args: unknown[]) => args[2] as { statusCode?: unknown, message?: unknown }
    assert.deepEqual(logged.map((args) => [args[0], args[1], error(args).statusCode, error(args).message]), [['[h3]', '[unhandled]', 500, 'upload could not be stored']])
  })

  it('answers an honest Content-Length over the limit with 413 before any body byte is sent (1 GiB, and one byte over)', async (t) => {
    const { port, recorder } = await start(t)
    for (const length of [1024 ** 3, LIMIT + 1]) {
      const reply = await sendHead(port, rawHead({ 'Content-Type': JSON_TYPE, 'Content-Length': length }, 'POST /json HTTP/1.1'))
      assert.deepEqual([reply.status, reply.json, reply.written], [413, h3Refusal(413, 'entity.too.large'), 0], String(length))
    }
    const refused = { route: '/json', ok: false, status: 413, type: 'entity.too.large', message: 'request entity too large' }
    assert.deepEqual(recorder.outcomes, [refused, refused])
  })

  it('stops an endless chunked body near the limit with 413, and serves the next request', async (t) => {
    const { port, request } = await start(t)
    const chunk = Buffer.from((16384).toString(16) + '\r\n' + 'a'.repeat(16384) + '\r\n')
    const reply = await sendHead(port, rawHead({ 'Content-Type': 'text/plain', 'Transfer-Encoding': 'chunked' }, 'POST /text HTTP/1.1'), chunk)
    assert.deepEqual([reply.status, reply.json], [413, h3Refusal(413, 'entity.too.large')])
    // Written before the answer: the limit, what bodykit reads off after it (at most discardLimit, 64 MiB) and what the sockets buffer.
    assert.ok(reply.written < LIMIT + 64 * 1024 * 1024 + 16 * 1024 * 1024, 'wrote ' + reply.written + ' bytes before the 413')
    const next = await request({ method: 'GET', path: '/ping' })
    assert.deepEqual([next.status, next.json], [200, { pong: true }])
  })

  it('leaves the upload directory empty after a file over fileSizeLimit (413) and a malformed form (400)', async (t) => {
    const { request, uploads } = await start(t)
    const tooLarge = await request({ path: '/upload', headers: { 'content-type': FORM_TYPE }, body: formWithFile(FILE_SIZE_LIMIT + 1) })
    assert.deepEqual([tooLarge.status, tooLarge.json], [413, h3Refusal(413, 'multipart.file.too.large')])
    // Files are removed before the read rejects, so before h3 answers.
    assert.deepEqual(readdirSync(uploads), [])
    const malformed = await request({ path: '/upload', headers: { 'content-type': FORM_TYPE }, body: UNCLOSED_FORM })
    assert.deepEqual([malformed.status, malformed.json], [400, h3Refusal(400, 'multipart.unexpected.end')])
    assert.deepEqual(readdirSync(uploads), [])
    // A file of exactly the limit is taken.
    const fits = await request({ path: '/upload', headers: { 'content-type': FORM_TYPE }, body: formWithFile(FILE_SIZE_LIMIT) })
    assert.deepEqual([fits.status, fits.json], [200, { fields: {}, files: [{ fieldName: 'photo', originalName: 'big.bin', mimeType: 'application/octet-stream', size: FILE_SIZE_LIMIT, onDisk: true }] }])
    await untilEmpty(t, uploads)
  })

  it('removes the partial file when the client leaves mid-file', async (t) => {
    const { port, uploads, recorder } = await start(t)
    const created = firstFileIn(t, uploads)
    // A declared 1 MiB form (read as it streams), of which the head of the file part and 32 KiB arrive.
    const head = rawHead({ 'Content-Type': FORM_TYPE, 'Content-Length': 1024 * 1024 }, 'POST /upload HTTP/1.1')
    await abortAfter(port, head, filePartHead() + 'a'.repeat(32 * 1024), created)
    assert.deepEqual(await recorder.next(), { route: '/upload', ok: false, status: 400, type: 'request.aborted', message: 'request aborted' })
    assert.deepEqual(readdirSync(uploads), [])
  })
})

describe('h3 v1: what h3 does with a bodykit error thrown as is', () => {
  it('answers its status, but logs it as unhandled and sends neither its message nor its type', async (t) => {
    const { request } = await start(t)
    const logged: unknown[][] = []
    t.mock.method(console, 'error', (...args: unknown[]) => { logged.push(args) })
    const reply = await request({ path: '/as-is/json', headers: { 'content-type': JSON_TYPE }, body: '{"a":' })
    assert.deepEqual([reply.status, reply.json], [400, { statusCode: 400, stack: [] }])
    assert.deepEqual(logged.map((args) => args.slice(0, 2)), [['[h3]', '[unhandled]']])
    const large = await request({ path: '/as-is/json', headers: { 'content-type': JSON_TYPE }, body: JSON.stringify({ big: 'x'.repeat(LIMIT) }) })
    assert.deepEqual([large.status, large.json], [413, { statusCode: 413, stack: [] }])
  })
})

describe('h3 v1\'s own readers, for comparison (h3 1.15)', () => {
  it('readRawBody reads a body far past any limit: 5 MiB whole', async (t) => {
    const { request } = await start(t)
    const reply = await request({ path: '/h3/raw', headers: { 'content-type': JSON_TYPE }, body: Buffer.alloc(5 * 1024 * 1024, 0x20) })
    assert.deepEqual([reply.status, reply.json], [200, { size: 5 * 1024 * 1024 }])
  })

  it('readBody never inflates (gzip JSON is a 400) and checks no charset', async (t) => {
    const { request } = await start(t)
    const gzipped = await request({ path: '/h3/body', headers: { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' }, body: zlib.gzipSync('{"zipped":true}') })
    assert.deepEqual([gzipped.status, gzipped.json], [400, { statusCode: 400, statusMessage: 'Bad Request', stack: [] }])
    const klingon = await request({ path: '/h3/body', headers: { 'content-type': 'application/json; charset=klingon' }, body: '{"a":1}' })
    assert.deepEqual([klingon.status, klingon.json], [200, { type: 'object', keys: ['a'], ownProto: false, plainPrototype: true }])
  })

  it('readBody is strict only for exactly application/json: with a charset parameter, malformed JSON is handed on as a string', async (t) => {
    const { request } = await start(t)
    const strict = await request({ path: '/h3/body', headers: { 'content-type': JSON_TYPE }, body: '{"a":' })
    assert.deepEqual([strict.status, strict.json], [400, { statusCode: 400, statusMessage: 'Bad Request', stack: [] }])
    const loose = await request({ path: '/h3/body', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"a":' })
    assert.deepEqual([loose.status, loose.json], [200, { type: 'string', value: '{"a":' }])
  })

  it('readBody (destr) refuses __proto__ for exactly application/json, and drops it otherwise', async (t) => {
    const { request } = await start(t)
    const warned: unknown[][] = []
    t.mock.method(console, 'warn', (...args: unknown[]) => { warned.push(args) })
    const strict = await request({ path: '/h3/body', headers: { 'content-type': JSON_TYPE }, body: '{"__proto__":{"admin":true},"a":1}' })
    assert.deepEqual([strict.status, strict.json], [400, { statusCode: 400, statusMessage: 'Bad Request', stack: [] }])
    const loose = await request({ path: '/h3/body', headers: { 'content-type': 'application/json; charset=utf-8' }, body: '{"__proto__":{"admin":true},"a":1}' })
    assert.deepEqual([loose.status, loose.json], [200, { type: 'object', keys: ['a'], ownProto: false, plainPrototype: true }])
    assert.equal(warned.length, 1)
  })

  it('readMultipartFormData holds every file in memory, with no limit, and reads an unclosed form as no parts', async (t) => {
    const { request } = await start(t)
    const large = await request({ path: '/h3/multipart', headers: { 'content-type': FORM_TYPE }, body: formWithFile(3 * 1024 * 1024) })
    assert.deepEqual([large.status, large.json], [200, { parts: [{ name: 'photo', filename: 'big.bin', size: 3 * 1024 * 1024 }] }])
    const unclosed = await request({ path: '/h3/multipart', headers: { 'content-type': FORM_TYPE }, body: UNCLOSED_FORM })
    assert.deepEqual([unclosed.status, unclosed.json], [200, { parts: [] }])
  })
})
