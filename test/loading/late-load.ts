// Child process of test/loading/late-load.test.ts: creates what one entry's paths use, then (mode `faulty`) makes every module
// load that is not cached fail as an exhausted descriptor table makes it fail, sends each path's request over HTTP, and prints
// each answer with the modules requested after creation.
// Usage: node --import tsx test/loading/late-load.ts <index.ts|legacy.ts|multer.ts|koa.ts|nest.ts|hono.ts|web.ts> <plain|faulty>
// The entry and the frameworks are required inside the builder of that entry, so that the process holds only what it tests.
/* eslint-disable @typescript-eslint/no-require-imports */
import { once } from 'node:events'
import fs from 'node:fs'
import http from 'node:http'
import Module from 'node:module'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import type { ArgumentsHost } from '@nestjs/common'
import type { Context as HonoContext } from 'hono'
import type Koa from 'koa'

const src = path.join(__dirname, '..', '..', 'src')

// ---------------------------------------------------------------------------
// The process: what reaches it uncaught, and every module load.
// ---------------------------------------------------------------------------

/** Where the fixture stands: which path is being sent, whether creation is over, whether loads fail. */
const watch = { current: '(creation)', recording: false, faulty: false }

const uncaught: string[] = []
const recordUncaught = (err: unknown): void => {
  uncaught.push(`${watch.current}: ` + String((err as Error)?.stack ?? err).split('\n').slice(0, 4).join(' | '))
}
process.on('uncaughtException', recordUncaught)
process.on('unhandledRejection', recordUncaught)

interface ModuleInternals {
  _load: (request: string, parent: NodeModule | null | undefined, isMain: boolean) => unknown
  _resolveFilename: (request: string, parent: NodeModule | null | undefined, isMain?: boolean) => string
}
const internals = Module as unknown as ModuleInternals
const loadModule = internals._load

/** Each module load requested once creation was over, with the path being sent when it was. */
const loads: Array<{ path: string, module: string }> = []
const builtinsAfterCreation = new Set<string>()

/** The error Node's fs gives an `open` when the process is out of descriptors (what a require() meets then). */
function tooManyOpenFiles (filename: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`EMFILE: too many open files, open '${filename}'`), { code: 'EMFILE', errno: -24, syscall: 'open', path: filename })
}

// A built-in is recorded the first time code other than this fixture asks for it after creation (a built-in cannot fail
// to load, but a request's path should not ask for one); any other module, when it is not in require.cache.
internals._load = function load (this: unknown, request, parent, isMain) {
  if (!watch.recording) return loadModule.call(this, request, parent, isMain)
  if (Module.isBuiltin(request)) {
    const name = request.startsWith('node:') ? request.slice(5) : request
    if (parent?.filename !== __filename && !builtinsAfterCreation.has(name)) {
      builtinsAfterCreation.add(name)
      loads.push({ path: watch.current, module: request })
    }
    return loadModule.call(this, request, parent, isMain)
  }
  let filename: string
  try {
    filename = internals._resolveFilename(request, parent, isMain)
  } catch {
    // A module that cannot be found fails as it would have without the fixture.
    return loadModule.call(this, request, parent, isMain)
  }
  if (require.cache[filename] === undefined) {
    loads.push({ path: watch.current, module: filename })
    if (watch.faulty) throw tooManyOpenFiles(filename)
  }
  return loadModule.call(this, request, parent, isMain)
}

// ---------------------------------------------------------------------------
// Answers: what the apps send, and what the fixture reports of them.
// ---------------------------------------------------------------------------

/** What an error handler reads of an error. */
interface ErrorLike {
  status?: unknown
  statusCode?: unknown
  type?: unknown
  code?: unknown
  name?: unknown
  message?: unknown
  getStatus?: () => number
}

/** The status an app answers an error with: its `status` or `statusCode`, else 500. */
function statusOf (err: unknown): number {
  const e = (err ?? {}) as ErrorLike
  if (typeof e.getStatus === 'function') return e.getStatus()
  if (typeof e.status === 'number') return e.status
  return typeof e.statusCode === 'number' ? e.statusCode : 500
}

/** The JSON body an app answers an error with. */
function errorBody (err: unknown): Record<string, unknown> {
  const e = (err ?? {}) as ErrorLike
  return { type: e.type ?? null, code: e.code ?? null, name: e.name ?? null, message: e.message ?? String(err) }
}

/** Keys whose values change from run to run (places, random names, times): left out of a summary. */
const VARYING_KEYS = new Set(['path', 'destination', 'filename', 'fileName', 'filepath', 'newFilename', 'lastModifiedDate', 'mtime', 'stream'])

/** A body or files as JSON that two runs can compare: bytes as their count, places and times left out. */
function summarize (value: unknown): unknown {
  if (value === undefined) return { undefined: true }
  return JSON.parse(JSON.stringify(value, function replace (this: Record<string, unknown>, key, item: unknown) {
    const raw = this[key]
    if (raw instanceof Uint8Array) return { bytes: raw.length }
    return VARYING_KEYS.has(key) ? undefined : item
  }) ?? 'null')
}

/** What a path got: the status, the refusal's bodykit `type` or multer `code` (null for none), and the JSON answered. */
interface Answer {
  status: number
  type: string | null
  body: unknown
}

/** The answer reported for a request that got none (status 0): what went wrong instead. */
function noAnswer (why: string): Answer {
  return { status: 0, type: null, body: { noAnswer: why } }
}

