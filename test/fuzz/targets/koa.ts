// Fuzz target 9: bodykit/koa in Koa apps (Koa 2 or 3), each request a fake IncomingMessage on a fake socket given to
// app.callback() in the drawn pieces. bodyParser() of either dialect against koa-bodyparser 4 or @koa/bodyparser 6 given
// the same options and request: the same status, answer text and error (message, status, expose), as
// test/koa/differential.test.ts compares them, but for docs/koa.md's deliberate differences, each accepted by name below.
// koaBody({ multipart: true }) on drawn forms, formidable options and hooks (onPart, filter, filename, onFileBegin),
// removeFilesAfterResponse and client aborts: one answer (none once the client left), the app done within ANSWER_MS,
// errors from the table (or the hook's own), no file left in uploadDir or where onFileBegin moved one once the app has
// removed those it was handed, and no listener left on the request.
import fs from 'node:fs'
import { createRequire } from 'node:module'
import { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Duplex } from 'node:stream'
import zlib from 'node:zlib'
import type Koa from 'koa'
import bodykitKoa from '../../../src/koa'
import { prefixVerdictOf } from '../compressed-model'
import { describeContext, KOA_MAJORS, koaBodyparser4, koaBodyparser6, type KoaMiddleware, type MiddlewareFactory } from '../../koa/apps'
import {
  ANSWER_MS, checkError, checkEscaped, drawSplits, Finding, FRAMINGS, framingHeaders, headerValue, splitAt, takeEscaped, turn, withInput,
  withinAnswerTime, type Answers, type Source, type Wire
} from './harness'

const bodyParser = bodykitKoa as unknown as MiddlewareFactory
const koaBody = bodykitKoa.koaBody as unknown as MiddlewareFactory

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json;', 'application/vnd.api+json', 'application/reports+json',
  'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=iso-8859-1', 'text/plain', 'text/xml', 'application/xml', 'text/html',
  'application/x-json', 'application/octet-stream', 'APPLICATION/JSON', 'application/json; charset', 'detect/me']
const FORM_TYPES = ['multipart/form-data; boundary=X', 'multipart/form-data; boundary="a b"', 'multipart/form-data', 'multipart/mixed; boundary=X', 'application/json']
const CONTENT_ENCODINGS = [undefined, 'identity', 'gzip', 'deflate', 'br', 'GZIP', 'Identity', 'zstd', 'gzip, br', 'x-gzip', '']
const ENABLE_TYPES = [undefined, ['json'], ['form'], ['text'], ['xml'], ['json', 'form', 'text', 'xml'], []]
const LIMITS = [undefined, 1, 8, 24, 100, 1024]
const METHODS = ['POST', 'PUT', 'PATCH', 'GET', 'DELETE', 'HEAD', 'OPTIONS']
const ON_FILE_BEGIN = ['none', 'move', 'async-move', 'throw', 'reject'] as const
const ON_PART = ['none', 'handle', 'drop-files', 'read-fields', 'throw', 'reject'] as const
const FILTER = ['none', 'text-only', 'throw'] as const
const FILENAME = ['none', 'named', 'escape', 'throw'] as const

export function draw (source: Source) {
  return {
    branch: source.pick('branch', ['bodyParser', 'koaBody'] as const),
    major: source.pick('major', [3, 2] as const),
    dialect: source.pick('dialect', [4, 6] as const),
    method: source.pick('method', METHODS),
    enableTypes: source.pick('enableTypes', ENABLE_TYPES),
    strict: source.bool('notStrict') ? false : undefined,
    limit: source.pick('limit', LIMITS),
    encoding: source.pick('encoding', [undefined, 'latin1', 'utf-16le'] as const),
    onProtoPoisoning: source.pick('onProtoPoisoning', [undefined, 'remove', 'ignore'] as const),
    queryString: source.bool('queryString'),
    extendTypes: source.bool('extendTypes'),
    detectJSON: source.bool('detectJSON'),
    onError: source.bool('onError'),
    otherMethods: source.bool('otherMethods'),
    maxFileSize: source.pick('maxFileSize', [undefined, 1, 8, 100] as const),
    maxFiles: source.pick('maxFiles', [undefined, 1, 2] as const),
    maxFields: source.pick('maxFields', [undefined, 1, 3] as const),
    keepExtensions: source.bool('keepExtensions'),
    onFileBegin: source.pick('onFileBegin', ON_FILE_BEGIN),
    onPart: source.pick('onPart', ON_PART),
    filter: source.pick('filter', FILTER),
    filename: source.pick('filename', FILENAME),
    hashAlgorithm: source.bool('hashAlgorithm'),
    maxTotalFileSize: source.pick('maxTotalFileSize', [undefined, 4, 50] as const),
    maxFieldsSize: source.pick('maxFieldsSize', [undefined, 2, 40] as const),
    removeFilesAfterResponse: source.bool('removeFilesAfterResponse'),
    /** The piece before which the client leaves (koaBody only); past the last: it stays. */
    leaveAt: source.int('leaveAt', 0, 16),
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 80)),
    formType: headerValue(source.text('formType', FORM_TYPES, 80)),
    contentEncoding: source.pick('contentEncoding', CONTENT_ENCODINGS),
    /** The body compressed by the target (a fuzzer cannot write a valid stream itself), then cut short at `cut` (0: not). */
    compress: source.pick('compress', ['none', 'gzip', 'deflate', 'br'] as const),
    cut: source.int('cut', 0, 65535),
    framing: source.pick('framing', FRAMINGS),
    splits: drawSplits(source, 8),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

