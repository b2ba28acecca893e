// bodykit/koa's koaBody() against koa-body: the same requests to a Koa app with koa-body and to one with koaBody() given the
// same options, on Koa 2 and Koa 3, over real HTTP: what the middleware set (body, rawBody, files with formidable's fields and
// their contents), the status, Koa's answer and the error. Then the documented differences, each pinned.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import type Koa from 'koa'
import bodykitKoa from '../../src/koa'
import { encode } from '../helpers/server'
import { KOA_MAJORS, send, startKoaApp, type KoaApp, type KoaRequest, type MiddlewareFactory, type Outcome } from './apps'

const load = createRequire(__filename)
/** koa-body's factory, loaded untyped as the other libraries are (apps.ts). */
const libraryKoaBody = (load('koa-body') as { koaBody: MiddlewareFactory }).koaBody
const koaBody = bodykitKoa.koaBody as unknown as MiddlewareFactory

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const MIB = 1024 * 1024

type Case = [name: string, request: KoaRequest]

const json = (body: KoaRequest['body'], headers: Record<string, string> = {}): KoaRequest => ({ headers: { 'content-type': JSON_TYPE, ...headers }, body })
const form = (body: KoaRequest['body']): KoaRequest => ({ headers: { 'content-type': FORM_TYPE }, body })
const typed = (type: string, body?: KoaRequest['body'], method?: string): KoaRequest => ({ method, headers: { 'content-type': type }, body })

/** A part of a multipart body: a field, or a file. */
type Part = { name: string, value: string } | { name: string, filename: string, type?: string, content: string | Buffer }

const BOUNDARY = '----bodykitKoaBodyBoundary'