/** How long a request may go unanswered before the fixture reports it and goes on: one hang must not hide the other paths. */
const UNANSWERED_MS = 20_000

/** The promise's value, or `fallback` once UNANSWERED_MS have passed (the timer is cleared either way). */
async function guarded<T> (promise: Promise<T>, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<T>((resolve) => { timer = setTimeout(resolve, UNANSWERED_MS, fallback) })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}

/** Reads a whole response into an {@link Answer}. */
async function readAnswer (res: http.IncomingMessage): Promise<Answer> {
  const chunks: Buffer[] = []
  for await (const chunk of res) chunks.push(chunk as Buffer)
  const text = Buffer.concat(chunks).toString('utf8')
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    body = { text }
  }
  const fields = (body ?? {}) as { type?: unknown, code?: unknown }
  const type = typeof fields.type === 'string' ? fields.type : typeof fields.code === 'string' ? fields.code : null
  return { status: res.statusCode ?? 0, type, body }
}

/** A request to send: one Buffer goes with its Content-Length, a list of Buffers goes chunked, one write each. */
interface RequestSpec {
  path: string
  method?: string
  headers?: Record<string, string | number>
  body?: Buffer | readonly Buffer[]
}

/** Sends one request on a connection of its own and reads the whole answer; resolves once the connection has closed. */
function send (port: number, spec: RequestSpec, agent: http.Agent | false = false): Promise<Answer> {
  const answered = new Promise<Answer>((resolve) => {
    const headers: Record<string, string | number> = { ...spec.headers }
    if (Buffer.isBuffer(spec.body) && headers['content-length'] === undefined) headers['content-length'] = spec.body.length
    const req = http.request({ host: '127.0.0.1', port, method: spec.method ?? 'POST', path: spec.path, agent, headers })
    let answer: Answer | undefined
    req.on('response', (res) => { readAnswer(res).then((read) => { answer = read; if (agent !== false) resolve(read) }, () => {}) })
    // An error after the answer (the server closed a connection the client still wrote on) changes nothing the path reports.
    req.on('error', (err: NodeJS.ErrnoException) => { if (answer === undefined) resolve(noAnswer(err.code ?? err.message)) })
    req.on('close', () => { resolve(answer ?? noAnswer('closed before an answer')) })
    if (Array.isArray(spec.body)) for (const chunk of spec.body) req.write(chunk)
    req.end(Buffer.isBuffer(spec.body) ? spec.body : undefined)
  })
  return guarded(answered, noAnswer(`none within ${UNANSWERED_MS} ms`))
}

/** Writes a chunk, waiting for 'drain' when the request holds too much; false once the request can take no more. */
async function writeChunk (req: http.ClientRequest, chunk: Buffer): Promise<boolean> {
  if (req.destroyed) return false
  if (req.write(chunk)) return true
  await Promise.race([once(req, 'drain'), once(req, 'close')])
  return !req.destroyed
}

/**
 * The read-off: a chunked body refused at its first piece, whose client reads the answer and sends `pieces` more on a
 * kept-alive connection. The next request on that connection is answered only once the rest was read off (or the
 * connection given up), so the path is over when it is.
 */
async function sendWhileRefused (port: number, spec: RequestSpec & { piece: Buffer, pieces: number }): Promise<Answer> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  try {
    const refused = new Promise<Answer>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: spec.path, agent, headers: spec.headers })
      req.on('error', (err: NodeJS.ErrnoException) => { resolve(noAnswer(err.code ?? err.message)) })
      req.on('response', (res) => {
        readAnswer(res).then(async (answer) => {
          for (let sent = 0; sent < spec.pieces && await writeChunk(req, spec.piece); sent++);
          req.end()
          resolve(answer)
        }, () => {})
      })
      req.write(spec.piece)
    })
    const answer = await guarded(refused, noAnswer(`none within ${UNANSWERED_MS} ms`))
    await send(port, { path: '/ping', method: 'GET' }, agent)
    return answer
  } finally {
    agent.destroy()
  }
}

/**
 * The connection watch: a route whose first middleware answers 503 with `Connection: close` while the parser after it
 * reads. The client sends a first piece of a chunked body, reads the 503 and destroys its socket; `settled` is what the
 * server's chain ended with (the parser's error, or `read`), reported beside the 503.
 */
async function sendAnsweredFirst (port: number, spec: RequestSpec & { piece: Buffer }, settled: () => Promise<string>): Promise<Answer> {
  const answered = new Promise<Answer>((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: spec.path, agent: false, headers: spec.headers })
    req.on('error', (err: NodeJS.ErrnoException) => { resolve(noAnswer(err.code ?? err.message)) })
    req.on('response', (res) => {
      readAnswer(res).then((answer) => {
        req.destroy()
        resolve(answer)
      }, () => {})
    })
    req.write(spec.piece)
  })
  const answer = await guarded(answered, noAnswer(`none within ${UNANSWERED_MS} ms`))
  const after = await guarded(settled(), `the parser did not finish within ${UNANSWERED_MS} ms`)
  return { ...answer, body: { ...answer.body as object, after } }
}

// ---------------------------------------------------------------------------
// Paths and bodies.
// ---------------------------------------------------------------------------

/** What plain mode answers a path (a check that the path reaches what it is meant to). */
interface Expected {
  status: number
  type?: string | null
}