// ---------------------------------------------------------------------------
// Apps, made once per set of options and kept (the libraries and bodykit/koa do their work when created).
// ---------------------------------------------------------------------------

const detectJSON = (ctx: Koa.Context): boolean => ctx.get('content-type').includes('detect')
/** The errors `onerror`/`onError` was given, by request: a refusal the app answered itself. */
const handledErrors = new WeakMap<IncomingMessage, unknown>()
const answering = (err: { status?: unknown }, ctx: Koa.Context): void => {
  handledErrors.set(ctx.req, err)
  ctx.status = 422
  ctx.body = { handled: err.status }
}

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>
interface App { handle: Handler, errors: WeakMap<IncomingMessage, unknown> }
const apps = new Map<string, App>()

/** A Koa app: a recorder of the error the chain threw, the parser, and a handler answering with what it set. */
function appOf (key: string, major: 2 | 3, make: () => KoaMiddleware, handler: (ctx: Koa.Context) => void): App {
  let app = apps.get(key)
  if (app !== undefined) return app
  const KoaClass = (major === 2 ? KOA_MAJORS[0] : KOA_MAJORS[1]).Koa
  const koa = new KoaClass()
  koa.silent = true
  const errors = new WeakMap<IncomingMessage, unknown>()
  koa.use(async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      errors.set(ctx.req, err)
      throw err
    }
  })
  koa.use(make())
  koa.use(handler)
  app = { handle: koa.callback() as Handler, errors }
  if (apps.size > 500) apps.clear()
  apps.set(key, app)
  return app
}

/** bodyParser()'s options for an input, in the dialect drawn (the library is given a copy: koa-bodyparser 4 writes to it). */
function parserOptions (input: Input): Record<string, unknown> {
  const limit = input.limit
  const options: Record<string, unknown> = { jsonLimit: limit, formLimit: limit, textLimit: limit, xmlLimit: limit }
  if (input.enableTypes !== undefined) options.enableTypes = input.enableTypes
  if (input.encoding !== undefined) options.encoding = input.encoding
  if (input.detectJSON) options.detectJSON = detectJSON
  if (input.dialect === 4) {
    if (input.strict === false) options.strict = false
    if (input.onProtoPoisoning !== undefined) options.onProtoPoisoning = input.onProtoPoisoning
    if (input.queryString) options.queryString = { allowDots: false, depth: 1, parameterLimit: 3, arrayLimit: 2 }
    if (input.extendTypes) options.extendTypes = { json: 'application/x-json', text: ['text/html'], xml: 'application/octet-stream' }
    if (input.onError) options.onerror = answering
  } else {
    options.parsedMethods = input.otherMethods ? ['POST', 'GET', 'DELETE'] : ['POST', 'PUT', 'PATCH']
    if (input.strict === false) options.jsonStrict = false
    if (input.extendTypes) options.extendTypes = { json: ['application/x-json'], xml: ['application/octet-stream', 'text/html'] }
    if (input.onError) options.onError = answering
  }
  return options
}

// ---------------------------------------------------------------------------
// One exchange: a fake request on a fake socket through app.callback(), the answer read off the response.
// ---------------------------------------------------------------------------

interface Exchange {
  status: number
  text: string
  error: unknown
  /** Response heads written (Node's implicit one included). */
  heads: number
  req: IncomingMessage
  res: ServerResponse
  /** Whether the client left before the end. */
  left: boolean
}

const REQ_EVENTS = ['data', 'end', 'error', 'aborted', 'close', 'readable']

