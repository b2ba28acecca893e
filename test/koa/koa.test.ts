// bodykit/koa's own: the module's shape, bad options refused when created, errors with bodykit's `type`, every deliberate
// difference from koa-bodyparser 4 and @koa/bodyparser 6 (each beside the library's answer), and the opt-in additions.
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import crypto from 'node:crypto'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import { z } from 'zod'
import bodykitKoa from '../../src/koa'
import { isBodyParserError } from '../../src/errors'
import { hasZstd } from '../helpers/entries'
import { jsonParseMessage } from '../helpers/expect'
import { encode, rawRequest } from '../helpers/server'
import { KOA_MAJORS, koaBodyparser4, koaBodyparser6, send, startKoaApp, type KoaApp, type KoaRequest, type MiddlewareFactory, type Outcome } from './apps'

const bodyParser = bodykitKoa as unknown as MiddlewareFactory
const Koa = KOA_MAJORS[1].Koa
const JSON_TYPE = 'application/json'
const root = path.join(__dirname, '..', '..')

let nextId = 0

/** Starts an app with `middleware` and sends it one request: the answer, and what the app ended with. */
async function exchange (app: KoaApp, request: KoaRequest): Promise<{ status: number, text: string, outcome: Outcome }> {
  const id = 'r' + ++nextId
  const answer = await send(app.port, id, request)
  return { ...answer, outcome: await app.outcome(id) }
}

async function appWith (t: TestContext, middleware: ReturnType<MiddlewareFactory>, handler?: Parameters<typeof startKoaApp>[3]): Promise<KoaApp> {
  return startKoaApp(t, Koa, middleware, handler)
}

const json = (body: KoaRequest['body'], headers: Record<string, string> = {}): KoaRequest => ({ headers: { 'content-type': JSON_TYPE, ...headers }, body })

describe('the module', () => {
  it('is the function (koa-bodyparser 4\'s), carrying .bodyParser (@koa/bodyparser 6\'s), with UnsupportedBodyTypeError; both middleware are named bodyParser', () => {
    assert.equal(typeof bodykitKoa, 'function')
    assert.equal(typeof bodykitKoa.bodyParser, 'function')
    assert.notEqual(bodykitKoa.bodyParser, bodykitKoa)
    assert.deepEqual([bodykitKoa().name, bodykitKoa.bodyParser().name, bodykitKoa.bodyParser.name], ['bodyParser', 'bodyParser', 'bodyParser'])
    assert.ok(new bodykitKoa.UnsupportedBodyTypeError('x') instanceof Error)
  })
})