/** One request of an entry, and what it is. */
interface PathCase {
  name: string
  /** A valid body: never refused (4xx) in faulty mode. */
  valid: boolean
  /** A charset path: its charset's code tables may load on it (iconv-lite's one exception), and faulty mode may answer 500 `charset.load.failed`. */
  charset: boolean
  expected?: Expected
  send: (port: number) => Promise<Answer>
}

type PathFlags = Partial<Pick<PathCase, 'valid' | 'charset' | 'expected'>>

/** A path of one ordinary request; its name goes along as `x-path`, for the server's record. */
function request (name: string, spec: RequestSpec, flags: PathFlags = {}): PathCase {
  const valid = flags.valid ?? (flags.expected === undefined || flags.expected.status < 300)
  return { name, valid, charset: flags.charset ?? false, expected: flags.expected, send: (port) => send(port, { ...spec, headers: { 'x-path': name, ...spec.headers } }) }
}

const OK: Expected = { status: 200 }
const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const BOUNDARY = 'late-load-boundary'
const MULTIPART_TYPE = `multipart/form-data; boundary=${BOUNDARY}`
/** The limit of the routes that refuse bodies over it. */
const LIMIT = 1024
const VALID_JSON = Buffer.from('{"a":[1,2],"s":"x"}')
const MALFORMED_JSON = Buffer.from('{"a":')
const OVER_LIMIT_JSON = Buffer.from(JSON.stringify({ pad: 'x'.repeat(2 * LIMIT) }))
const FILE_256_KIB = Buffer.alloc(256 * 1024, 'late-load ')
// 日本語のテキスト in Shift_JIS, written out: encoding it here with iconv-lite would load the very table the path is to load.
const SHIFT_JIS_TEXT = Buffer.from('93fa967b8cea82cc8365834c83588367', 'hex')
const READ_OFF_PIECE = Buffer.alloc(64 * 1024, 0x20)

type FormPart = { name: string, value: string } | { name: string, filename: string, data: Buffer }

/** A multipart/form-data body with BOUNDARY; `closed: false` leaves out the closing delimiter (a body cut short). */
function encodeForm (parts: readonly FormPart[], closed = true): Buffer {
  const pieces: Buffer[] = []
  for (const part of parts) {
    const disposition = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"`
    if ('filename' in part) pieces.push(Buffer.from(`${disposition}; filename="${part.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`), part.data)
    else pieces.push(Buffer.from(`${disposition}\r\n\r\n${part.value}`))
    pieces.push(Buffer.from('\r\n'))
  }
  if (closed) pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(pieces)
}

const FIELDS_AND_FILE: readonly FormPart[] = [{ name: 'title', value: 'holiday' }, { name: 'a[b]', value: '1' }, { name: 'f', filename: 'f.txt', data: Buffer.from('hello') }]
const NESTED_FIELDS: readonly FormPart[] = [{ name: 'a[b][c]', value: '1' }, { name: 'list[]', value: 'x' }, { name: 'list[]', value: 'y' }]
const LARGE_FILE: readonly FormPart[] = [{ name: 'title', value: 'large' }, { name: 'f', filename: 'large.bin', data: FILE_256_KIB }]
const TWO_FILES: readonly FormPart[] = [{ name: 'f', filename: 'one.txt', data: Buffer.from('one') }, { name: 'g', filename: 'two.txt', data: Buffer.from('two') }]

const multipartRequest = (route: string, parts: readonly FormPart[], closed = true): RequestSpec => ({ path: route, headers: { 'content-type': MULTIPART_TYPE }, body: encodeForm(parts, closed) })