/** Runs one request; its pieces come one per turn of the loop, or (`atOnce`) every piece and the end in one turn. */
async function exchange (app: App, method: string, wire: Wire, leaveAt: number | null, where: string, atOnce = false): Promise<Exchange> {
  const socket = new Duplex({ read () {}, write (_chunk, _encoding, callback) { callback() } }) as unknown as Socket
  const req = new IncomingMessage(socket)
  Object.assign(req, { method, url: '/', httpVersion: '1.1', httpVersionMajor: 1, httpVersionMinor: 1, headers: { host: 'localhost', ...wire.headers } })
  const res = new ServerResponse(req)
  res.assignSocket(socket)
  const out: Exchange = { status: 0, text: '', error: undefined, heads: 0, req, res, left: false }
  const writeHead = res.writeHead
  res.writeHead = function countedWriteHead (this: ServerResponse, ...args: unknown[]) {
    out.heads++
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args)
  } as ServerResponse['writeHead']
  const end = res.end
  res.end = function recordedEnd (this: ServerResponse, ...args: unknown[]) {
    const [chunk] = args
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') out.text += Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk)
    out.status = this.statusCode
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args)
  } as ServerResponse['end']
  let handled: Promise<unknown>
  try {
    handled = app.handle(req, res)
  } catch (err) {
    throw new Finding(`${where}: app.callback() threw: ${String((err as Error)?.stack ?? err)}`, 'threw')
  }
  for (let i = 0; i < wire.chunks.length; i++) {
    if (!atOnce || i === 0) await turn()
    if (i === leaveAt) break
    if (req.destroyed) break
    req.push(wire.chunks[i])
  }
  if (!atOnce || wire.chunks.length === 0) await turn()
  if (leaveAt !== null && leaveAt < wire.chunks.length) {
    // What Node's server does when the client goes away: the request destroyed (ECONNRESET), then the socket.
    out.left = true
    req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    socket.destroy()
  } else if (!req.destroyed) {
    req.complete = true
    req.push(null)
  }
  await withinAnswerTime(handled, where)
  for (let i = 0; i < 3; i++) await turn()
  out.error = app.errors.get(req)
  return out
}

/** What the differential suite compares: the status, the answer text, and the error's message, status and expose. */
function comparable (x: Exchange): { status: number, text: string, error?: { message: unknown, status: unknown, exposed: boolean } } {
  if (x.error === undefined) return { status: x.status, text: x.text }
  const e = x.error as { message?: unknown, status?: unknown, expose?: unknown }
  return { status: x.status, text: x.text, error: { message: e.message, status: e.status, exposed: Boolean(e.expose) } }
}

function same (a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b)
}

/** The request an input makes: headers, and the body compressed (maybe cut short) and split as drawn. */
function wireOf (input: Input, contentType: string): Wire {
  let body = input.body
  if (input.compress !== 'none') {
    body = input.compress === 'gzip' ? zlib.gzipSync(body) : input.compress === 'deflate' ? zlib.deflateSync(body) : zlib.brotliCompressSync(body)
    if (input.cut > 0) body = body.subarray(0, input.cut % body.length)
  }
  const headers: Record<string, string> = { ...framingHeaders(input.framing, body.length) }
  if (contentType !== '') headers['content-type'] = contentType
  if (input.contentEncoding !== undefined) headers['content-encoding'] = headerValue(input.contentEncoding)
  return { headers, chunks: splitAt(body, input.splits) }
}

/** Listeners bodykit left on the request. */
function listenersLeft (req: IncomingMessage): string[] {
  return REQ_EVENTS.filter((event) => req.listenerCount(event) > 0).map((event) => `${event}: ${req.listenerCount(event)}`)
}

// ---------------------------------------------------------------------------
// bodyParser() against the library.
// ---------------------------------------------------------------------------

const INFLATED = new Set(['gzip', 'deflate', 'br'])
const SIZE_INVALID = 'request size did not match content length'
const TOO_LARGE = 'request entity too large'

const ZLIB_FACTORIES = ['createUnzip', 'createGunzip', 'createInflate', 'createBrotliDecompress'] as const
/** zlib's module object as the libraries require it (an ES import of it is read-only). */
const zlibModule = createRequire(__filename)('zlib') as Record<string, unknown>
const noop = (): void => {}

/**
 * Runs the library with an 'error' listener on every zlib stream it makes. docs/koa.md, "A compressed body cut short
 * whose inflated part is over the limit": raw-body answers 413 and stops listening, then zlib's error on the cut end
 * has no listener and ends the process (here: after the answer, so the answers still compare). The listener keeps that
 * error from the process; while the library reads, its own listeners see every error as before.
 */
async function guardingZlib<T> (run: () => Promise<T>): Promise<T> {
  // Node's zlib factories are read-only, but configurable.
  const originals = ZLIB_FACTORIES.map((name) => Object.getOwnPropertyDescriptor(zlibModule, name) as PropertyDescriptor)
  for (const [i, name] of ZLIB_FACTORIES.entries()) {
    const original = originals[i].value as (...args: unknown[]) => NodeJS.EventEmitter
    Object.defineProperty(zlibModule, name, { ...originals[i], value: (...args: unknown[]) => original(...args).on('error', noop) })
  }
  try {
    return await run()
  } finally {
    for (const [i, name] of ZLIB_FACTORIES.entries()) Object.defineProperty(zlibModule, name, originals[i])
  }
}