describe('options', () => {
  const UNSUPPORTED = (type: string): { name: string, message: string } => ({
    name: 'UnsupportedBodyTypeError',
    message: `Invalid enabled type '${type}'. make sure to pass an array contains supported types ([json,form,text,xml]).`
  })
  const refused: Array<[string, Record<string, unknown>, { name: string, message: string | RegExp }]> = [
    // @koa/bodyparser 6 throws these; koa-bodyparser 4 ignores the unknown kind (docs/koa.md).
    ['an unknown kind in enableTypes', { enableTypes: ['json', 'jsonp'] }, UNSUPPORTED('jsonp')],
    ['an unknown kind in extendTypes', { extendTypes: { yaml: ['application/yaml'] } }, UNSUPPORTED('yaml')],
    ['a string in extendTypes with 6\'s options', { parsedMethods: ['POST'], extendTypes: { json: 'application/x-json' } }, UNSUPPORTED('json')],
    // bodykit refuses when created what the libraries fail on per request, or ignore.
    ['both libraries\' strict', { strict: false, jsonStrict: false }, { name: 'TypeError', message: 'option strict is koa-bodyparser 4\'s, which @koa/bodyparser 6 (picked by option jsonStrict) ignores: use the options of one of them' }],
    ['onerror with 6\'s options', { onerror: () => {}, patchNode: true }, { name: 'TypeError', message: /^option onerror is koa-bodyparser 4's/ }],
    ['queryString with 6\'s options', { queryString: {}, parsedMethods: ['POST'] }, { name: 'TypeError', message: /^option queryString is koa-bodyparser 4's/ }],
    ['a limit bytes cannot read', { jsonLimit: 'lots' }, { name: 'TypeError', message: 'option jsonLimit "lots" is invalid' }],
    ['an encoding iconv-lite does not know', { encoding: 'klingon' }, { name: 'TypeError', message: 'option encoding "klingon" is not a charset bodykit can decode' }],
    ['enableTypes that is not a list', { enableTypes: 'json' }, { name: 'TypeError', message: 'option enableTypes must be a list of body types (json, form, text, xml)' }],
    ['a detectJSON that is not a function', { detectJSON: 'yes' }, { name: 'TypeError', message: 'option detectJSON must be a function' }],
    ['a parsedMethods that is not a list', { parsedMethods: 'POST' }, { name: 'TypeError', message: 'option parsedMethods must be a list of methods' }],
    ['an extendTypes entry that is not a string', { extendTypes: { json: [42] } }, { name: 'TypeError', message: 'option extendTypes.json must be a media type or a list of them' }],
    ['a custom qs module', { qs: {} }, { name: 'TypeError', message: /^option qs/ }],
    ['a rawBuffer that is not a boolean', { rawBuffer: 'yes' }, { name: 'TypeError', message: 'option rawBuffer must be a boolean' }],
    ['an onProtoPoisoning bodykit does not know', { onProtoPoisoning: 'drop' }, { name: 'TypeError', message: 'option onProtoPoisoning must be "ignore", "remove" or "error"' }],
    ['a discardLimit bytes cannot read', { discardLimit: 'lots' }, { name: 'TypeError', message: 'option discardLimit "lots" is invalid' }],
    ['a schema that is none', { schema: {} }, { name: 'TypeError', message: /^option schema must be a Standard Schema/ }]
  ]
  for (const [name, options, error] of refused) {
    it(`throws when created for ${name}`, () => {
      assert.throws(() => bodyParser(options), error)
    })
  }

  it('throws for inflateZstd where Node cannot inflate zstd, and takes it where it can', () => {
    if (hasZstd) assert.equal(typeof bodyParser({ inflateZstd: true }), 'function')
    else assert.throws(() => bodyParser({ inflateZstd: true }), { name: 'TypeError', message: 'option inflateZstd needs a Node.js that inflates zstd (22.15 or later)' })
  })

  it('with none of @koa/bodyparser 6\'s own options, reads every method, as koa-bodyparser 4; with parsedMethods, as 6; the named export as 6 unless given 4\'s own options', async (t) => {
    const get = { method: 'GET', ...json('{"get":1}') }
    const library6 = await exchange(await appWith(t, koaBodyparser6()), get)
    const library4 = await exchange(await appWith(t, koaBodyparser4()), get)
    const bare = await exchange(await appWith(t, bodyParser()), get)
    const as6 = await exchange(await appWith(t, bodyParser({ parsedMethods: ['POST', 'PUT', 'PATCH'] })), get)
    assert.deepEqual(JSON.parse(library6.text), { body: encode(undefined), rawBody: encode(undefined), has: [] })
    assert.deepEqual(JSON.parse(library4.text), { body: { get: 1 }, rawBody: '{"get":1}', has: ['body', 'rawBody'] })
    assert.deepEqual([bare.text, as6.text], [library4.text, library6.text])
    // The named export is 6's unless given one of 4's own options.
    const named = await exchange(await appWith(t, bodykitKoa.bodyParser()), get)
    const namedAs4 = await exchange(await appWith(t, bodykitKoa.bodyParser({ strict: true })), get)
    assert.deepEqual([named.text, namedAs4.text], [library6.text, library4.text])
  })
})

describe('errors', () => {
  it('carry the libraries\' status and message, with `expose` as Koa answers them, and bodykit\'s `type`', async (t) => {
    const app = await appWith(t, bodyParser({ jsonLimit: 16 }))
    const cases: Array<[KoaRequest, Outcome['error'], string]> = [
      [json('{bad'), { name: 'SyntaxError', message: jsonParseMessage('{bad'), status: 400, expose: false, type: 'entity.parse.failed' }, 'Bad Request'],
      [json('"str"'), { name: 'SyntaxError', message: 'invalid JSON, only supports object and array', status: 400, expose: false, type: 'entity.parse.failed' }, 'Bad Request'],
      [json('{"__proto__":{}}'), { name: 'SyntaxError', message: 'Object contains forbidden prototype property', status: 400, expose: false, type: 'entity.parse.failed' }, 'Bad Request'],
      [json('{"a":"long enough"}'), { name: 'PayloadTooLargeError', message: 'request entity too large', status: 413, expose: true, type: 'entity.too.large' }, 'request entity too large'],
      [json('{}', { 'content-encoding': 'zstd' }), { name: 'UnsupportedMediaTypeError', message: 'Unsupported Content-Encoding: zstd', status: 415, expose: false, type: 'encoding.unsupported' }, 'Unsupported Media Type']
    ]
    for (const [request, error, text] of cases) {
      const { status, text: answered, outcome } = await exchange(app, request)
      assert.deepEqual({ status, text: answered, error: outcome.error }, { status: error?.status, text, error })
    }
  })

  it('are told apart by isBodyParserError, and go to onerror', async (t) => {
    const seen: unknown[] = []
    const app = await appWith(t, bodyParser({ onerror: (err: unknown, ctx: { status: number }) => { seen.push(err); ctx.status = 422 } }), (ctx) => { ctx.body = 'handled' })
    const { status, text } = await exchange(app, json('{bad'))
    assert.deepEqual([status, text, seen.map(isBodyParserError)], [422, 'handled', [true]])
  })
})

/**
 * Starts a server with the library in a child process, sends `body`, then another request: how the child ended, or
 * `survived` when it answered the second request (it is then stopped).
 */
function crashLibrary (library: string, body: Buffer, headers: Record<string, string>): Promise<{ code: number | null, stderr: string, survived: boolean }> {
  const script = `
    const Koa = require('koa')
    const library = require(${JSON.stringify(library)})
    const app = new Koa()
    app.silent = true
    app.use((library.bodyParser ?? library)({ jsonLimit: 100 }))
    app.use((ctx) => { ctx.body = 'ok' })
    const server = app.listen(0, '127.0.0.1', () => console.log(server.address().port))`
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let stderr = ''
    let survived = false
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    child.stdout.once('data', async (chunk: Buffer) => {
      const port = Number(chunk.toString().trim())
      await send(port, 'crash', { headers, body }).catch(() => {})
      await send(port, 'after', json('{}')).then(() => {
        survived = true
        child.kill()
      }, () => {})
    })
    child.once('error', reject)
    child.once('exit', (code) => { resolve({ code, stderr, survived }) })
  })
}

describe('differences from the libraries (docs/koa.md)', () => {
  // Text that does not compress, so that what zlib inflates of the cut body is past the limit.
  const gzip = zlib.gzipSync('{"a":"' + crypto.randomBytes(500).toString('hex') + '"}')
  const cut = gzip.subarray(0, gzip.length - 100)

  it('a compressed body cut short past the limit ends the process with the libraries (zlib\'s late error goes uncaught); bodykit answers 413 and goes on', async (t) => {
    for (const library of ['koa-bodyparser', '@koa/bodyparser']) {
      const crash = await crashLibrary(library, cut, { 'content-type': JSON_TYPE, 'content-encoding': 'gzip' })
      assert.deepEqual([crash.survived, crash.code], [false, 1], library)
      assert.match(crash.stderr, /unexpected end of file/, library)
    }
    const app = await appWith(t, bodyParser({ jsonLimit: 100 }))
    assert.equal((await exchange(app, json(cut, { 'content-encoding': 'gzip' }))).status, 413)
    assert.equal((await exchange(app, json('{}'))).status, 200)
  })

  it('a damaged compressed body is the client\'s 400 (zlib\'s message kept), where the libraries answer 500', async (t) => {
    const damaged = json('not gzip at all', { 'content-encoding': 'gzip' })
    const library = await exchange(await appWith(t, koaBodyparser4()), damaged)
    const bodykit = await exchange(await appWith(t, bodyParser()), damaged)
    assert.deepEqual([library.status, library.text, library.outcome.error?.message], [500, 'Internal Server Error', 'incorrect header check'])
    assert.deepEqual([bodykit.status, bodykit.text, bodykit.outcome.error?.message, bodykit.outcome.error?.expose], [400, 'Bad Request', 'incorrect header check', false])
  })

  it('Content-Encoding names are read without regard to case (RFC 9110 §8.4.1), where inflation refuses GZIP and Identity', async (t) => {
    const library = await appWith(t, koaBodyparser4())
    const bodykit = await appWith(t, bodyParser())
    for (const [encoding, body] of [['GZIP', zlib.gzipSync('{"a":1}')], ['Identity', Buffer.from('{"a":1}')]] as const) {
      const request = json(body, { 'content-encoding': encoding })
      assert.deepEqual([(await exchange(library, request)).status, (await exchange(bodykit, request)).status], [415, 200], encoding)
    }
  })

  it('a compressed body is held to the limit on the wire too: one that compression made larger than the limit is refused', async (t) => {
    const request: KoaRequest = { headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: zlib.gzipSync('hello') }
    const options = { enableTypes: ['text'], textLimit: 16 }
    const library = await exchange(await appWith(t, koaBodyparser4({ ...options })), request)
    const bodykit = await exchange(await appWith(t, bodyParser(options)), request)
    assert.deepEqual([library.status, JSON.parse(library.text).body], [200, 'hello'])
    assert.deepEqual([bodykit.status, bodykit.text], [413, 'request entity too large'])
  })

  it('a compressed body declared larger than the limit is refused before it is read', async (t) => {
    const app = await appWith(t, bodyParser({ jsonLimit: '1kb' }))
    const head = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${JSON_TYPE}\r\nContent-Encoding: gzip\r\nContent-Length: 100000\r\nConnection: close\r\nx-id: early\r\n\r\n`
    // Only the head is sent: the answer comes without waiting for the body.
    const reply = await rawRequest(app.port, head)
    assert.deepEqual([reply.status, reply.text.endsWith('request entity too large')], [413, true])
  })

  it('the rest of a body too large to read off is not read: the answer says Connection: close, and the connection closes', async (t) => {
    const app = await appWith(t, bodyParser({ jsonLimit: '1kb', discardLimit: '64kb' }))
    const head = `POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${JSON_TYPE}\r\nContent-Length: ${64 * 1024 * 1024}\r\nx-id: discard\r\n\r\n`
    // Writing stops when the server closes the connection; Koa's own keep-alive would otherwise hold it open.
    const reply = await rawRequest(app.port, [head, ...Array.from({ length: 1024 }, () => Buffer.alloc(64 * 1024, 0x20))])
    assert.deepEqual([reply.status, reply.headers.connection], [413, 'close'])
  })

  it('koa-bodyparser 4 ignores an unknown kind in enableTypes; bodykit throws @koa/bodyparser 6\'s error when created', () => {
    assert.equal(typeof koaBodyparser4({ enableTypes: ['json', 'jsonp'] }), 'function')
    assert.throws(() => koaBodyparser6({ enableTypes: ['jsonp'] }), { name: 'UnsupportedBodyTypeError' })
    assert.throws(() => bodyParser({ enableTypes: ['jsonp'] }), { name: 'UnsupportedBodyTypeError' })
  })

  it('a bad encoding or limit throws when created, where the libraries answer every request 415, or read without a limit', async (t) => {
    const badEncoding = await appWith(t, koaBodyparser4({ encoding: 'klingon' }))
    const badLimit = await appWith(t, koaBodyparser4({ formLimit: 'lots' }))
    // 200 KiB, well over the default 56kb: raw-body takes a limit bytes cannot read for none.
    const form: KoaRequest = { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'a=' + 'x'.repeat(200 * 1024) }
    assert.deepEqual([(await exchange(badEncoding, json('{}'))).text, (await exchange(badLimit, form)).status], ['specified encoding unsupported', 200])
    assert.throws(() => bodyParser({ encoding: 'klingon' }), TypeError)
    assert.throws(() => bodyParser({ formLimit: 'lots' }), TypeError)
  })

  it('the options object is left as given, where koa-bodyparser 4 sets detectJSON and onerror and co-body writes allowDots into queryString', () => {
    const given = () => ({ enableTypes: ['json', 'form'], queryString: { depth: 3 } })
    const library = given()
    koaBodyparser4(library)
    assert.notDeepEqual(library, given())
    const bodykit = given()
    bodyParser(bodykit)
    assert.deepEqual(bodykit, given())
  })

  it('encoding: null decodes a text body as utf-8, where koa-bodyparser 4 hands on a Buffer', async (t) => {
    const request: KoaRequest = { headers: { 'content-type': 'text/plain' }, body: 'caf\u00e9' }
    const options = { enableTypes: ['text'], encoding: null }
    const library = await exchange(await appWith(t, koaBodyparser4({ ...options })), request)
    const bodykit = await exchange(await appWith(t, bodyParser({ ...options })), request)
    // The app shows a Buffer tagged with its bytes in base64.
    assert.deepEqual([library.status, JSON.parse(library.text).body], [200, { $buffer: Buffer.from('caf\u00e9').toString('base64') }])
    assert.deepEqual([bodykit.status, JSON.parse(bodykit.text).body], [200, 'caf\u00e9'])
  })
})

describe('bodykit\'s own options', () => {
  it('rawBuffer: the bytes, inflated and not decoded, also for a refused body; empty for no body; unset when nothing was read', async (t) => {
    let refused: unknown
    const app = await appWith(t, bodyParser({ rawBuffer: true, enableTypes: ['json', 'text'], onerror: (_err: unknown, ctx: { request: { rawBuffer?: Buffer } }) => { refused = ctx.request.rawBuffer } }),
      (ctx) => { ctx.body = { rawBuffer: encode((ctx.request as { rawBuffer?: unknown }).rawBuffer), rawBody: (ctx.request as { rawBody?: unknown }).rawBody } })
    const latin1 = Buffer.from('é ü', 'latin1')
    const read = await exchange(app, { headers: { 'content-type': 'text/plain', 'content-encoding': 'gzip' }, body: zlib.gzipSync(latin1) })
    assert.deepEqual(JSON.parse(read.text), { rawBuffer: encode(latin1), rawBody: latin1.toString('utf8') })
    assert.deepEqual(JSON.parse((await exchange(app, { method: 'GET', headers: { 'content-type': JSON_TYPE } })).text), { rawBuffer: encode(Buffer.alloc(0)), rawBody: '' })
    assert.deepEqual(JSON.parse((await exchange(app, { headers: { 'content-type': 'text/html' }, body: 'x' })).text), { rawBuffer: encode(undefined) })
    await exchange(app, json('{bad'))
    assert.deepEqual(refused, Buffer.from('{bad'))
  })

  it('checkCharset: the Content-Type\'s charset decodes the body; one the kind cannot take is 415', async (t) => {
    const app = await appWith(t, bodyParser({ checkCharset: true, enableTypes: ['json', 'form', 'text'] }))
    const text = await exchange(app, { headers: { 'content-type': 'text/plain; charset=latin1' }, body: Buffer.from('café', 'latin1') })
    assert.deepEqual(JSON.parse(text.text).body, 'café')
    const latin1Form = await exchange(app, { headers: { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }, body: 'a=%E9' })
    assert.deepEqual(JSON.parse(latin1Form.text).body, { a: 'é' })
    const refused = await exchange(app, json('{}', { 'content-type': JSON_TYPE + '; charset=latin1' }))
    assert.deepEqual([refused.status, refused.text, refused.outcome.error?.type], [415, 'unsupported charset "LATIN1"', 'charset.unsupported'])
    const unknown = await exchange(app, { headers: { 'content-type': 'text/plain; charset=x-klingon' }, body: 'x' })
    assert.deepEqual([unknown.status, unknown.outcome.error?.type], [415, 'charset.unsupported'])
    // Without it, the charset is ignored, as by the libraries.
    const ignored = await exchange(await appWith(t, bodyParser()), json('{}', { 'content-type': JSON_TYPE + '; charset=latin1' }))
    assert.equal(ignored.status, 200)
  })

  it('inflateZstd: zstd bodies are inflated, with the limit on the inflated bytes', { skip: hasZstd ? false : 'this Node cannot inflate zstd (zlib.zstdDecompress is Node 22.15 and later)' }, async (t) => {
    const compress = (zlib as unknown as { zstdCompressSync: (data: Buffer | string) => Buffer }).zstdCompressSync
    const request = json(compress('{"z":1}'), { 'content-encoding': 'zstd' })
    assert.deepEqual((await exchange(await appWith(t, bodyParser()), request)).status, 415)
    const app = await appWith(t, bodyParser({ inflateZstd: true, jsonLimit: 100 }))
    assert.deepEqual(JSON.parse((await exchange(app, request)).text).body, { z: 1 })
    assert.equal((await exchange(app, json(compress('[' + '1,'.repeat(100) + '1]'), { 'content-encoding': 'zstd' }))).status, 413)
  })

  it('onConstructorPoisoning: a constructor.prototype key refused or removed', async (t) => {
    const body = '{"a":1,"constructor":{"prototype":{"polluted":true}}}'
    const refusing = await exchange(await appWith(t, bodyParser({ onConstructorPoisoning: 'error' })), json(body))
    assert.deepEqual([refusing.status, refusing.outcome.error?.message], [400, 'Object contains forbidden prototype property'])
    const removing = await exchange(await appWith(t, bodyParser({ onConstructorPoisoning: 'remove' })), json(body))
    assert.deepEqual(JSON.parse(removing.text).body, { a: 1 })
  })

  it('schema: ctx.request.body is its output; a refused body is 400 with the issue; a body set before is checked; a disabled parser is not', async (t) => {
    const User = z.object({ name: z.string(), age: z.number().default(18) })
    const app = await appWith(t, bodyParser({ schema: User }))
    assert.deepEqual(JSON.parse((await exchange(app, json('{"name":"Ada"}'))).text).body, { name: 'Ada', age: 18 })
    const refused = await exchange(app, json('{"name":1}'))
    assert.deepEqual([refused.status, refused.outcome.error?.type, refused.outcome.error?.expose], [400, 'entity.validation.failed', true])
    assert.match(refused.text, /^invalid body at name: /)
    assert.equal((await exchange(app, json('{"name":"Ada"}', { 'x-preset-body': '{"preset":1}' }))).status, 400)
    assert.equal((await exchange(app, json('{"name":1}', { 'x-disable': '1' }))).status, 200)
    // With onError, the refusal goes to it, and the next middleware runs without a body.
    const seen: unknown[] = []
    const handled = await appWith(t, bodyParser({ schema: User, onError: (err: { type?: unknown }) => { seen.push(err.type) } }))
    assert.deepEqual([JSON.parse((await exchange(handled, json('{"name":1}'))).text).body, seen], [encode(undefined), ['entity.validation.failed']])
  })
})