/** The first bytes of a file part, for a body that is still arriving when its answer is sent. */
const FILE_PART_START = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\nsome bytes`)

// ---------------------------------------------------------------------------
// node:http apps: connect-style chains, as Express runs them.
// ---------------------------------------------------------------------------

type Next = (err?: unknown) => void
type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: Next) => void
type Factory = (options?: Record<string, unknown>) => Middleware

/** What an entry's builder hands the run: its server's port, its paths, the requests that finish creation, and how to stop. */
interface Built {
  port: number
  paths: PathCase[]
  /** Requests sent before creation is over: the readers' first (bodiless) calls. */
  prepare?: (port: number) => Promise<void>
  close: () => Promise<void>
}

/** A node:http server running one chain per route (none for /ping), answering errors with `{ type, code, message }`. */
interface ChainServer {
  server: http.Server
  /** What the chain of the request sent as path `name` ended with: the error's type or code, or `read`. */
  settled: (name: string) => Promise<string>
}

function createChainServer (routes: Readonly<Record<string, readonly Middleware[]>>): ChainServer {
  const outcomes = new Map<string, string>()
  const waiters = new Map<string, (outcome: string) => void>()
  const server = http.createServer((req, res) => {
    const chain = routes[(req.url ?? '/').split('?')[0]] ?? []
    let index = 0
    let finished = false
    const finish = (err?: unknown): void => {
      if (finished) return
      finished = true
      const name = String(req.headers['x-path'] ?? '')
      const e = (err ?? {}) as ErrorLike
      const outcome = err == null ? 'read' : String(e.type ?? e.code ?? e.message)
      outcomes.set(name, outcome)
      waiters.get(name)?.(outcome)
      if (res.headersSent) return
      const r = req as { body?: unknown, files?: unknown, file?: unknown }
      answerJson(res, err == null ? 200 : statusOf(err), err == null ? { body: summarize(r.body), files: summarize(r.files ?? r.file) } : errorBody(err))
    }
    const step: Next = (err) => {
      const middleware = chain[index++]
      if (err != null || middleware === undefined) return finish(err)
      try {
        middleware(req, res, step)
      } catch (thrown) {
        finish(thrown)
      }
    }
    step()
  })
  return {
    server,
    settled: (name) => outcomes.has(name) ? Promise.resolve(outcomes.get(name) as string) : new Promise((resolve) => waiters.set(name, resolve))
  }
}

function answerJson (res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
  res.end(text)
}

/** Answers 503 with `Connection: close` at once and lets the parser after it read on, as a timeout middleware does. */
const answerFirst: Middleware = function answerFirst (_req, res, next) {
  const text = JSON.stringify({ type: null, code: null, message: 'answered first' })
  res.writeHead(503, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
  res.end(text)
  next()
}

/** A reader as a middleware: what it resolves goes on `req.body`, what it rejects with to the error handler. */
function readerMiddleware (read: (req: http.IncomingMessage, res: http.ServerResponse) => Promise<unknown>): Middleware {
  return (req, res, next) => {
    read(req, res).then((body) => {
      (req as { body?: unknown }).body = body
      next()
    }, next)
  }
}

/** The Web `Request` of a node request: its body read whole, its Content-Type and Content-Encoding kept (none for a GET). */
async function toWebRequest (req: http.IncomingMessage): Promise<Request> {
  const chunks: Buffer[] = []
  for await (const chunk of req) chunks.push(chunk as Buffer)
  const headers: Record<string, string> = {}
  for (const name of ['content-type', 'content-encoding']) if (typeof req.headers[name] === 'string') headers[name] = req.headers[name]
  const bodyless = req.method === 'GET' || req.method === 'HEAD'
  return new Request(`http://127.0.0.1${req.url ?? '/'}`, { method: req.method, headers, body: bodyless ? undefined : Buffer.concat(chunks) })
}

async function listen (server: http.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return (server.address() as AddressInfo).port
}

async function closeServer (server: http.Server): Promise<void> {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
}

/** The paths of the body-parser factories, which `index.ts` and `legacy.ts` share, and their routes. */
function parserRoutes (kit: Record<'json' | 'text' | 'urlencoded' | 'raw' | 'multipart', Factory>, uploads: string): Record<string, Middleware[]> {
  const json = kit.json({ limit: LIMIT })
  const disk = kit.multipart({ files: { storage: 'disk', directory: uploads } })
  return {
    '/json': [json],
    '/json-guarded': [kit.json({ onProtoPoisoning: 'error' })],
    '/text': [kit.text()],
    '/form-extended': [kit.urlencoded({ extended: true })],
    '/form-simple': [kit.urlencoded({ extended: false })],
    '/raw': [kit.raw()],
    '/multipart': [kit.multipart({ files: true })],
    '/multipart-extended': [kit.multipart({ extended: true })],
    '/multipart-disk': [disk],
    '/multipart-limited': [kit.multipart({ files: { fileLimit: 1 } })],
    '/answered-first-json': [answerFirst, json],
    '/answered-first-disk': [answerFirst, disk]
  }
}