async function checkBodyParser (input: Input): Promise<void> {
  const wire = wireOf(input, input.contentType)
  const options = parserOptions(input)
  const key = JSON.stringify(options) + (input.detectJSON ? 'detect' : '') + (input.onError ? 'onError' : '')
  const library = input.dialect === 4 ? koaBodyparser4 : koaBodyparser6
  const encoding = wire.headers['content-encoding']
  // compat: inflation compares encodings as sent; bodykit reads them without regard to case (docs/koa.md). The
  // library is given the name in lower case, so the two read the same body.
  const lower = encoding?.toLowerCase()
  const libraryWire = lower !== undefined && lower !== encoding && (INFLATED.has(lower) || lower === 'identity') ? { ...wire, headers: { ...wire.headers, 'content-encoding': lower } } : wire
  const libraryApp = appOf(`library ${input.major} ${input.dialect} ${key}`, input.major, () => library({ ...options }), (ctx) => { ctx.body = describeContext(ctx) })
  const expected = await guardingZlib(() => exchange(libraryApp, input.method, libraryWire, null, `koa-bodyparser ${input.dialect}`))
  // Anything else of the library's that escaped is the library's, not a finding.
  takeEscaped()
  const bodykitApp = appOf(`bodykit ${input.major} ${input.dialect} ${key}`, input.major, () => bodyParser(options), (ctx) => { ctx.body = describeContext(ctx) })
  const where = `bodyParser() (dialect ${input.dialect}, Koa ${input.major})`
  const actual = await exchange(bodykitApp, input.method, wire, null, where)
  checkEscaped()
  if (actual.heads !== 1) throw new Finding(`${where}: ${actual.heads} answers`, 'wrong-value')
  const left = listenersLeft(actual.req)
  if (left.length > 0) throw new Finding(`${where}: listeners left on the request: ${left.join(', ')}`, 'left-behind')
  if (actual.error !== undefined) checkError(actual.error, where)
  const a = comparable(actual)
  if (sameOrDocumented(input, wire, actual, comparable(expected))) return
  // docs/koa.md, "A damaged compressed body whose answer depends on when zlib gets to each piece": the library answers
  // 413 when zlib inflated past the limit before the request ended, else zlib's error, so one body may get either;
  // bodykit answers as for the body had it all arrived, which is the library's answer when the whole body and its end
  // come in one turn. Not a finding when the library answers so then, and bodykit answers the body so delivered alike.
  if (lower !== undefined && INFLATED.has(lower)) {
    const libraryAtOnce = comparable(await guardingZlib(() => exchange(libraryApp, input.method, libraryWire, null, `koa-bodyparser ${input.dialect}, at once`, true)))
    takeEscaped()
    if (!same(libraryAtOnce, comparable(expected)) && sameOrDocumented(input, wire, actual, libraryAtOnce)) {
      const bodykitAtOnce = comparable(await exchange(bodykitApp, input.method, wire, null, `${where}, at once`, true))
      checkEscaped()
      if (same(bodykitAtOnce, a)) return
      throw new Finding(`${where}: two answers for one body, in turns and at once:\n  ${JSON.stringify(a)}\n  ${JSON.stringify(bodykitAtOnce)}`, 'differ')
    }
  }
  if (lower !== undefined && INFLATED.has(lower) && isPrefixRuleDifference(input, lower, wire, actual, expected)) return
  throw new Finding(`${where} against the library:\n  ${JSON.stringify(a)}\n  ${JSON.stringify(comparable(expected))}`, 'differ')
}

/**
 * docs/koa.md, "A damaged compressed body whose answer depends on when zlib gets to each piece": bodykit answers a
 * damaged body by its first error in byte order (issue 45), 413 when the longest prefix that inflates without error
 * passes the limit, where the library's stream drops the output of the write zlib fails in and answers zlib's error
 * (500), in turns or at once. As body-parser differs (`damagedBody` in test/differential/corpus.ts).
 */
function isPrefixRuleDifference (input: Input, encoding: string, wire: Wire, actual: Exchange, expected: Exchange): boolean {
  const verdict = prefixVerdictOf(encoding === 'br' ? 'br' : 'unzip', Buffer.concat(wire.chunks), input.limit ?? 56 * 1024)
  if (verdict.kind !== 'damaged' || !verdict.passes) return false
  const refusal = (actual.error ?? handledErrors.get(actual.req)) as { status?: unknown, message?: unknown } | undefined
  const theirs = expected.error as { message?: unknown } | undefined
  return refusal?.status === 413 && refusal.message === TOO_LARGE && expected.status === 500 && theirs?.message === verdict.error.message
}