/** A `multipart/form-data` request written as browsers write it. */
function multipart (parts: Part[], method = 'POST'): KoaRequest {
  const pieces: Buffer[] = []
  for (const part of parts) {
    let head = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="' + part.name + '"'
    if ('filename' in part) head += '; filename="' + part.filename + '"\r\nContent-Type: ' + (part.type ?? 'application/octet-stream')
    pieces.push(Buffer.from(head + '\r\n\r\n'), Buffer.from('value' in part ? part.value : part.content), Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from('--' + BOUNDARY + '--\r\n'))
  return { method, headers: { 'content-type': 'multipart/form-data; boundary=' + BOUNDARY }, body: Buffer.concat(pieces) }
}

const SAMPLE = JSON.stringify({ name: 'Zoë', tags: ['a', 'b'], n: 1.5 })

const BODIES: Case[] = [
  ['a JSON object', json(SAMPLE)],
  ['a JSON array', json('[1,"two"]')],
  ['a JSON string (strict)', json('"abc"')],
  ['invalid JSON', json('{bad')],
  ['an empty JSON body', json('')],
  ['a JSON type without a body', typed(JSON_TYPE)],
  ['a __proto__ key', json('{"__proto__":{"polluted":1}}')],
  ['application/vnd.api+json', typed('application/vnd.api+json', '{"data":null}')],
  ['application/reports+json', typed('application/reports+json', '[{"type":"csp"}]')],
  ['application/scim+json (not koa-body\'s)', typed('application/scim+json', '{"schemas":[]}')],
  ['gzip JSON', json(zlib.gzipSync(SAMPLE), { 'content-encoding': 'gzip' })],
  ['Content-Encoding zstd', json('{"a":1}', { 'content-encoding': 'zstd' })],
  ['a form', form('a=1&b=two&b=three&c.d=4')],
  ['a form with prototype keys', form('__proto__[x]=1&constructor[prototype][y]=3')],
  ['an empty form', form('')],
  ['text/plain', typed('text/plain', 'héllo')],
  ['text/html (text/*)', typed('text/html', '<p>hi</p>')],
  ['text/xml (text/*)', typed('text/xml', '<a/>')],
  ['application/xml (no kind)', typed('application/xml', '<a/>')],
  ['a body without a Content-Type', { body: '{"a":1}' }],
  ['multipart while multipart is off', multipart([{ name: 'a', value: '1' }])]
]

const LIMITS: Case[] = [
  ['JSON over 1mb', json('["' + 'x'.repeat(MIB - 3) + '"]')],
  ['JSON of exactly 1mb', json('["' + 'x'.repeat(MIB - 4) + '"]')],
  ['chunked JSON over 1mb', json(['["' + 'x'.repeat(MIB - 3) + '"]'])],
  ['a form over 56kb', form('a=' + 'x'.repeat(56 * 1024))],
  ['a text body over 56kb', typed('text/plain', 'x'.repeat(56 * 1024 + 1))],
  ['a text body of exactly 56kb', typed('text/plain', 'x'.repeat(56 * 1024))]
]

const METHODS: Case[] = [
  ['GET with a JSON body', typed(JSON_TYPE, '{"a":1}', 'GET')],
  ['DELETE with a JSON body', typed(JSON_TYPE, '{"a":1}', 'DELETE')],
  ['PUT with a form', typed(FORM_TYPE, 'a=1', 'PUT')],
  ['PATCH with text', typed('text/plain', 'hi', 'PATCH')],
  ['GET without a body', { method: 'GET' }],
  ['OPTIONS with a JSON body', typed(JSON_TYPE, '{"a":1}', 'OPTIONS')]
]

const FORMS: Case[] = [
  ['fields only', multipart([{ name: 'a', value: '1' }, { name: 'b', value: 'Zoë' }])],
  ['a repeated field', multipart([{ name: 'tag', value: 'x' }, { name: 'tag', value: 'y' }, { name: 'one', value: '1' }])],
  ['a field with brackets', multipart([{ name: 'list[]', value: 'x' }, { name: 'obj[k]', value: 'y' }])],
  ['one file', multipart([{ name: 'title', value: 'cv' }, { name: 'doc', filename: 'cv.pdf', type: 'application/pdf', content: '%PDF-1.4 data' }])],
  ['two files in one field', multipart([{ name: 'pics', filename: 'a.png', type: 'image/png', content: 'AAAA' }, { name: 'pics', filename: 'b.jpg', type: 'image/jpeg', content: 'BBBBBB' }])],
  ['files in two fields', multipart([{ name: 'a', filename: 'a.txt', type: 'text/plain', content: 'one' }, { name: 'b', filename: 'b.tar.gz', content: Buffer.from([0, 1, 2, 255]) }])],
  ['a file without a Content-Type', multipart([{ name: 'f', filename: 'raw.bin', content: 'xyz' }])],
  ['a file name with odd extension characters', multipart([{ name: 'f', filename: 'photo.JPG?x=1', content: 'img' }])],
  ['a file name without an extension', multipart([{ name: 'f', filename: 'README', content: 'read me' }])],
  ['a 200 KiB file', multipart([{ name: 'f', filename: 'big.bin', content: Buffer.alloc(200 * 1024, 7) }])]
]

/** The files' formidable fields as users read them, random names and paths left out but checked for shape. */
function describeFiles (files: unknown, uploadDir: string): unknown {
  if (files === undefined) return { $undefined: true }
  const one = (file: Record<string, unknown>): unknown => {
    const filepath = file.filepath as string
    const newFilename = file.newFilename as string
    return {
      size: file.size,
      originalFilename: file.originalFilename,
      mimetype: file.mimetype,
      hashAlgorithm: file.hashAlgorithm,
      hash: file.hash,
      hasDate: file.lastModifiedDate instanceof Date,
      inUploadDir: path.dirname(filepath) === uploadDir,
      namedNewFilename: path.basename(filepath) === newFilename,
      extension: newFilename.slice(newFilename.indexOf('.') === -1 ? newFilename.length : newFilename.indexOf('.')),
      content: fs.readFileSync(filepath).toString('base64'),
      json: Object.keys(JSON.parse(JSON.stringify(file)) as object).sort()
    }
  }
  // formidable lists files as their writes end, which need not be form order: compared in a fixed order.
  const byName = (a: Record<string, unknown>, b: Record<string, unknown>): number => String(a.originalFilename).localeCompare(String(b.originalFilename))
  return Object.fromEntries(Object.entries(files as object).sort(([a], [b]) => a.localeCompare(b))
    .map(([field, value]) => [field, Array.isArray(value) ? [...value].sort(byName).map(one) : one(value as Record<string, unknown>)]))
}

/** The handler both apps answer with: body, rawBody, files, and ctx.req's when patched. */
function describe_ (uploadDir: string) {
  return (ctx: Koa.Context): void => {
    const request = ctx.request as Koa.Request & { body?: unknown, rawBody?: unknown, files?: unknown }
    const req = ctx.req as { body?: unknown, rawBody?: unknown, files?: unknown }
    ctx.body = {
      body: encode(request.body),
      rawBody: encode(request.rawBody),
      files: describeFiles(request.files, uploadDir),
      has: ['body', 'rawBody', 'files'].filter((key) => key in request),
      req: { body: encode(req.body), rawBody: encode(req.rawBody), files: describeFiles(req.files, uploadDir) }
    }
  }
}

/** A fresh upload folder, removed after the test. */
function uploadFolder (t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-koa-body-'))
  t.after(() => { fs.rmSync(dir, { recursive: true, force: true }) })
  return dir
}

interface Pair {
  library: KoaApp
  bodykit: KoaApp
  /** bodykit's upload folder. */
  dir: string
}

/** Two apps on one Koa: koa-body and koaBody(), each given `options` and its own upload folder. */
async function startPair (t: TestContext, KoaClass: typeof Koa, options: (uploadDir: string) => Record<string, unknown>): Promise<Pair> {
  const [libraryDir, dir] = [uploadFolder(t), uploadFolder(t)]
  const [library, bodykit] = await Promise.all([
    startKoaApp(t, KoaClass, libraryKoaBody(options(libraryDir)), describe_(libraryDir)),
    startKoaApp(t, KoaClass, koaBody(options(dir)), describe_(dir))
  ])
  return { library, bodykit, dir }
}

let nextId = 0

/** The error as users' tests and Koa's answer see it. */
function comparable (outcome: Outcome): unknown {
  if (outcome.error === undefined) return undefined
  const { message, status, expose } = outcome.error
  return { message, status, exposed: Boolean(expose) }
}

/** Sends one request to both apps; resolves with bodykit's answer and outcome. */
async function compare (pair: Pair, request: KoaRequest, label: string): Promise<void> {
  const id = String(++nextId)
  const [expected, actual] = await Promise.all([send(pair.library.port, id, request), send(pair.bodykit.port, id, request)])
  const [expectedOutcome, actualOutcome] = await Promise.all([pair.library.outcome(id), pair.bodykit.outcome(id)])
  assert.deepEqual({ ...actual, error: comparable(actualOutcome) }, { ...expected, error: comparable(expectedOutcome) }, label)
}

interface Group {
  name: string
  options: (uploadDir: string) => Record<string, unknown>
  cases: Case[]
}

const GROUPS: Group[] = [
  { name: 'defaults', options: () => ({}), cases: [...BODIES, ...LIMITS, ...METHODS] },
  { name: 'includeUnparsed', options: () => ({ includeUnparsed: true }), cases: BODIES },
  { name: 'patchNode, patchKoa: false', options: () => ({ patchNode: true, patchKoa: false, includeUnparsed: true }), cases: BODIES.slice(0, 4) },
  { name: 'jsonStrict: false', options: () => ({ jsonStrict: false }), cases: BODIES.slice(0, 6) },
  { name: 'json and text off', options: () => ({ json: false, text: false }), cases: BODIES },
  { name: 'small limits', options: () => ({ jsonLimit: 10, formLimit: '10b', textLimit: 10 }), cases: [json('{"a":"12345678"}'), json('{"a":1}'), form('a=123456789'), typed('text/plain', '12345678901')].map((request, i) => ['request ' + i, request]) },
  { name: 'encoding: latin1', options: () => ({ encoding: 'latin1' }), cases: [['latin1 text', typed('text/plain', Buffer.from('é', 'latin1'))], ['latin1 JSON', json(Buffer.from('{"é":1}', 'latin1'))]] },
  { name: 'parsedMethods: GET, DELETE', options: () => ({ parsedMethods: [bodykitKoa.HttpMethodEnum.GET, 'DELETE'] }), cases: METHODS },
  { name: 'custom types', options: () => ({ jsonTypes: ['application/x-json'], textTypes: ['text/csv'], urlencodedTypes: ['application/x-form'] }), cases: [['x-json', typed('application/x-json', '{"a":1}')], ['csv', typed('text/csv', 'a,b')], ['x-form', typed('application/x-form', 'a=1')], ['json', json('{"a":1}')]] },
  {
    name: 'onError that answers itself',
    options: () => ({ onError: (err: { status?: number }, ctx: { status: number, body: unknown }) => { ctx.status = 422; ctx.body = { handled: err.status } } }),
    cases: [['invalid JSON', json('{bad')], ['JSON over 1mb', json('["' + 'x'.repeat(MIB) + '"]')]]
  },
  { name: 'multipart', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir } }), cases: [...FORMS, ...BODIES.slice(0, 3)] },
  { name: 'multipart, includeUnparsed, patchNode', options: (uploadDir) => ({ multipart: true, includeUnparsed: true, patchNode: true, formidable: { uploadDir } }), cases: FORMS.slice(0, 4) },
  { name: 'multipart, keepExtensions', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, keepExtensions: true } }), cases: FORMS },
  {
    name: 'multipart, onFileBegin moving a file',
    options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, onFileBegin: (_name: string, file: { filepath: string, originalFilename: string }) => { file.filepath = path.join(uploadDir, 'moved-' + file.originalFilename) } } }),
    cases: FORMS.slice(3, 6)
  },
  { name: 'multipart under limits it stays within', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxFileSize: 13, maxFiles: 1, maxFields: 3 } }), cases: FORMS.slice(0, 4) },
  { name: 'multipart under the form-wide limits', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxTotalFileSize: 300 * 1024, maxFieldsSize: 100 } }), cases: FORMS },
  { name: 'multipart, hashAlgorithm sha1', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, hashAlgorithm: 'sha1' } }), cases: FORMS },
  { name: 'multipart, hashAlgorithm md5, keepExtensions', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, hashAlgorithm: 'md5', keepExtensions: true } }), cases: FORMS.slice(3, 6) },
  { name: 'multipart, filter keeping images', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, filter: (part: { mimetype: string | null }) => part.mimetype?.startsWith('image/') === true } }), cases: FORMS },
  { name: 'multipart, filename', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, filename: (name: string, ext: string) => 'stored-' + name + ext } }), cases: FORMS },
  { name: 'multipart, filename and keepExtensions', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, keepExtensions: true, filename: (name: string, ext: string, part: { name: string }) => part.name + '-' + name + ext } }), cases: FORMS },
  // One file a form: every file of this group is written to the same path.
  { name: 'multipart, filename leaving uploadDir (formidable\'s invalid-name)', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, filename: () => '../escaped' } }), cases: [FORMS[3], FORMS[6], FORMS[9]] },
  { name: 'multipart, onPart handing every part back', options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, onPart: (part: unknown, handle: (part: unknown) => void) => { handle(part) } } }), cases: FORMS },
  {
    name: 'multipart, onPart dropping the field b and the files of pics',
    options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, onPart: (part: { name: string }, handle: (part: unknown) => void) => { if (part.name !== 'b' && part.name !== 'pics') handle(part) } } }),
    cases: FORMS
  },
  {
    name: 'multipart, onFileBegin choosing the path before the file is written',
    options: (uploadDir) => ({ multipart: true, formidable: { uploadDir, onFileBegin: (name: string, file: { filepath: string, newFilename: string }) => { file.filepath = path.join(uploadDir, name + '-' + file.newFilename) } } }),
    cases: FORMS
  }
]