function parserPaths (settled: ChainServer['settled']): PathCase[] {
  const jsonBody = (body: Buffer | readonly Buffer[], headers: Record<string, string | number> = {}): RequestSpec => ({ path: '/json', headers: { 'content-type': JSON_TYPE, ...headers }, body })
  const text = (charset: string, body: Buffer): RequestSpec => ({ path: '/text', headers: { 'content-type': `text/plain; charset=${charset}` }, body })
  const form = (route: string, body: string): RequestSpec => ({ path: route, headers: { 'content-type': FORM_TYPE }, body: Buffer.from(body) })
  return [
    request('json, valid', jsonBody(VALID_JSON), { expected: OK }),
    request('json, malformed', jsonBody(MALFORMED_JSON), { expected: { status: 400, type: 'entity.parse.failed' } }),
    request('json, over the limit by Content-Length', jsonBody(OVER_LIMIT_JSON), { expected: { status: 413, type: 'entity.too.large' } }),
    request('json, over the limit chunked', jsonBody([OVER_LIMIT_JSON.subarray(0, 100), OVER_LIMIT_JSON.subarray(100)]), { expected: { status: 413, type: 'entity.too.large' } }),
    request('json, gzip', jsonBody(zlib.gzipSync(VALID_JSON), { 'content-encoding': 'gzip' }), { expected: OK }),
    request('json onProtoPoisoning error, __proto__ in a string', { path: '/json-guarded', headers: { 'content-type': JSON_TYPE }, body: Buffer.from('{"note":"__proto__ is only text here"}') }, { expected: OK }),
    request('json onProtoPoisoning error, a __proto__ key', { path: '/json-guarded', headers: { 'content-type': JSON_TYPE }, body: Buffer.from('{"__proto__":{"polluted":true}}') }, { valid: false }),
    // The charset paths, in this order: the first loads iconv-lite's encodings index, the Shift_JIS one its DBCS table.
    request('json, utf-16le', jsonBody(Buffer.from('{"a":"é"}', 'utf16le'), { 'content-type': `${JSON_TYPE}; charset=utf-16le` }), { charset: true, expected: OK }),
    request('text, iso-8859-1', text('iso-8859-1', Buffer.from('café', 'latin1')), { charset: true, expected: OK }),
    request('text, shift_jis', text('shift_jis', SHIFT_JIS_TEXT), { charset: true, expected: OK }),
    request('text, a charset no one knows', text('x-late-load', Buffer.from('abc')), { charset: true, expected: { status: 415, type: 'charset.unsupported' } }),
    request('urlencoded extended, nested', form('/form-extended', 'a[b][c]=1&list[]=x&list[]=y'), { expected: OK }),
    request('urlencoded simple, brackets', form('/form-simple', 'a[b][c]=1&list[]=x&list[]=y'), { expected: OK }),
    request('raw', { path: '/raw', headers: { 'content-type': 'application/octet-stream' }, body: Buffer.from([0, 1, 2, 255]) }, { expected: OK }),
    request('multipart, fields and a file in memory', multipartRequest('/multipart', FIELDS_AND_FILE), { expected: OK }),
    request('multipart extended, nested fields', multipartRequest('/multipart-extended', NESTED_FIELDS), { expected: OK }),
    request('multipart, a 256 KiB file to disk', multipartRequest('/multipart-disk', LARGE_FILE), { expected: OK }),
    request('multipart, more files than fileLimit', multipartRequest('/multipart-limited', TWO_FILES), { expected: { status: 413, type: 'multipart.files.too.many' } }),
    request('multipart, cut short', multipartRequest('/multipart', FIELDS_AND_FILE, false), { expected: { status: 400, type: 'multipart.unexpected.end' } }),
    readOffPath('json, refused while the client sends on (read-off)', '/json', JSON_TYPE),
    answeredFirstPath('json, answered first (connection watch)', '/answered-first-json', JSON_TYPE, Buffer.from('{"a":'), settled),
    answeredFirstPath('multipart to disk, answered first (connection watch)', '/answered-first-disk', MULTIPART_TYPE, FILE_PART_START, settled)
  ]
}

function readOffPath (name: string, route: string, contentType: string): PathCase {
  return {
    name,
    valid: false,
    charset: false,
    expected: { status: 413, type: 'entity.too.large' },
    send: (port) => sendWhileRefused(port, { path: route, headers: { 'content-type': contentType, 'x-path': name }, piece: READ_OFF_PIECE, pieces: 32 })
  }
}

function answeredFirstPath (name: string, route: string, contentType: string, piece: Buffer, settled: ChainServer['settled']): PathCase {
  return {
    name,
    valid: false,
    charset: false,
    expected: { status: 503, type: null },
    send: (port) => sendAnsweredFirst(port, { path: route, headers: { 'content-type': contentType, 'x-path': name }, piece }, () => settled(name))
  }
}

/** `index.ts`: the factories, and the promise readers on Node requests and on a Web `Request`. */
async function buildDefault (uploads: string): Promise<Built> {
  const kit = require(path.join(src, 'index.ts')) as Record<'json' | 'text' | 'urlencoded' | 'raw' | 'multipart', Factory> & typeof import('../../src/index')
  const readJsonOptions = { limit: LIMIT }
  const routes: Record<string, Middleware[]> = {
    ...parserRoutes(kit, uploads),
    '/read-json': [readerMiddleware((req) => kit.readJson(req, readJsonOptions))],
    // An options object with `res` is new on each request: each read validates it, as an app's would.
    '/read-multipart-disk': [readerMiddleware((req, res) => kit.readMultipart(req, { files: { storage: 'disk', directory: uploads }, res }))],
    '/read-json-web': [readerMiddleware(async (req) => kit.readJson(await toWebRequest(req)))]
  }
  const { server, settled } = createChainServer(routes)
  const jsonRequest = (route: string, body: Buffer): RequestSpec => ({ path: route, headers: { 'content-type': JSON_TYPE }, body })
  return {
    port: await listen(server),
    paths: [
      ...parserPaths(settled),
      request('readJson, valid', jsonRequest('/read-json', VALID_JSON), { expected: OK }),
      request('readJson, malformed', jsonRequest('/read-json', MALFORMED_JSON), { expected: { status: 400, type: 'entity.parse.failed' } }),
      request('readMultipart, a 256 KiB file to disk', multipartRequest('/read-multipart-disk', LARGE_FILE), { expected: OK }),
      request('readJson, a Web Request', jsonRequest('/read-json-web', VALID_JSON), { expected: OK })
    ],
    prepare: (port) => primeReaders(port, ['/read-json', '/read-multipart-disk', '/read-json-web']),
    close: () => closeServer(server)
  }
}

/** A reader is created by its first call with its options: a GET, which has no body, through each reader's route. */
async function primeReaders (port: number, routes: readonly string[]): Promise<void> {
  for (const route of routes) {
    const answer = await send(port, { path: route, method: 'GET' })
    if (answer.status !== 200) throw new Error(`priming ${route} answered ${JSON.stringify(answer)}`)
  }
}

/** `legacy.ts`: the same factories with body-parser 1.x's behaviour. */
async function buildLegacy (uploads: string): Promise<Built> {
  const kit = require(path.join(src, 'legacy.ts')) as Record<'json' | 'text' | 'urlencoded' | 'raw' | 'multipart', Factory>
  const { server, settled } = createChainServer(parserRoutes(kit, uploads))
  return { port: await listen(server), paths: parserPaths(settled), close: () => closeServer(server) }
}