/** Whether bodykit's answer is the library's, or differs from it only as docs/koa.md says it does. */
function sameOrDocumented (input: Input, wire: Wire, actual: Exchange, b: ReturnType<typeof comparable>): boolean {
  const a = comparable(actual)
  if (same(a, b)) return true
  // bodykit's refusal: thrown to Koa, or given to onerror/onError (whose answer, 422, hides it).
  const refusal = (actual.error ?? handledErrors.get(actual.req)) as { status?: unknown, message?: unknown } | undefined
  const refused = (status: number, message: string): boolean => refusal?.status === status && refusal.message === message
  const compressed = INFLATED.has(String(wire.headers['content-encoding']).toLowerCase())
  const declared = Number(wire.headers['content-length'] ?? 0)
  const sent = wire.chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const limit = input.limit ?? 56 * 1024
  // docs/koa.md, "A compressed body whose Content-Length is over the limit" and "over the limit on the wire but not
  // inflated": bodykit refuses it (413) where the library inflates it.
  if (compressed && Math.max(declared, sent) > limit && refused(413, TOO_LARGE)) return true
  // docs/koa.md, "A compressed body whose Content-Length is not the number of bytes received": bodykit refuses it (400)
  // before inflating it, where the library inflates it (co-body checks no length for a compressed body).
  if (compressed && declared !== sent && wire.headers['content-length'] !== undefined && refused(400, SIZE_INVALID)) return true
  // docs/koa.md, "A damaged compressed body": the library's 500 is bodykit's 400, zlib's message kept, not exposed.
  return compressed && b.status === 500 && b.error !== undefined && same(a, { status: 400, text: 'Bad Request', error: { ...b.error, status: 400 } })
}

// ---------------------------------------------------------------------------
// koaBody({ multipart: true }): one answer, no hang, nothing left.
// ---------------------------------------------------------------------------

const uploadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-fuzz-koa-'))
const movedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-fuzz-koa-moved-'))
process.on('exit', () => {
  fs.rmSync(uploadDir, { recursive: true, force: true })
  fs.rmSync(movedDir, { recursive: true, force: true })
})

/** The error a formidable hook throws: the request's own error, not one of bodykit's table. */
const hookError = new Error('a formidable hook refused the part')

type Part = NodeJS.ReadableStream & { name: string, originalFilename: string | null, mimetype: string | null }

function onPartOf (how: Input['onPart']): ((part: Part, handle: (part: Part) => void) => unknown) | undefined {
  switch (how) {
    case 'handle': return (part, handle) => { handle(part) }
    case 'drop-files': return (part, handle) => { if (part.mimetype === null) handle(part) }
    // Fields read by the app itself; files handed back.
    case 'read-fields': return (part, handle) => { if (part.mimetype === null) part.resume(); else handle(part) }
    case 'throw': return () => { throw hookError }
    case 'reject': return async (part, handle) => {
      handle(part)
      await turn()
      throw hookError
    }
    default: return undefined
  }
}

function filterOf (how: Input['filter']): ((part: Part) => unknown) | undefined {
  switch (how) {
    case 'text-only': return (part) => part.mimetype?.startsWith('text/')
    case 'throw': return () => { throw hookError }
    default: return undefined
  }
}

function filenameOf (how: Input['filename']): ((name: string, ext: string, part: Part) => string) | undefined {
  switch (how) {
    case 'named': return (name, ext, part) => part.name + '-' + name + ext
    case 'escape': return () => '../escaped'
    case 'throw': return () => { throw hookError }
    default: return undefined
  }
}

function onFileBeginOf (how: Input['onFileBegin']): ((name: string, file: { filepath: string, newFilename: string }) => unknown) | undefined {
  switch (how) {
    case 'move': return (_name, file) => { file.filepath = path.join(movedDir, file.newFilename) }
    case 'async-move': return async (_name, file) => {
      await turn()
      file.filepath = path.join(movedDir, file.newFilename)
    }
    case 'throw': return () => { throw hookError }
    case 'reject': return async () => {
      await turn()
      throw hookError
    }
    default: return undefined
  }
}

/**
 * The handler: answers with the fields and files. The files are the app's after a successful response (as koa-body
 * leaves them), so it removes them, unless `removeFilesAfterResponse` leaves that to bodykit (then it removes only
 * those onFileBegin moved out of uploadDir, which bodykit removes too: either may come first).
 */
function formHandlerOf (removesFiles: boolean) {
  return (ctx: Koa.Context): void => {
    const files = (ctx.request as { files?: Record<string, { filepath: string } | Array<{ filepath: string }>> }).files ?? {}
    for (const value of Object.values(files)) {
      for (const file of Array.isArray(value) ? value : [value]) if (removesFiles || file.filepath.startsWith(movedDir)) fs.rmSync(file.filepath, { force: true })
    }
    ctx.body = { body: describeContext(ctx).body, files: Object.keys(files) }
  }
}