describe('koaBody() against koa-body', () => {
  for (const { name: major, Koa } of KOA_MAJORS) {
    it(`${major}: the same body, rawBody, files, status, answer and error for each request`, async (t) => {
      for (const group of GROUPS) {
        const pair = await startPair(t, Koa, group.options)
        for (const [name, request] of group.cases) await compare(pair, request, `${group.name}: ${name}`)
      }
    })
  }
})

/** The files left in a folder. */
function filesIn (dir: string): string[] {
  return fs.readdirSync(dir)
}

/** The same request to both apps: each answer and outcome. */
async function sendBoth (pair: Pair, request: KoaRequest): Promise<{ library: { status: number, text: string, outcome: Outcome }, bodykit: { status: number, text: string, outcome: Outcome } }> {
  const id = String(++nextId)
  const [library, bodykit] = await Promise.all([send(pair.library.port, id, request), send(pair.bodykit.port, id, request)])
  const [libraryOutcome, bodykitOutcome] = await Promise.all([pair.library.outcome(id), pair.bodykit.outcome(id)])
  return { library: { ...library, outcome: libraryOutcome }, bodykit: { ...bodykit, outcome: bodykitOutcome } }
}

/** A form of `count` files of `size` bytes each, in one field. */
function filesForm (count: number, size: number): KoaRequest {
  return multipart(Array.from({ length: count }, (_, i) => ({ name: 'f', filename: 'f' + i + '.bin', content: Buffer.alloc(size, 97) })))
}