/** `multer.ts`: multer's API, memory, disk and `dest`, its limits and a storage that fails. */
async function buildMulter (uploads: string): Promise<Built> {
  const multer = require(path.join(src, 'multer.ts')) as typeof import('../../src/multer')
  const memory = multer({ storage: multer.memoryStorage() })
  const disk = multer({ storage: multer.diskStorage({ destination: uploads }) }).single('f') as unknown as Middleware
  const missingFolder = path.join(uploads, 'missing')
  const routes: Record<string, Middleware[]> = {
    '/memory': [memory.single('f') as unknown as Middleware],
    '/disk': [disk],
    '/dest': [multer({ dest: uploads }).single('f') as unknown as Middleware],
    '/limited': [multer({ limits: { fileSize: 200 } }).single('f') as unknown as Middleware],
    '/missing-folder': [multer({ storage: multer.diskStorage({ destination: (_req, _file, callback) => callback(null, missingFolder) }) }).single('f') as unknown as Middleware],
    '/none': [memory.none() as unknown as Middleware],
    '/answered-first-disk': [answerFirst, disk]
  }
  const { server, settled } = createChainServer(routes)
  const file = (name: string, data: Buffer): FormPart[] => [{ name: 'title', value: 'holiday' }, { name, filename: 'f.bin', data }]
  return {
    port: await listen(server),
    paths: [
      request('memoryStorage, single', multipartRequest('/memory', file('f', Buffer.from('hello'))), { expected: OK }),
      request('diskStorage, a 256 KiB file', multipartRequest('/disk', LARGE_FILE), { expected: OK }),
      request('dest, a 256 KiB file', multipartRequest('/dest', LARGE_FILE), { expected: OK }),
      request('limits.fileSize, a file over it', multipartRequest('/limited', file('f', Buffer.alloc(1024, 'x'))), { expected: { status: 413, type: 'LIMIT_FILE_SIZE' } }),
      request('single, a file in another field', multipartRequest('/memory', file('g', Buffer.from('hello'))), { expected: { status: 400, type: 'LIMIT_UNEXPECTED_FILE' } }),
      request('diskStorage, a destination that does not exist', multipartRequest('/missing-folder', file('f', Buffer.from('hello'))), { expected: { status: 500, type: 'ENOENT' } }),
      request('none, fields', multipartRequest('/none', NESTED_FIELDS), { expected: OK }),
      request('memoryStorage, cut short', multipartRequest('/memory', file('f', Buffer.from('hello')), false), { expected: { status: 400 } }),
      answeredFirstPath('diskStorage, answered first (connection watch)', '/answered-first-disk', MULTIPART_TYPE, FILE_PART_START, settled)
    ],
    close: () => closeServer(server)
  }
}

/** `web.ts`: the Web build's readers, each given the Web `Request` of the node request. */
async function buildWeb (): Promise<Built> {
  const web = require(path.join(src, 'web.ts')) as typeof import('../../src/web')
  const jsonOptions = { limit: LIMIT }
  const formOptions = { extended: true }
  const multipartOptions = { files: true }
  const readWeb = (read: (request: Request) => Promise<unknown>): Middleware[] => [readerMiddleware(async (req) => read(await toWebRequest(req)))]
  const routes: Record<string, Middleware[]> = {
    '/json': readWeb((request) => web.readJson(request, jsonOptions)),
    '/form': readWeb((request) => web.readUrlencoded(request, formOptions)),
    '/form-simple': readWeb((request) => web.readUrlencoded(request)),
    '/multipart': readWeb((request) => web.readMultipart(request, multipartOptions))
  }
  const { server } = createChainServer(routes)
  const form = (route: string): RequestSpec => ({ path: route, headers: { 'content-type': FORM_TYPE }, body: Buffer.from('a[b][c]=1&list[]=x&list[]=y') })
  return {
    port: await listen(server),
    paths: [
      request('readJson, valid', { path: '/json', headers: { 'content-type': JSON_TYPE }, body: VALID_JSON }, { expected: OK }),
      request('readJson, malformed', { path: '/json', headers: { 'content-type': JSON_TYPE }, body: MALFORMED_JSON }, { expected: { status: 400, type: 'entity.parse.failed' } }),
      request('readJson, over the limit', { path: '/json', headers: { 'content-type': JSON_TYPE }, body: OVER_LIMIT_JSON }, { expected: { status: 413, type: 'entity.too.large' } }),
      request('readUrlencoded extended, nested', form('/form'), { expected: OK }),
      request('readUrlencoded simple, brackets', form('/form-simple'), { expected: OK }),
      request('readMultipart, fields and a file', multipartRequest('/multipart', FIELDS_AND_FILE), { expected: OK })
    ],
    prepare: (port) => primeReaders(port, Object.keys(routes)),
    close: () => closeServer(server)
  }
}

// ---------------------------------------------------------------------------
// Framework apps.
// ---------------------------------------------------------------------------

type KoaMiddleware = (ctx: Koa.Context, next: () => Promise<unknown>) => Promise<unknown>