/** Waits (a few turns, then 1 ms sleeps) until both folders are empty; false after ANSWER_MS. */
async function foldersEmpty (): Promise<boolean> {
  const deadline = Date.now() + ANSWER_MS
  for (let polls = 0; ; polls++) {
    if (fs.readdirSync(uploadDir).length === 0 && fs.readdirSync(movedDir).length === 0) return true
    if (Date.now() > deadline) return false
    await (polls < 20 ? turn() : new Promise((resolve) => setTimeout(resolve, 1)))
  }
}

async function checkKoaBody (input: Input): Promise<void> {
  const wire = wireOf(input, input.formType)
  const formidable = {
    uploadDir,
    maxFileSize: input.maxFileSize,
    maxFiles: input.maxFiles,
    maxFields: input.maxFields,
    maxTotalFileSize: input.maxTotalFileSize,
    maxFieldsSize: input.maxFieldsSize,
    hashAlgorithm: input.hashAlgorithm ? 'sha1' : undefined,
    keepExtensions: input.keepExtensions,
    onFileBegin: onFileBeginOf(input.onFileBegin),
    onPart: onPartOf(input.onPart),
    filter: filterOf(input.filter),
    filename: filenameOf(input.filename)
  }
  const options = {
    multipart: true,
    formidable,
    removeFilesAfterResponse: input.removeFilesAfterResponse,
    onError: input.onError ? answering : undefined,
    formLimit: input.limit,
    jsonLimit: input.limit,
    textLimit: input.limit
  }
  const key = JSON.stringify({ ...options, onFileBegin: input.onFileBegin, onPart: input.onPart, filter: input.filter, filename: input.filename, onError: input.onError })
  const app = appOf(`koaBody ${input.major} ${key}`, input.major, () => koaBody(options), formHandlerOf(!input.removeFilesAfterResponse))
  const where = `koaBody({ multipart: true }) (Koa ${input.major})`
  const leaveAt = input.leaveAt < wire.chunks.length ? input.leaveAt : null
  const run = await exchange(app, input.method, wire, leaveAt, where)
  try {
    checkEscaped()
    if (run.heads > 1 || (!run.left && run.heads !== 1)) throw new Finding(`${where}: ${run.heads} answers${run.left ? ' (the client left)' : ''}`, 'wrong-value')
    if (run.error !== undefined && run.error !== hookError) checkError(run.error, where)
    const left = listenersLeft(run.req)
    if (left.length > 0) throw new Finding(`${where}: listeners left on the request: ${left.join(', ')}`, 'left-behind')
    if (!(await foldersEmpty())) throw new Finding(`${where}: files left: ${[...fs.readdirSync(uploadDir), ...fs.readdirSync(movedDir)].join(', ')}`, 'left-behind')
  } catch (err) {
    // The next input starts from empty folders whatever this one left.
    for (const dir of [uploadDir, movedDir]) for (const file of fs.readdirSync(dir)) fs.rmSync(path.join(dir, file), { force: true })
    throw err
  }
}