/** Waits until the response's 'finish' handlers have run their removals. */
async function settle (): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 50))
}

describe('koaBody(): the documented differences from koa-body', () => {
  const [{ Koa }] = KOA_MAJORS.slice(-1)

  it('ctx.request.files: koa-body lists a file field named __proto__ under the key "0"; bodykit\'s object has no prototype, and that field is its own key', async (t) => {
    const filesOf = (uploadDir: string) => (ctx: Koa.Context): void => {
      const files = (ctx.request as Koa.Request & { files?: Record<string, unknown> }).files as Record<string, { originalFilename?: string }>
      const own = Object.getOwnPropertyDescriptor(files, '__proto__')?.value as { originalFilename?: string } | undefined
      const prototype = Object.getPrototypeOf(files) as { originalFilename?: string } | null
      ctx.body = { prototype: prototype === null ? null : prototype === Object.prototype ? 'Object.prototype' : prototype.originalFilename ?? 'other', own: own?.originalFilename ?? null, keys: Object.keys(files), uploadDir: uploadDir !== '' }
    }
    const [libraryDir, dir] = [uploadFolder(t), uploadFolder(t)]
    const [library, bodykit] = await Promise.all([
      startKoaApp(t, Koa, libraryKoaBody({ multipart: true, formidable: { uploadDir: libraryDir } }), filesOf(libraryDir)),
      startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir } }), filesOf(dir))
    ])
    const request = multipart([{ name: '__proto__', filename: 'evil.txt', type: 'text/plain', content: 'x' }, { name: 'doc', filename: 'a.txt', type: 'text/plain', content: 'y' }])
    const [fromLibrary, fromBodykit] = await Promise.all([send(library.port, 'p1', request), send(bodykit.port, 'p1', request)])
    // formidable's `files.__proto__ = [file]` makes the array the prototype; koa-body's for...in then lists its index 0.
    const libraryFiles = JSON.parse(fromLibrary.text) as { keys: string[] }
    assert.deepEqual(libraryFiles, { prototype: 'Object.prototype', own: null, keys: ['0', 'doc'], uploadDir: true })
    assert.deepEqual(JSON.parse(fromBodykit.text), { prototype: null, own: 'evil.txt', keys: ['__proto__', 'doc'], uploadDir: true })
  })

  it('a file over maxFileSize: koa-body answers 500 (formidable\'s error has no status); bodykit 413 multipart.file.too.large, httpCode 413, no file left', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxFileSize: 4 } }))
    const { library, bodykit } = await sendBoth(pair, filesForm(2, 5))
    assert.equal(library.status, 500)
    assert.equal(library.text, 'Internal Server Error')
    assert.equal(bodykit.status, 413)
    assert.equal(bodykit.text, 'file too large in field "f"')
    assert.deepEqual(bodykit.outcome.error, { name: 'PayloadTooLargeError', message: 'file too large in field "f"', status: 413, expose: true, type: 'multipart.file.too.large' })
    assert.deepEqual(filesIn(pair.dir), [])
  })

  it('more files than maxFiles: koa-body 500; bodykit 413 multipart.files.too.many, the files stored so far removed', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxFiles: 2 } }))
    const { library, bodykit } = await sendBoth(pair, filesForm(3, 1000))
    assert.equal(library.status, 500)
    assert.equal(bodykit.status, 413)
    assert.equal(bodykit.outcome.error?.type, 'multipart.files.too.many')
    assert.equal(bodykit.text, 'too many files')
    assert.deepEqual(filesIn(pair.dir), [])
  })

  it('onError gets formidable\'s `httpCode` on bodykit\'s multipart errors', async (t) => {
    const dir = uploadFolder(t)
    const seen: unknown[] = []
    const app = await startKoaApp(t, Koa, koaBody({
      multipart: true,
      formidable: { uploadDir: dir, maxFiles: 1 },
      onError: (err: { httpCode?: unknown, status?: unknown }, ctx: { status: number, body: unknown }) => { seen.push([err.httpCode, err.status]); ctx.status = err.status as number; ctx.body = 'refused' }
    }), describe_(dir))
    const answer = await send(app.port, String(++nextId), filesForm(2, 10))
    assert.equal(answer.status, 413)
    assert.deepEqual(seen, [[413, 413]])
  })

  it('finite defaults: 10 files of at most 10 MiB (formidable: any number, 200 MiB)', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir } }))
    const tooMany = await sendBoth(pair, filesForm(11, 10))
    assert.equal(tooMany.library.status, 200)
    assert.equal(tooMany.bodykit.status, 413)
    assert.equal(tooMany.bodykit.outcome.error?.type, 'multipart.files.too.many')
    const tooLarge = await sendBoth(pair, filesForm(1, 10 * MIB + 1))
    assert.equal(tooLarge.library.status, 200)
    assert.equal(tooLarge.bodykit.status, 413)
    assert.equal(tooLarge.bodykit.outcome.error?.type, 'multipart.file.too.large')
    // The refused forms left nothing; the one within the limits left its files, as koa-body does.
    assert.deepEqual(filesIn(pair.dir), [])
    const atLimits = await sendBoth(pair, filesForm(10, 1024))
    assert.equal(atLimits.bodykit.status, 200)
    await settle()
    assert.equal(filesIn(pair.dir).length, 10)
  })

  it('originalFilename is the base name of the client\'s name (formidable keeps the path as sent)', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir } }))
    const { library, bodykit } = await sendBoth(pair, multipart([{ name: 'f', filename: '../../etc/passwd', content: 'root' }]))
    assert.equal((JSON.parse(library.text) as { files: { f: { originalFilename: string } } }).files.f.originalFilename, '../../etc/passwd')
    assert.equal((JSON.parse(bodykit.text) as { files: { f: { originalFilename: string } } }).files.f.originalFilename, 'passwd')
  })

  it('files are listed in form order (formidable: in the order their writes end)', async (t) => {
    const dir = uploadFolder(t)
    const app = await startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir } }), (ctx) => {
      const files = (ctx.request as { files?: Record<string, Array<{ originalFilename: string }>> }).files
      ctx.body = { fields: Object.keys(files ?? {}), names: (files?.pics ?? []).map((file) => file.originalFilename) }
    })
    const big = Buffer.alloc(512 * 1024, 1)
    const answer = await send(app.port, String(++nextId), multipart([
      { name: 'z', filename: 'z.txt', content: 'z' },
      { name: 'pics', filename: 'big.png', content: big },
      { name: 'pics', filename: 'small.png', content: 's' },
      { name: 'a', filename: 'a.txt', content: 'a' }
    ]))
    assert.deepEqual(JSON.parse(answer.text), { fields: ['z', 'pics', 'a'], names: ['big.png', 'small.png'] })
  })

  it('files are kept after a successful response, as koa-body leaves them; removed when the response is an error or the client leaves before it; removeFilesAfterResponse removes them after any response', async (t) => {
    const failing = (uploadDir: string) => (ctx: Koa.Context): void => {
      describe_(uploadDir)(ctx)
      if (ctx.get('x-fail') !== '') ctx.status = Number(ctx.get('x-fail'))
    }
    const request = multipart([{ name: 'f', filename: 'a.txt', content: 'one' }, { name: 'g', filename: 'b', content: 'two' }])
    const [libraryDir, dir, removingDir] = [uploadFolder(t), uploadFolder(t), uploadFolder(t)]
    const [library, bodykit, removing] = await Promise.all([
      startKoaApp(t, Koa, libraryKoaBody({ multipart: true, formidable: { uploadDir: libraryDir, keepExtensions: true } }), failing(libraryDir)),
      startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir, keepExtensions: true } }), failing(dir)),
      startKoaApp(t, Koa, koaBody({ multipart: true, removeFilesAfterResponse: true, formidable: { uploadDir: removingDir } }), failing(removingDir))
    ])
    const ok = await Promise.all([library, bodykit, removing].map((app) => send(app.port, String(++nextId), request)))
    assert.deepEqual(ok.map((answer) => answer.status), [200, 200, 200])
    await settle()
    assert.deepEqual([filesIn(libraryDir).length, filesIn(dir).length, filesIn(removingDir).length], [2, 2, 0])
    assert.deepEqual(filesIn(dir).map((name) => path.extname(name)).sort(), ['', '.txt'])
    // An answer of 400 or 500 after the form was read: the request failed, its files go (koa-body leaves them).
    for (const status of ['400', '500']) {
      const failed = await Promise.all([library, bodykit].map((app) => send(app.port, String(++nextId), { ...request, headers: { ...request.headers, 'x-fail': status } })))
      assert.deepEqual(failed.map((answer) => answer.status), [Number(status), Number(status)])
    }
    await settle()
    assert.deepEqual([filesIn(libraryDir).length, filesIn(dir).length], [6, 2])
  })

  it('onFileBegin: called with the field name and the file; a changed filepath is where the file is, and it is kept', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({
      multipart: true,
      formidable: {
        uploadDir,
        onFileBegin: (name: string, file: { filepath: string, originalFilename: string }) => { if (name === 'keep') file.filepath = path.join(uploadDir, 'kept-' + file.originalFilename) }
      }
    }))
    const request = multipart([{ name: 'keep', filename: 'mine.txt', content: 'mine' }, { name: 'temp', filename: 'tmp.txt', content: 'tmp' }])
    const { library, bodykit } = await sendBoth(pair, request)
    assert.equal(bodykit.text, library.text)
    const files = (JSON.parse(bodykit.text) as { files: Record<string, { content: string, namedNewFilename: boolean }> }).files
    assert.equal(Buffer.from(files.keep.content, 'base64').toString(), 'mine')
    assert.equal(files.keep.namedNewFilename, false)
    await settle()
    // Written where onFileBegin said, not moved there: the other file is the only one under a random name.
    assert.equal(filesIn(pair.dir).length, 2)
    assert.ok(filesIn(pair.dir).includes('kept-mine.txt'))
  })

  it('a filename with a `..` segment is written as invalid-name in uploadDir; formidable lets `../<uploadDir>-x/f` reach a sibling folder whose name begins with uploadDir\'s', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({
      multipart: true,
      formidable: { uploadDir, filename: () => `../${path.basename(uploadDir)}-sibling/escaped` }
    }))
    fs.mkdirSync(pair.dir + '-sibling')
    t.after(() => { fs.rmSync(pair.dir + '-sibling', { recursive: true, force: true }) })
    const { bodykit } = await sendBoth(pair, multipart([{ name: 'f', filename: 'a.txt', content: 'contents' }]))
    assert.equal(bodykit.status, 200)
    await settle()
    assert.deepEqual(fs.readdirSync(pair.dir + '-sibling'), [], 'nothing written beside uploadDir')
    assert.deepEqual(filesIn(pair.dir), ['invalid-name'])
    assert.equal(fs.readFileSync(path.join(pair.dir, 'invalid-name'), 'utf8'), 'contents')
  })

  it('a throw from onFileBegin is the request\'s error, and no file is left', async (t) => {
    const dir = uploadFolder(t)
    const app = await startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir, onFileBegin: () => { throw new Error('no files today') } } }), describe_(dir))
    const id = String(++nextId)
    const answer = await send(app.port, id, filesForm(2, 10))
    assert.equal(answer.status, 500)
    assert.equal((await app.outcome(id)).error?.message, 'no files today')
    assert.deepEqual(filesIn(dir), [])
  })

  it('an empty file (a file input left empty) is kept with size 0; koa-body answers 500 unless allowEmptyFiles: true and minFileSize: 0', async (t) => {
    const request = multipart([{ name: 'f', filename: '', content: '' }, { name: 'g', filename: 'empty.txt', content: '' }])
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir } }))
    const { library, bodykit } = await sendBoth(pair, request)
    assert.equal(library.status, 500)
    assert.equal(library.outcome.error?.message, 'options.allowEmptyFiles is false, file size should be greater than 0')
    assert.equal(bodykit.status, 200)
    const files = (JSON.parse(bodykit.text) as { files: Record<string, { size: number, originalFilename: string }> }).files
    assert.deepEqual([files.f.size, files.f.originalFilename, files.g.size, files.g.originalFilename], [0, '', 0, 'empty.txt'])
    const allowing = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, allowEmptyFiles: true, minFileSize: 0 } }))
    const both = await sendBoth(allowing, request)
    assert.deepEqual([both.library.status, both.bodykit.status], [200, 200])
    assert.equal(both.bodykit.text, both.library.text)
    assert.throws(() => koaBody({ formidable: { allowEmptyFiles: false } }), TypeError)
    assert.throws(() => koaBody({ formidable: { minFileSize: 1 } }), TypeError)
  })

  it('malformed or unusual forms: koa-body answers 500 (formidable\'s errors have no status) or reads a nameless field; bodykit answers 400 with its type, and inflates a gzip form', async (t) => {
    const pair = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir } }))
    const noBoundary = await sendBoth(pair, typed('multipart/form-data', 'abc'))
    assert.deepEqual([noBoundary.library.status, noBoundary.library.outcome.error?.message], [500, 'bad content-type header, no multipart boundary'])
    assert.deepEqual([noBoundary.bodykit.status, noBoundary.bodykit.outcome.error?.type], [400, 'multipart.boundary.invalid'])
    const nameless = await sendBoth(pair, multipart([{ name: '', value: 'x' }]))
    assert.equal(nameless.library.status, 200)
    assert.deepEqual([nameless.bodykit.status, nameless.bodykit.text], [400, 'part without a field name'])
    const form = multipart([{ name: 'a', value: '1' }])
    const gzipped = await sendBoth(pair, { ...form, headers: { ...form.headers, 'content-encoding': 'gzip' }, body: zlib.gzipSync(form.body as Buffer) })
    assert.equal(gzipped.library.status, 500)
    assert.equal(gzipped.bodykit.status, 200)
    assert.deepEqual((JSON.parse(gzipped.bodykit.text) as { body: unknown }).body, { a: '1' })
    assert.deepEqual(filesIn(pair.dir), [])
  })

  it('options: formidable options bodykit does not read, and bad values, throw a TypeError now; koa-body\'s own checks throw too', () => {
    for (const options of [
      { formidable: { maxTotalFileSize: '1mb' } },
      { formidable: { maxFieldsSize: -1 } },
      { formidable: { hashAlgorithm: 'no-such-hash' } },
      { formidable: { hashAlgorithm: true } },
      { formidable: { onPart: 'yes' } },
      { formidable: { filter: {} } },
      { formidable: { filename: 'name' } },
      { formidable: { fileWriteStreamHandler: () => null } },
      { formidable: { encoding: 'latin1' } },
      { removeFilesAfterResponse: 'yes' },
      { formidable: { maxFiles: 0 } },
      { formidable: { maxFileSize: '1mb' } },
      { parsedMethods: ['OPTIONS'] },
      { jsonLimit: 'lots' },
      { multipart: 'yes' },
      { encoding: 'no-such-charset' }
    ]) {
      assert.throws(() => koaBody(options), TypeError, JSON.stringify(options))
    }
    for (const options of [{ parsedMethods: ['OPTIONS'] }, { multipart: 'yes' }]) assert.throws(() => libraryKoaBody(options))
    assert.doesNotThrow(() => koaBody({ formidable: { multiples: true } }))
    assert.doesNotThrow(() => koaBody({ formidable: { hashAlgorithm: 'sha256', maxTotalFileSize: 0, maxFieldsSize: 10, onPart: () => {}, filter: () => true, filename: () => 'x' } }))
  })

  it('maxTotalFileSize (by default maxFileSize, as formidable\'s) and maxFieldsSize: koa-body answers 500; bodykit 413 multipart.files.too.large and multipart.fields.too.large, no file left', async (t) => {
    const total = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxTotalFileSize: 25 } }))
    const overTotal = await sendBoth(total, filesForm(3, 10))
    assert.deepEqual([overTotal.library.status, overTotal.library.outcome.error?.message], [500, 'options.maxTotalFileSize (25 bytes) exceeded, received 30 bytes of file data'])
    assert.deepEqual([overTotal.bodykit.status, overTotal.bodykit.text, overTotal.bodykit.outcome.error?.type], [413, 'files too large', 'multipart.files.too.large'])
    assert.deepEqual(filesIn(total.dir), [])
    const byFileSize = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxFileSize: 10 } }))
    const overByFileSize = await sendBoth(byFileSize, filesForm(2, 8))
    assert.deepEqual([overByFileSize.library.status, overByFileSize.bodykit.status, overByFileSize.bodykit.outcome.error?.type], [500, 413, 'multipart.files.too.large'])
    assert.deepEqual(filesIn(byFileSize.dir), [])
    const fields = await startPair(t, Koa, (uploadDir) => ({ multipart: true, formidable: { uploadDir, maxFieldsSize: 100 } }))
    const overFields = await sendBoth(fields, multipart([{ name: 'a', value: 'x'.repeat(60) }, { name: 'b', value: 'y'.repeat(60) }, { name: 'f', filename: 'f.txt', content: 'f' }]))
    assert.deepEqual([overFields.library.status, overFields.library.outcome.error?.message], [500, 'options.maxFieldsSize (100 bytes) exceeded, received 120 bytes of field data'])
    assert.deepEqual([overFields.bodykit.status, overFields.bodykit.text, overFields.bodykit.outcome.error?.type], [413, 'fields too large', 'multipart.fields.too.large'])
    await settle()
    assert.deepEqual(filesIn(fields.dir), [])
  })

  it('onFileBegin runs before the file\'s first byte is written, in both; a path it sets is where the file is written', async (t) => {
    const seen: Record<string, unknown[]> = { library: [], bodykit: [] }
    const recording = (who: string) => (uploadDir: string) => ({
      multipart: true,
      formidable: {
        uploadDir,
        onFileBegin: (name: string, file: { filepath: string, size: number, newFilename: string }) => {
          seen[who].push([name, fs.existsSync(file.filepath), file.size])
          file.filepath = path.join(uploadDir, 'chosen-' + name)
        }
      }
    })
    const [libraryDir, dir] = [uploadFolder(t), uploadFolder(t)]
    const [library, bodykit] = await Promise.all([
      startKoaApp(t, Koa, libraryKoaBody(recording('library')(libraryDir)), describe_(libraryDir)),
      startKoaApp(t, Koa, koaBody(recording('bodykit')(dir)), describe_(dir))
    ])
    const request = multipart([{ name: 'one', filename: 'a.bin', content: Buffer.alloc(300 * 1024, 1) }, { name: 'two', filename: 'b.bin', content: 'b' }])
    const [fromLibrary, fromBodykit] = await Promise.all([send(library.port, 'b1', request), send(bodykit.port, 'b1', request)])
    assert.equal(fromBodykit.text, fromLibrary.text)
    assert.deepEqual(seen.bodykit, [['one', false, 0], ['two', false, 0]])
    assert.deepEqual(seen.bodykit, seen.library)
    assert.deepEqual(filesIn(dir).sort(), ['chosen-one', 'chosen-two'])
  })

  it('a throw or rejection from onPart (the form ends once its promises settle), filter, filename or an async onFileBegin is the request\'s error (koa-body leaves a rejection unhandled); no file is left', async (t) => {
    const failures: Array<[string, Record<string, unknown>]> = [
      ['onPart throws', { onPart: () => { throw new Error('onPart says no') } }],
      ['onPart rejects', { onPart: async () => { throw new Error('onPart says no') } }],
      ['filter throws', { filter: () => { throw new Error('filter says no') } }],
      ['filename throws', { filename: () => { throw new Error('filename says no') } }],
      ['onFileBegin rejects', { onFileBegin: async () => { throw new Error('onFileBegin says no') } }]
    ]
    for (const [name, hooks] of failures) {
      const dir = uploadFolder(t)
      const app = await startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir, ...hooks } }), describe_(dir))
      const id = String(++nextId)
      const answer = await send(app.port, id, multipart([{ name: 'f', filename: 'a.txt', content: 'first' }, { name: 'a', value: '1' }, { name: 'g', filename: 'b.txt', content: 'second' }]))
      assert.equal(answer.status, 500, name)
      assert.match(String((await app.outcome(id)).error?.message), /says no$/, name)
      await settle()
      assert.deepEqual(filesIn(dir), [], name)
    }
    const dir = uploadFolder(t)
    const app = await startKoaApp(t, Koa, koaBody({ multipart: true, formidable: { uploadDir: dir, filename: () => 42 } }), describe_(dir))
    const id = String(++nextId)
    assert.equal((await send(app.port, id, filesForm(1, 3))).status, 500)
    assert.equal((await app.outcome(id)).error?.message, 'formidable.filename must return a string, not number')
  })

  it('onPart: a part not handed back and read by the app is the app\'s; one neither handed back nor read is dropped, and the form still ends', async (t) => {
    const dir = uploadFolder(t)
    const read: Record<string, string> = {}
    const app = await startKoaApp(t, Koa, koaBody({
      multipart: true,
      formidable: {
        uploadDir: dir,
        onPart: (part: NodeJS.ReadableStream & { name: string }, handle: (part: unknown) => void) => {
          if (part.name === 'mine') {
            let text = ''
            part.on('data', (chunk: Buffer) => { text += chunk.toString() })
            part.on('end', () => { read[part.name] = text })
          } else if (part.name !== 'dropped') handle(part)
        }
      }
    }), describe_(dir))
    const answer = await send(app.port, String(++nextId), multipart([
      { name: 'mine', filename: 'm.txt', content: 'read by the app' },
      { name: 'dropped', filename: 'd.bin', content: Buffer.alloc(200 * 1024, 2) },
      { name: 'kept', filename: 'k.txt', content: 'kept' },
      { name: 'field', value: 'v' }
    ]))
    assert.equal(answer.status, 200)
    const parsed = JSON.parse(answer.text) as { body: unknown, files: Record<string, unknown> }
    assert.deepEqual(Object.keys(parsed.files), ['kept'])
    assert.deepEqual(parsed.body, { field: 'v' })
    assert.deepEqual(read, { mine: 'read by the app' })
    assert.equal(filesIn(dir).length, 1)
  })

  it('exports HttpMethodEnum with koa-body\'s values', () => {
    assert.deepEqual({ ...bodykitKoa.HttpMethodEnum }, { ...(load('koa-body') as { HttpMethodEnum: object }).HttpMethodEnum })
  })
})