/** `koa.ts`: a Koa app with bodyParser() (koa-bodyparser 4's), the named bodyParser (@koa/bodyparser 6's) and koaBody(). */
async function buildKoa (uploads: string): Promise<Built> {
  const KoaApp = require('koa') as typeof Koa
  const kit = require(path.join(src, 'koa.ts')) as typeof import('../../src/koa')
  const routes: Record<string, KoaMiddleware> = {
    '/bodyparser': kit({ enableTypes: ['json', 'form', 'text'], jsonLimit: LIMIT }) as unknown as KoaMiddleware,
    '/named': kit.bodyParser() as unknown as KoaMiddleware,
    '/koabody': kit.koaBody({ multipart: true, jsonLimit: LIMIT, formidable: { uploadDir: uploads } }) as unknown as KoaMiddleware
  }
  const app = new KoaApp()
  app.silent = true
  app.use(async (ctx, next) => {
    try {
      await next()
    } catch (err) {
      ctx.status = statusOf(err)
      ctx.body = errorBody(err)
    }
  })
  app.use(async (ctx) => {
    const route = routes[ctx.path]
    if (route === undefined) {
      ctx.body = { pong: true }
      return
    }
    await route(ctx, async () => {
      const request = ctx.request as Koa.Request & { body?: unknown, files?: unknown }
      ctx.body = { body: summarize(request.body), files: summarize(request.files) }
    })
  })
  const server = http.createServer(app.callback())
  const json = (route: string, body: Buffer | readonly Buffer[]): RequestSpec => ({ path: route, headers: { 'content-type': JSON_TYPE }, body })
  return {
    port: await listen(server),
    paths: [
      request('bodyParser(), json', json('/bodyparser', VALID_JSON), { expected: OK }),
      request('bodyParser(), a form with brackets', { path: '/bodyparser', headers: { 'content-type': FORM_TYPE }, body: Buffer.from('a[b][c]=1&list[]=x&list[]=y') }, { expected: OK }),
      request('bodyParser(), text', { path: '/bodyparser', headers: { 'content-type': 'text/plain' }, body: Buffer.from('some text') }, { expected: OK }),
      request('bodyParser(), malformed json', json('/bodyparser', MALFORMED_JSON), { expected: { status: 400, type: 'entity.parse.failed' } }),
      request('bodyParser(), json over jsonLimit', json('/bodyparser', OVER_LIMIT_JSON), { expected: { status: 413, type: 'entity.too.large' } }),
      request('named bodyParser(), json', json('/named', VALID_JSON), { expected: OK }),
      request('koaBody(), json', json('/koabody', VALID_JSON), { expected: OK }),
      request('koaBody(), malformed json', json('/koabody', MALFORMED_JSON), { expected: { status: 400, type: 'entity.parse.failed' } }),
      request('koaBody(), json over jsonLimit chunked', json('/koabody', [OVER_LIMIT_JSON.subarray(0, 100), OVER_LIMIT_JSON.subarray(100)]), { expected: { status: 413, type: 'entity.too.large' } }),
      request('koaBody({ multipart: true }), fields and a file', multipartRequest('/koabody', FIELDS_AND_FILE), { expected: OK })
    ],
    close: () => closeServer(server)
  }
}

/** `nest.ts`: a Nest 11 app on Express with bodykit/nest's FileInterceptor, in memory and on disk, and an exception filter. */
async function buildNest (uploads: string): Promise<Built> {
  const common = require('@nestjs/common') as typeof import('@nestjs/common')
  const { NestFactory } = require('@nestjs/core') as typeof import('@nestjs/core')
  const nest = require(path.join(src, 'nest.ts')) as typeof import('../../src/nest')
  const { defineController, defineModule } = require('../nest/upload-apps') as typeof import('../nest/upload-apps')
  const describeUpload = (body: unknown, file: unknown): unknown => ({ body: summarize(body), files: summarize(file) })
  const upload = (route: string, interceptor: ReturnType<typeof nest.FileInterceptor>): Parameters<typeof defineController>[1][number] =>
    ({ path: route, interceptors: [interceptor], params: [common.Body(), common.UploadedFile()], handle: describeUpload })
  const controller = defineController('', [
    upload('upload', nest.FileInterceptor('f')),
    upload('upload-limited', nest.FileInterceptor('f', { limits: { fileSize: 200 } })),
    upload('upload-disk', nest.FileInterceptor('f', { dest: uploads })),
    { path: 'ping', interceptors: [], params: [], handle: () => ({ pong: true }) }
  ])
  class AnswerErrors {
    catch (exception: unknown, host: ArgumentsHost): void {
      answerJson(host.switchToHttp().getResponse<http.ServerResponse>(), statusOf(exception), errorBody(exception))
    }
  }
  common.Catch()(AnswerErrors)
  const app = await NestFactory.create(defineModule({ controllers: [controller] }), { logger: false, bodyParser: false, abortOnError: false })
  app.useGlobalFilters(new AnswerErrors())
  await app.listen(0, '127.0.0.1')
  const file = (route: string, data: Buffer): RequestSpec => multipartRequest(route, [{ name: 'title', value: 'holiday' }, { name: 'f', filename: 'f.bin', data }])
  return {
    port: ((app.getHttpServer() as http.Server).address() as AddressInfo).port,
    paths: [
      request('FileInterceptor, a file in memory', file('/upload', Buffer.from('hello')), { expected: { status: 201 } }),
      request('FileInterceptor, a 256 KiB file to disk', file('/upload-disk', FILE_256_KIB), { expected: { status: 201 } }),
      request('FileInterceptor, a file over limits.fileSize', file('/upload-limited', Buffer.alloc(1024, 'x')), { expected: { status: 413 } })
    ],
    close: () => app.close()
  }
}