export async function check (input: Input): Promise<void> {
  if (input.branch === 'bodyParser') await checkBodyParser(input)
  else await checkKoaBody(input)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('koa', data, draw, check)

const form = (...parts: string[]): string => parts.map((part) => '--X\r\n' + part + '\r\n').join('') + '--X--\r\n'
const field = (name: string, value: string): string => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`
const file = (name: string, filename: string, data: string): string => `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${data}`
const koaBodyForm = { branch: 'koaBody', leaveAt: 16, formType: 'multipart/form-data; boundary=X' }

export const seeds: Record<string, Answers> = {
  'json-object': { body: '{"name":"Zoë","tags":["a","b"],"n":1.5}' },
  'json-string-strict': { body: '"abc"' },
  'json-string-not-strict': { notStrict: true, body: '"abc"' },
  'json-invalid': { body: '{bad' },
  'json-empty': { body: '' },
  'json-proto': { body: '{"__proto__":{"polluted":1},"constructor":{"prototype":{"x":1}}}' },
  'json-proto-remove': { onProtoPoisoning: 'remove', body: '{"a":{"__proto__":{"polluted":1}}}' },
  'json-bom': { body: '\xef\xbb\xbf{"bom":1}' },
  'json-pieces': { body: '{"a":"' + 'x'.repeat(40) + '"}', pieces: 4, split: [3, 10, 30] },
  'json-limit': { limit: 8, body: '{"a":"over eight"}' },
  'json-limit-chunked': { limit: 8, framing: 'chunked', body: '{"a":"over eight"}', pieces: 3, split: [2, 9] },
  'json-short-length': { framing: 'short', body: '{"a":1}' },
  'json-long-length': { framing: 'long', body: '{"a":1}' },
  'json-latin1': { encoding: 'latin1', body: '{"caf\xe9":"\xe9"}' },
  'json-utf16': { encoding: 'utf-16le', body: '{\x00"\x00a\x00"\x00:\x001\x00}\x00' },
  'json-type-semicolon': { contentType: 'application/json;', body: '{"a":1}' },
  'json-type-capitals': { contentType: 'APPLICATION/JSON', body: '{"a":1}' },
  'json-type-bare-parameter': { contentType: 'application/json; charset', body: '{"a":1}' },
  'json-reports-6': { dialect: 6, contentType: 'application/reports+json', body: '[{"type":"csp"}]' },
  'json-vnd': { contentType: 'application/vnd.api+json', body: '{"data":null}' },
  'json-gzip': { contentEncoding: 'gzip', compress: 'gzip', body: '{"gz":true}' },
  'json-deflate-as-gzip': { contentEncoding: 'gzip', compress: 'deflate', body: '{"deflate":1}' },
  'json-br': { contentEncoding: 'br', compress: 'br', body: '{"br":1}', pieces: 2, split: [5] },
  'json-gzip-upper': { contentEncoding: 'GZIP', compress: 'gzip', body: '{"upper":1}' },
  'json-gzip-cut': { contentEncoding: 'gzip', compress: 'gzip', cut: 12, body: '{"cut":"' + 'y'.repeat(30) + '"}' },
  'json-gzip-cut-over-limit': { contentEncoding: 'gzip', compress: 'gzip', cut: 20, limit: 24, body: '{"a":"' + 'z'.repeat(200) + '"}' },
  'json-gzip-over-limit-on-wire': { contentEncoding: 'gzip', compress: 'gzip', limit: 8, body: '{"a":1}' },
  'json-gzip-damaged': { contentEncoding: 'gzip', body: '\x1f\x8b\x08\x00garbage' },
  'json-zstd': { contentEncoding: 'zstd', body: '{"a":1}' },
  'json-encoding-list': { contentEncoding: 'gzip, br', body: '{"a":1}' },
  'json-encoding-empty': { contentEncoding: '', body: '{"a":1}' },
  'form': { contentType: 'application/x-www-form-urlencoded', body: 'a=1&b=two&b=three&c.d=4&e[]=x&f[0][g]=h' },
  'form-proto': { contentType: 'application/x-www-form-urlencoded', body: '__proto__[x]=1&hasOwnProperty=2&constructor[prototype][y]=3' },
  'form-query-string': { contentType: 'application/x-www-form-urlencoded', queryString: true, body: 'a[b][c]=1&d.e=2&p=1&q=2&r=3&s=4' },
  'form-latin1': { contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', body: 'a=\xe9&b=%E9' },
  'form-deflate': { contentType: 'application/x-www-form-urlencoded', contentEncoding: 'deflate', compress: 'deflate', body: 'a=1&b=2' },
  'text-enabled': { contentType: 'text/plain', enableTypes: [['json', 'form', 'text', 'xml']], body: 'h\xe9llo' },
  'text-disabled': { contentType: 'text/plain', body: 'hello' },
  'xml-limit': { contentType: 'application/xml', enableTypes: [['xml']], limit: 8, body: '<a>over eight</a>' },
  'extend-types-4': { contentType: 'application/x-json', extendTypes: true, enableTypes: [['json', 'form', 'text', 'xml']], body: '{"x":1}' },
  'extend-types-6': { dialect: 6, contentType: 'application/octet-stream', extendTypes: true, enableTypes: [['json', 'form', 'text', 'xml']], body: '{"x":1}' },
  'detect-json': { contentType: 'detect/me', detectJSON: true, body: '{"detected":1}' },
  'detect-json-6-not-enabled': { dialect: 6, contentType: 'detect/me', detectJSON: true, enableTypes: [['text']], body: '{"detected":1}' },
  'no-type': { contentType: '', body: '{"a":1}' },
  'get-body': { method: 'GET', body: '{"get":1}' },
  'get-empty': { method: 'GET', framing: 'length', body: '' },
  'head': { method: 'HEAD', body: '{"head":1}' },
  'delete-6-other-methods': { dialect: 6, otherMethods: true, method: 'DELETE', body: '{"d":1}' },
  'put-6': { dialect: 6, method: 'PUT', body: '{"put":1}' },
  'on-error-4': { onError: true, body: '{bad' },
  'on-error-6': { dialect: 6, onError: true, limit: 1, body: '{"a":1}' },
  'koa2': { major: 2, body: '{"koa":2}' },
  'koa2-form': { major: 2, contentType: 'application/x-www-form-urlencoded', body: 'k=2' },
  'multipart-fields-files': { ...koaBodyForm, body: form(field('a', '1'), file('f', 'a.txt', 'data'), field('b[c]', '2')) },
  'multipart-pieces': { ...koaBodyForm, body: form(field('a', '1'), file('f', 'a.txt', 'x'.repeat(60))), pieces: 5, split: [5, 40, 90, 120] },
  'multipart-keep-extensions': { ...koaBodyForm, keepExtensions: true, body: form(file('f', 'photo.tar.gz', 'p'), file('g', 'README', 'r')) },
  'multipart-move': { ...koaBodyForm, onFileBegin: 'move', body: form(file('f', 'm.txt', 'moved')) },
  'multipart-async-move': { ...koaBodyForm, onFileBegin: 'async-move', keepExtensions: true, body: form(file('f', 'm.txt', 'moved'), file('f', 'n.txt', 'too')) },
  'multipart-throw': { ...koaBodyForm, onFileBegin: 'throw', body: form(file('f', 't.txt', 'thrown'), file('g', 'u.txt', 'second')) },
  'multipart-reject': { ...koaBodyForm, onFileBegin: 'reject', body: form(file('f', 'r.txt', 'rejected')) },
  'multipart-max-file-size': { ...koaBodyForm, maxFileSize: 1, body: form(file('f', 'big.txt', 'more than one')) },
  'multipart-max-files': { ...koaBodyForm, maxFiles: 1, body: form(file('f', '1', 'a'), file('f', '2', 'b')) },
  'multipart-max-fields': { ...koaBodyForm, maxFields: 1, body: form(field('a', '1'), field('b', '2')) },
  'multipart-on-error': { ...koaBodyForm, onError: true, maxFiles: 1, body: form(file('f', '1', 'a'), file('f', '2', 'b')) },
  'multipart-leave-mid-file': { ...koaBodyForm, leaveAt: 2, body: form(field('a', '1'), file('f', 'a.txt', 'x'.repeat(80)), file('g', 'b.txt', 'y'.repeat(80))), pieces: 4, split: [60, 130, 200] },
  'multipart-leave-before-body': { ...koaBodyForm, leaveAt: 0, body: form(file('f', 'a.txt', 'data')) },
  'multipart-leave-move': { ...koaBodyForm, leaveAt: 1, onFileBegin: 'async-move', body: form(file('f', 'a.txt', 'data')), pieces: 2, split: [40] },
  'multipart-unclosed': { ...koaBodyForm, body: '--X\r\n' + file('f', 'a.txt', 'no closing delimiter') },
  'multipart-no-boundary': { ...koaBodyForm, formType: 'multipart/form-data', body: form(field('a', '1')) },
  'multipart-nameless': { ...koaBodyForm, body: form(field('', 'x')) },
  'multipart-gzip': { ...koaBodyForm, contentEncoding: 'gzip', compress: 'gzip', body: form(field('a', '1'), file('f', 'z.txt', 'zipped')) },
  'multipart-gzip-cut': { ...koaBodyForm, contentEncoding: 'gzip', compress: 'gzip', cut: 30, body: form(file('f', 'z.txt', 'zipped'.repeat(10))) },
  'multipart-json-body': { ...koaBodyForm, formType: 'application/json', body: '{"a":1}' },
  'multipart-on-part-handle': { ...koaBodyForm, onPart: 'handle', hashAlgorithm: true, body: form(field('a', '1'), file('f', 'a.txt', 'data')) },
  'multipart-on-part-drop-files': { ...koaBodyForm, onPart: 'drop-files', body: form(field('a', '1'), file('f', 'a.txt', 'x'.repeat(70))), pieces: 3, split: [50, 100] },
  'multipart-on-part-reject': { ...koaBodyForm, onPart: 'reject', body: form(file('f', 'a.txt', 'data'), field('a', '1')) },
  'multipart-filter-throw': { ...koaBodyForm, filter: 'throw', body: form(file('f', 'a.txt', 'data')) },
  'multipart-filename-escape': { ...koaBodyForm, filename: 'escape', removeFilesAfterResponse: true, body: form(file('f', 'a.txt', 'data')) },
  'multipart-total-file-size': { ...koaBodyForm, maxTotalFileSize: 4, body: form(file('f', 'a.txt', 'abc'), file('g', 'b.txt', 'def')), pieces: 2, split: [90] },
  'multipart-fields-size': { ...koaBodyForm, maxFieldsSize: 2, body: form(field('a', '12'), field('b', '3')) },
  'multipart-koa2-chunked': { ...koaBodyForm, major: 2, framing: 'chunked', body: form(file('f', 'c.txt', 'chunked')), pieces: 3, split: [10, 50] }
}