/** `hono.ts`: a Hono app over @hono/node-server with bodykit/hono's json, urlencoded and multipart middlewares. */
async function buildHono (): Promise<Built> {
  const { Hono } = require('hono') as typeof import('hono')
  const { HTTPException } = require('hono/http-exception') as typeof import('hono/http-exception')
  const { createAdaptorServer } = require('@hono/node-server') as typeof import('@hono/node-server')
  const kit = require(path.join(src, 'hono.ts')) as typeof import('../../src/hono')
  const app = new Hono()
    .post('/json', kit.json({ limit: LIMIT }), (c) => c.json({ body: summarize(c.req.valid('json')) }))
    .post('/form', kit.urlencoded(), (c) => c.json({ body: summarize(c.req.valid('form')) }))
    .post('/multipart', kit.multipart({ files: true }), (c) => c.json({ body: summarize(c.req.valid('form')), files: summarize(c.var.files) }))
    .all('/ping', (c) => c.json({ pong: true }))
  app.onError((err, c: HonoContext) => {
    const status = err instanceof HTTPException ? err.status : 500
    return c.json(errorBody(err.cause ?? err), status)
  })
  const server = createAdaptorServer({ fetch: app.fetch }) as http.Server
  const json = (body: Buffer): RequestSpec => ({ path: '/json', headers: { 'content-type': JSON_TYPE }, body })
  return {
    port: await listen(server),
    paths: [
      request('json(), valid', json(VALID_JSON), { expected: OK }),
      request('json(), malformed', json(MALFORMED_JSON), { expected: { status: 400, type: 'entity.parse.failed' } }),
      request('json(), over the limit', json(OVER_LIMIT_JSON), { expected: { status: 413, type: 'entity.too.large' } }),
      request('urlencoded(), brackets', { path: '/form', headers: { 'content-type': FORM_TYPE }, body: Buffer.from('a[b][c]=1&list[]=x&list[]=y') }, { expected: OK }),
      request('multipart(), fields and a file', multipartRequest('/multipart', FIELDS_AND_FILE), { expected: OK })
    ],
    close: () => closeServer(server)
  }
}

const BUILDERS: Record<string, (uploads: string) => Promise<Built>> = {
  'index.ts': buildDefault,
  'legacy.ts': buildLegacy,
  'multer.ts': buildMulter,
  'koa.ts': buildKoa,
  'nest.ts': buildNest,
  'hono.ts': buildHono,
  'web.ts': buildWeb
}

// ---------------------------------------------------------------------------
// The run.
// ---------------------------------------------------------------------------

/** One path's answer as the parent reads it. */
interface PathAnswer extends Answer {
  name: string
  valid: boolean
  charset: boolean
  expected?: Expected
  /** For a charset path sent again without the fault: the path it repeats. */
  retryOf?: string
}

function isCharsetLoadFailure (answer: Answer): boolean {
  return answer.status === 500 && answer.type === 'charset.load.failed'
}

async function main (): Promise<void> {
  const [entry, mode] = process.argv.slice(2)
  const build = BUILDERS[entry]
  if (build === undefined || (mode !== 'plain' && mode !== 'faulty')) throw new Error(`usage: late-load.ts <${Object.keys(BUILDERS).join('|')}> <plain|faulty>`)
  const uploads = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-late-load-'))
  const built = await build(uploads)
  // The framework's own first requests (no bodykit middleware on /ping), then the readers' first calls: creation ends here.
  await send(built.port, { path: '/ping', method: 'GET' })
  await send(built.port, { path: '/ping', headers: { 'content-type': JSON_TYPE }, body: VALID_JSON })
  await built.prepare?.(built.port)

  watch.recording = true
  watch.faulty = mode === 'faulty'
  const answers: PathAnswer[] = []
  for (const { send: sendPath, ...flags } of built.paths) {
    watch.current = flags.name
    const answer = await sendPath(built.port)
    answers.push({ ...flags, ...answer })
    if (watch.faulty && flags.charset && isCharsetLoadFailure(answer)) {
      // The tables could not load: once they can, the same request must succeed.
      const name = `${flags.name} (retry)`
      watch.current = name
      watch.faulty = false
      answers.push({ ...flags, ...await sendPath(built.port), name, retryOf: flags.name })
      watch.faulty = true
    }
  }
  // Late work of the last path (a file removed once its response finished) still counts as that path's.
  await new Promise((resolve) => setTimeout(resolve, 50))
  watch.faulty = false
  watch.recording = false

  await built.close()
  fs.rmSync(uploads, { recursive: true, force: true })
  const loadsByPath: Record<string, string[]> = {}
  for (const load of loads) (loadsByPath[load.path] ??= []).push(load.module)
  const result = { entry, mode, paths: answers, uncaught, loadedAfterCreation: loads.map((load) => load.module), loadsByPath }
  // Exit once printed: a read-off given up on, or a timer of a framework, must not hold the parent's wait.
  process.stdout.write(JSON.stringify(result), () => process.exit(0))
}

main().catch((err: unknown) => {
  process.stderr.write(String((err as Error)?.stack ?? err) + '\n')
  process.exit(1)
})
