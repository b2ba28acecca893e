// The request-likes users' tests feed to body parsers (streams with headers, bare IncomingMessages, node-mocks-http,
// light-my-request, serverless-http, @codegenie/serverless-express), the bodies sent through them, and one run of a
// middleware on one of them, recorded the way test/differential/harness.ts records a request over a socket.
import http from 'node:http'
import { createRequire } from 'node:module'
import net from 'node:net'
import { PassThrough, Readable } from 'node:stream'
import zlib from 'node:zlib'
import { describeError, serialise } from '../differential/harness'

const load = createRequire(__filename)

// ---------------------------------------------------------------------------
// Libraries: the replaced release (reference) and bodykit's entry (candidate).
// ---------------------------------------------------------------------------
export type Library = 'default' | 'legacy' | 'multer'
export type Role = 'reference' | 'candidate'
export const LIBRARIES: readonly Library[] = ['default', 'legacy', 'multer']

const MODULES: Record<Library, Record<Role, string>> = {
  default: { reference: 'body-parser', candidate: '../../src/index' },
  legacy: { reference: 'body-parser-1', candidate: '../../src/legacy' },
  multer: { reference: 'multer', candidate: '../../src/multer' }
}

/** Express 5 serves the default entry and multer, Express 4 the legacy entry (what each release is used with). */
const EXPRESS: Record<Library, string> = { default: 'express', legacy: 'express-4', multer: 'express' }

type Next = (err?: unknown) => void
export type Middleware = (req: unknown, res: unknown, next: Next) => void
type AnyModule = Record<string, (...args: unknown[]) => unknown> & ((...args: unknown[]) => unknown)

function loadModule (library: Library, role: Role): AnyModule {
  const mod = load(MODULES[library][role]) as { default?: AnyModule, json?: unknown }
  const isEntry = library === 'multer' ? typeof mod === 'function' : typeof mod.json === 'function'
  return (isEntry ? mod : mod.default) as AnyModule
}

// ---------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------
/** How the body's length is declared: a numeric string, a number (where the kind keeps one), or chunked. */
export type HeaderVariant = 'length-string' | 'length-number' | 'chunked'
export const HEADER_VARIANTS: readonly HeaderVariant[] = ['length-string', 'length-number', 'chunked']

export interface BodyCase {
  library: Library
  name: string
  /** Build the middleware from the library's module (fresh per run). */
  build: (mod: AnyModule) => Middleware
  contentType?: string
  contentEncoding?: string
  body: Buffer
  /** Declared Content-Length relative to the body (wrong declared length cases). */
  lengthDelta?: number
  /** Header variants that make sense for this body (default: all three). */
  variants?: readonly HeaderVariant[]
}

const DECLARED: readonly HeaderVariant[] = ['length-string', 'length-number']
const gzip = (s: string | Buffer): Buffer => zlib.gzipSync(s)
const JSON_BODY = '{"a":1,"b":[true,null],"c":{"d":"é"}}'
const GZ_JSON = gzip(JSON_BODY)
const flipped = Buffer.from(GZ_JSON)
flipped[Math.floor(flipped.length / 2)] ^= 0xff

function parser (name: 'json' | 'raw' | 'text' | 'urlencoded', options?: Record<string, unknown>): (mod: AnyModule) => Middleware {
  return (mod) => (options === undefined ? mod[name]() : mod[name](options)) as Middleware
}

function bodyParserCases (library: 'default' | 'legacy'): BodyCase[] {
  const cases: Array<Omit<BodyCase, 'library'>> = [
    { name: 'json valid', build: parser('json'), contentType: 'application/json', body: Buffer.from(JSON_BODY) },
    { name: 'raw valid', build: parser('raw'), contentType: 'application/octet-stream', body: Buffer.from([0, 1, 2, 255, 10]) },
    { name: 'text valid', build: parser('text'), contentType: 'text/plain; charset=utf-8', body: Buffer.from('héllo wörld') },
    { name: 'urlencoded valid', build: parser('urlencoded', { extended: true }), contentType: 'application/x-www-form-urlencoded', body: Buffer.from('a=1&b%5Bc%5D=2&d=%C3%A9') },
    { name: 'over limit, declared', build: parser('json', { limit: '10b' }), contentType: 'application/json', body: Buffer.from('{"a":"0123456789abcdef"}'), variants: DECLARED },
    { name: 'over limit, undeclared', build: parser('text', { limit: 10 }), contentType: 'text/plain', body: Buffer.from('0123456789abcdefghij'), variants: ['chunked'] },
    { name: 'bad json', build: parser('json'), contentType: 'application/json', body: Buffer.from('{"a":') },
    { name: 'declared length larger', build: parser('json'), contentType: 'application/json', body: Buffer.from(JSON_BODY), lengthDelta: 5, variants: DECLARED },
    { name: 'declared length smaller', build: parser('text'), contentType: 'text/plain', body: Buffer.from('0123456789'), lengthDelta: -3, variants: DECLARED },
    { name: 'json charset=foo', build: parser('json'), contentType: 'application/json; charset=foo', body: Buffer.from('{"a":1}') },
    { name: 'json charset=utf-16', build: parser('json'), contentType: 'application/json; charset=utf-16', body: Buffer.from('{"a":1}') },
    { name: 'text charset=foo', build: parser('text'), contentType: 'text/plain; charset=foo', body: Buffer.from('abc') },
    { name: 'gzip json', build: parser('json'), contentType: 'application/json', contentEncoding: 'gzip', body: GZ_JSON },
    { name: 'gzip truncated', build: parser('json'), contentType: 'application/json', contentEncoding: 'gzip', body: GZ_JSON.subarray(0, GZ_JSON.length - 12) },
    { name: 'gzip flipped byte', build: parser('json'), contentType: 'application/json', contentEncoding: 'gzip', body: flipped },
    { name: 'gzip over limit inflated', build: parser('raw', { limit: '100b' }), contentType: 'application/octet-stream', contentEncoding: 'gzip', body: gzip('a'.repeat(3000)) },
    { name: 'unsupported encoding', build: parser('json'), contentType: 'application/json', contentEncoding: 'compress', body: Buffer.from('{}') },
    { name: 'type mismatch', build: parser('json'), contentType: 'text/plain', body: Buffer.from('hello') },
    { name: 'empty body', build: parser('json'), contentType: 'application/json', body: Buffer.alloc(0) }
  ]
  return cases.map((c) => ({ ...c, library }))
}

const BOUNDARY = 'XyZ123boundary'
const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`

function form (parts: Array<{ name: string, value: string, filename?: string, type?: string }>, ending: 'closed' | 'unclosed' | 'truncated' = 'closed'): Buffer {
  let out = ''
  for (const p of parts) {
    out += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${p.name}"` + (p.filename !== undefined ? `; filename="${p.filename}"` : '') + '\r\n'
    if (p.type !== undefined) out += `Content-Type: ${p.type}\r\n`
    out += `\r\n${p.value}\r\n`
  }
  if (ending === 'closed') out += `--${BOUNDARY}--\r\n`
  const buf = Buffer.from(out)
  return ending === 'truncated' ? buf.subarray(0, buf.length - 9) : buf
}

function multerWith (call: (m: Record<string, (...args: unknown[]) => Middleware>) => Middleware, limits?: Record<string, number>): (mod: AnyModule) => Middleware {
  return (mod) => {
    const storage = mod.memoryStorage()
    const instance = mod(limits === undefined ? { storage } : { storage, limits }) as Record<string, (...args: unknown[]) => Middleware>
    return call(instance)
  }
}

const FIELD_AND_FILE = form([{ name: 'a', value: '1' }, { name: 'f', value: 'hello file', filename: 'h.txt', type: 'text/plain' }])

function multerCases (): BodyCase[] {
  const cases: Array<Omit<BodyCase, 'library'>> = [
    { name: 'any: field and file', build: multerWith((m) => m.any()), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'single: field and file', build: multerWith((m) => m.single('f')), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'fields: field and file', build: multerWith((m) => m.fields([{ name: 'f', maxCount: 1 }, { name: 'g' }])), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'none: fields', build: multerWith((m) => m.none()), contentType: MULTIPART, body: form([{ name: 'a', value: '1' }, { name: 'b[c]', value: '2' }]) },
    { name: 'file over fileSize', build: multerWith((m) => m.single('f'), { fileSize: 4 }), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'unexpected file field', build: multerWith((m) => m.single('g')), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'none: a file', build: multerWith((m) => m.none()), contentType: MULTIPART, body: FIELD_AND_FILE },
    { name: 'missing closing delimiter', build: multerWith((m) => m.any()), contentType: MULTIPART, body: form([{ name: 'a', value: '1' }], 'unclosed') },
    { name: 'truncated in a file', build: multerWith((m) => m.any()), contentType: MULTIPART, body: form([{ name: 'a', value: '1' }, { name: 'f', value: 'hello file', filename: 'h.txt' }], 'truncated') },
    { name: 'no boundary', build: multerWith((m) => m.any()), contentType: 'multipart/form-data', body: FIELD_AND_FILE },
    { name: 'not multipart', build: multerWith((m) => m.any()), contentType: 'application/json', body: Buffer.from('{"a":1}') },
    { name: 'empty multipart body', build: multerWith((m) => m.any()), contentType: MULTIPART, body: Buffer.alloc(0) }
  ]
  return cases.map((c) => ({ ...c, library: 'multer' }))
}

export const BODIES: Record<Library, readonly BodyCase[]> = {
  default: bodyParserCases('default'),
  legacy: bodyParserCases('legacy'),
  multer: multerCases()
}

export function variantsOf (body: BodyCase): readonly HeaderVariant[] {
  return body.variants ?? HEADER_VARIANTS
}

/** The request headers for a body under a header variant; `numbers` false turns a numeric length into a string. */
function headersFor (body: BodyCase, variant: HeaderVariant, numbers: boolean): Record<string, string | number> {
  const headers: Record<string, string | number> = {}
  if (body.contentType !== undefined) headers['content-type'] = body.contentType
  if (body.contentEncoding !== undefined) headers['content-encoding'] = body.contentEncoding
  if (variant === 'chunked') {
    headers['transfer-encoding'] = 'chunked'
  } else {
    const length = body.body.length + (body.lengthDelta ?? 0)
    headers['content-length'] = variant === 'length-number' && numbers ? length : String(length)
  }
  return headers
}

// ---------------------------------------------------------------------------
// Kinds of request
// ---------------------------------------------------------------------------
export type Kind = 'stream-ended' | 'stream-later' | 'readable-from' | 'bare-socket' | 'mocks-http' | 'light-my-request' | 'serverless-http' | 'serverless-express'
export const KINDS: readonly Kind[] = ['stream-ended', 'stream-later', 'readable-from', 'bare-socket', 'mocks-http', 'light-my-request', 'serverless-http', 'serverless-express']
export const DIRECT_KINDS: readonly Kind[] = ['stream-ended', 'stream-later', 'readable-from', 'bare-socket', 'mocks-http']
export const isHttpKind = (kind: Kind): boolean => !DIRECT_KINDS.includes(kind)

/** The `res` handed to the middleware for kinds 1-5 (kinds 6-8 bring their own). */
export type ResKind = 'null' | 'empty object' | 'mocks-http'
export const RES_KINDS: readonly ResKind[] = ['null', 'empty object', 'mocks-http']

export interface RunSpec {
  library: Library
  body: BodyCase
  kind: Kind
  res: ResKind
  variant: HeaderVariant
  /** Split points (sorted, inside the body) for the kinds that send the body in pieces. */
  splits: readonly number[]
  /** serverless kinds: send a text body base64 encoded too (binary bodies always are). */
  base64?: boolean
  /** What a fake kind sets on req before any middleware runs, copied onto the oracle's stream. */
  preset?: Preset
}

/**
 * node-mocks-http's createRequest sets `req.body = {}` and `req.files = {}`; serverless-http and
 * @codegenie/serverless-express set `req.body` to the event's body as a Buffer.
 */
export type Preset = 'mocks-http' | 'serverless'

export function presetOf (kind: Kind): Preset | undefined {
  if (kind === 'mocks-http') return 'mocks-http'
  if (kind === 'serverless-http' || kind === 'serverless-express') return 'serverless'
  return undefined
}

export function describeSpec (s: RunSpec): string {
  const res = isHttpKind(s.kind) ? '' : `, res=${s.res}` + (s.preset !== undefined ? `, presets like ${s.preset}` : '')
  const splits = (s.splits.length > 0 ? `, splits=[${s.splits.join(',')}]` : '') + (s.base64 === true ? ', base64' : '')
  return `${s.library} / ${s.kind} / "${s.body.name}" / ${s.variant}${res}${splits}`
}

function chunksOf (buf: Buffer, splits: readonly number[]): Buffer[] {
  const out: Buffer[] = []
  let last = 0
  for (const p of splits) {
    if (p <= last || p >= buf.length) continue
    out.push(buf.subarray(last, p))
    last = p
  }
  if (buf.length > last || out.length === 0) out.push(buf.subarray(last))
  return out.filter((c) => c.length > 0)
}

// ---------------------------------------------------------------------------
// What a run records
// ---------------------------------------------------------------------------
/** What the application sees: next's calls and first argument, req.body, multer's req.file / req.files. */
export interface Answer {
  nextCalls: number
  error?: unknown
  body: unknown
  files?: unknown
}

/** For the HTTP kinds: the status and what the app's handlers echoed. */
export interface HttpAnswer {
  status: number
  echo: unknown
}

export interface RunRecord {
  answer?: Answer
  http?: HttpAnswer
  /** Thrown synchronously out of the middleware call. */
  thrown?: string
  /** Uncaught exceptions and unhandled rejections during the run (and thrown from the driver's own req.send()). */
  uncaught: string[]
  hang: boolean
}

/** The error fields compared (what describeError records, minus the stack). */
function errorView (err: unknown): unknown {
  return describeError(err)
}

function bodyView (req: Record<string, unknown>): unknown {
  return { present: 'body' in req, value: 'body' in req ? serialise(req.body) : ['absent'] }
}

function fileView (file: unknown): unknown {
  if (file === null || typeof file !== 'object') return serialise(file)
  const f = file as Record<string, unknown>
  return { fieldname: f.fieldname, originalname: f.originalname, mimetype: f.mimetype, size: f.size, buffer: serialise(f.buffer) }
}

function filesView (req: Record<string, unknown>): unknown {
  const files = req.files
  let filesOut: unknown
  if (Array.isArray(files)) filesOut = files.map(fileView)
  else if (files !== null && typeof files === 'object') filesOut = Object.fromEntries(Object.entries(files).map(([k, v]) => [k, Array.isArray(v) ? v.map(fileView) : fileView(v)]))
  else filesOut = serialise(files)
  return { file: 'file' in req ? fileView(req.file) : ['absent'], files: filesOut }
}

/**
 * The error handler's and the route's echo, as an Express app of users writes them; built from an {@link Answer} too,
 * so that an answer on a stream (the oracle) can stand for what an HTTP kind should have echoed.
 */
export function echoOf (library: Library, answer: Answer): HttpAnswer {
  const err = answer.error as undefined | { ownEnumerable?: Record<string, unknown>, status?: unknown, message?: unknown, type?: unknown }
  if (answer.nextCalls > 0 && err !== undefined) {
    const statusView = err.status as [string, string] | ['undefined']
    const status = statusView[0] === 'number' ? Number(statusView[1]) : 500
    const own = err.ownEnumerable ?? {}
    return { status, echo: { status: err.status, type: err.type, code: own.code ?? ['undefined'], field: own.field ?? ['undefined'], message: err.message, body: answer.body, ...(library === 'multer' ? { files: answer.files } : {}) } }
  }
  return { status: 200, echo: { body: answer.body, ...(library === 'multer' ? { files: answer.files } : {}) } }
}

// ---------------------------------------------------------------------------
// What is compared: everything recorded, but for the differences docs/multer.md lists for bodykit/multer.
// ---------------------------------------------------------------------------
const STATUS_KEYS = new Set(['status', 'statusCode', 'expose'])

/**
 * An error as compared for multer: an inherited 4xx `status`/`statusCode` on MulterError and a non-enumerable one
 * on busboy's errors are documented differences (docs/multer.md, "Status of upload errors"); the rest must match.
 */
function projectMulterError (view: unknown): unknown {
  if (view === null || typeof view !== 'object' || !('ownEnumerable' in view)) return view
  const v = view as { ownEnumerable: Record<string, unknown>, ownNames: string[] } & Record<string, unknown>
  const out: Record<string, unknown> = {}
  for (const [k, x] of Object.entries(v)) if (!STATUS_KEYS.has(k)) out[k] = x
  out.ownEnumerable = Object.fromEntries(Object.entries(v.ownEnumerable).filter(([k]) => !STATUS_KEYS.has(k)))
  out.ownNames = v.ownNames.filter((k) => !STATUS_KEYS.has(k))
  return out
}

/** After a multer error only whether req.body is there and its prototype are compared (docs/multer.md: "req.body after an error"). */
function projectBodyOnError (body: unknown): unknown {
  const b = body as { present: boolean, value: unknown[] }
  return { present: b.present, kind: Array.isArray(b.value) ? b.value.slice(0, b.value[0] === 'object' ? 2 : 1) : b.value }
}

export function projectAnswer (library: Library, answer: Answer): Answer {
  if (library !== 'multer' || answer.error === undefined) return answer
  return { nextCalls: answer.nextCalls, error: projectMulterError(answer.error), body: projectBodyOnError(answer.body) }
}

export function projectHttp (library: Library, answer: HttpAnswer): unknown {
  const echo = answer.echo as Record<string, unknown>
  if (library !== 'multer' || echo === null || typeof echo !== 'object' || !('message' in echo)) return answer
  // multer's errors give Express's 500, bodykit/multer's a 400 or 413 (docs/multer.md).
  const { status: _status, files: _files, body, ...rest } = echo
  return { status: answer.status >= 400 ? 'an error status' : answer.status, echo: { ...rest, body: projectBodyOnError(body) } }
}

// ---------------------------------------------------------------------------
// Uncaught exceptions: node:test's own listeners are set aside while runs are made (a reference library that
// throws asynchronously is an expected finding, not a failure of the file), and every report goes to the run
// in progress.
// ---------------------------------------------------------------------------
let currentUncaught: string[] | null = null
const orphanUncaught: string[] = []
const describeThrown = (err: unknown): string => err instanceof Error ? `${err.name}: ${err.message}` : `non-error: ${String(err)}`
const onUncaught = (err: unknown): void => { (currentUncaught ?? orphanUncaught).push(describeThrown(err)) }
const onRejection = (err: unknown): void => { (currentUncaught ?? orphanUncaught).push('unhandled rejection: ' + describeThrown(err)) }

/** Run `fn` with uncaught exceptions and unhandled rejections recorded instead of failing the test file. */
export async function withUncaughtRecorded<T> (fn: () => Promise<T>): Promise<{ result: T, orphans: string[] }> {
  const saved = { uncaughtException: process.listeners('uncaughtException'), unhandledRejection: process.listeners('unhandledRejection') }
  process.removeAllListeners('uncaughtException')
  process.removeAllListeners('unhandledRejection')
  process.on('uncaughtException', onUncaught)
  process.on('unhandledRejection', onRejection)
  try {
    const result = await fn()
    return { result, orphans: orphanUncaught.splice(0) }
  } finally {
    process.removeListener('uncaughtException', onUncaught)
    process.removeListener('unhandledRejection', onRejection)
    for (const l of saved.uncaughtException) process.on('uncaughtException', l as (err: Error) => void)
    for (const l of saved.unhandledRejection) process.on('unhandledRejection', l as (reason: unknown) => void)
  }
}

const TIMEOUT_MS = Number(process.env.REQUEST_LIKE_TIMEOUT_MS ?? 400)
/** How long a run stays open after its first answer, to catch a second next() or a late throw. */
const SETTLE_MS = 8

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

// ---------------------------------------------------------------------------
// One run
// ---------------------------------------------------------------------------
const mocksHttp = load('node-mocks-http') as { createRequest: (o: unknown) => Record<string, unknown> & { send: (b: Buffer) => void }, createResponse: () => unknown }

function makeRes (kind: ResKind): unknown {
  return kind === 'null' ? null : kind === 'empty object' ? {} : mocksHttp.createResponse()
}

interface DirectRequest {
  req: Record<string, unknown>
  /** Called right after the middleware call (for kinds that send the body later). */
  after: () => void
}

function makeDirectRequest (spec: RunSpec, uncaught: string[]): DirectRequest {
  const made = makeBareDirectRequest(spec, uncaught)
  if (spec.preset === 'mocks-http') Object.assign(made.req, { body: {}, files: {} })
  if (spec.preset === 'serverless') made.req.body = Buffer.from(spec.body.body)
  return made
}

function makeBareDirectRequest (spec: RunSpec, uncaught: string[]): DirectRequest {
  const headers = headersFor(spec.body, spec.variant, true)
  const chunks = chunksOf(spec.body.body, spec.splits)
  switch (spec.kind) {
    case 'stream-ended':
    case 'stream-later': {
      const req = Object.assign(new PassThrough(), { headers, method: 'POST', url: '/' })
      const write = (): void => { for (const c of chunks) req.write(c); req.end() }
      if (spec.kind === 'stream-ended') write()
      return { req: req as unknown as Record<string, unknown>, after: spec.kind === 'stream-later' ? () => { setImmediate(write) } : () => {} }
    }
    case 'readable-from': {
      const req = Object.assign(Readable.from(chunks), { headers, method: 'POST', url: '/' })
      return { req: req as unknown as Record<string, unknown>, after: () => {} }
    }
    case 'bare-socket': {
      const req = new http.IncomingMessage(new net.Socket())
      req.method = 'POST'
      req.url = '/'
      req.headers = headers as http.IncomingHttpHeaders
      for (const c of chunks) req.push(c)
      req.push(null)
      return { req: req as unknown as Record<string, unknown>, after: () => {} }
    }
    case 'mocks-http': {
      const req = mocksHttp.createRequest({ method: 'POST', url: '/', headers })
      return {
        req,
        after: () => {
          setImmediate(() => {
            // What a user's test does after calling the middleware; a throw out of it is a throw in the user's test.
            try { req.send(spec.body.body) } catch (err) { uncaught.push('from req.send(): ' + describeThrown(err)) }
          })
        }
      }
    }
    default:
      throw new Error('not a direct kind: ' + spec.kind)
  }
}

async function runDirect (spec: RunSpec, role: Role): Promise<RunRecord> {
  const mw = spec.body.build(loadModule(spec.library, role))
  const uncaught: string[] = []
  currentUncaught = uncaught
  const { req, after } = makeDirectRequest(spec, uncaught)
  const res = makeRes(spec.res)
  let nextCalls = 0
  let answer: Answer | undefined
  let thrown: string | undefined
  let resolveFirst: () => void = () => {}
  const first = new Promise<void>((resolve) => { resolveFirst = resolve })
  const next: Next = (...args: unknown[]) => {
    nextCalls++
    if (nextCalls > 1) return
    const err = args[0]
    answer = { nextCalls: 0, body: bodyView(req), ...(err !== undefined && err !== null ? { error: errorView(err) } : {}), ...(spec.library === 'multer' ? { files: filesView(req) } : {}) }
    resolveFirst()
  }
  try {
    mw(req, res, next)
  } catch (err) {
    thrown = describeThrown(err)
    if (nextCalls === 0) resolveFirst()
  }
  after()
  let timer: NodeJS.Timeout | undefined
  const timedOut = await Promise.race([first.then(() => false), new Promise<boolean>((resolve) => { timer = setTimeout(() => resolve(true), TIMEOUT_MS) })])
  clearTimeout(timer)
  // Destroyed before the settle time, so that what destroying a hung run throws is still this run's.
  if (timedOut && req instanceof Readable && !req.destroyed) req.destroy()
  await delay(SETTLE_MS)
  currentUncaught = null
  if (answer) answer.nextCalls = nextCalls
  return { answer, thrown, uncaught, hang: timedOut }
}

interface EchoResponse {
  set: (name: string, value: string) => void
  status: (n: number) => { json: (v: unknown) => void }
}

// Express apps, one per library, role and body (the middleware is built once per app, as apps do).
type App = ((req: unknown, res: unknown) => void) & { use: (...args: unknown[]) => void }
const apps = new Map<string, App>()

function appFor (spec: RunSpec, role: Role): App {
  const key = `${spec.library}|${role}|${spec.body.name}`
  let app = apps.get(key)
  if (app) return app
  const express = load(EXPRESS[spec.library]) as () => App
  app = express()
  const mw = spec.body.build(loadModule(spec.library, role))
  const library = spec.library
  const view = (req: Record<string, unknown>, err?: unknown): Answer => ({
    nextCalls: 1,
    body: bodyView(req),
    ...(err !== undefined ? { error: errorView(err) } : {}),
    ...(library === 'multer' ? { files: filesView(req) } : {})
  })
  // A throw out of the middleware, or a second call of next, is caught by Express and would not show in the answer:
  // each is recorded as an uncaught exception of the run.
  app.use(function guarded (req: unknown, res: unknown, next: Next) {
    let calls = 0
    try {
      (mw as (req: unknown, res: unknown, next: Next) => void)(req, res, (err?: unknown) => {
        if (++calls > 1) currentUncaught?.push('next called again, with ' + describeThrown(err))
        else next(err)
      })
    } catch (err) {
      currentUncaught?.push('thrown out of the middleware: ' + describeThrown(err))
      if (calls === 0) next(err)
    }
  })
  // The echo goes in a header as well as in the body: Express swaps the prototype of light-my-request's response
  // for its own, and the payload light-my-request captures is then always empty (status and headers survive).
  const send = (res: EchoResponse, echoed: HttpAnswer): void => {
    res.set('x-echo', Buffer.from(JSON.stringify(echoed.echo)).toString('base64'))
    res.status(echoed.status).json(echoed.echo)
  }
  app.use((req: Record<string, unknown>, res: EchoResponse) => { send(res, echoOf(library, view(req))) })
  app.use((err: unknown, req: Record<string, unknown>, res: EchoResponse, _next: Next) => { send(res, echoOf(library, view(req, err))) })
  apps.set(key, app)
  return app
}

type Headers = Record<string, unknown>
interface LambdaResult { statusCode: number, body: string, isBase64Encoded?: boolean, headers?: Headers, multiValueHeaders?: Record<string, unknown[]> }
const lightMyRequest = load('light-my-request') as { inject: (fn: unknown, o: unknown) => Promise<{ statusCode: number, payload: string, headers: Headers }> }
const serverlessHttp = load('serverless-http') as (app: unknown) => (event: unknown, context: unknown) => Promise<LambdaResult>
const serverlessExpress = load('@codegenie/serverless-express') as (o: { app: unknown }) => (event: unknown, context: unknown) => Promise<LambdaResult>

const handlers = new Map<string, (event: unknown, context: unknown) => Promise<LambdaResult>>()

function apiGatewayEvent (spec: RunSpec): Record<string, unknown> {
  const headers = headersFor(spec.body, spec.variant, false)
  // Text bodies as a string, anything else (gzip, bytes) base64 encoded, as API Gateway passes them.
  const binary = spec.base64 === true || spec.body.contentEncoding !== undefined || !isUtf8Text(spec.body.body)
  return {
    resource: '/',
    path: '/',
    httpMethod: 'POST',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, [String(v)]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { resourcePath: '/', httpMethod: 'POST', path: '/', stage: 'test', requestId: 'req-1', identity: { sourceIp: '127.0.0.1' } },
    body: binary ? spec.body.body.toString('base64') : spec.body.body.toString('utf8'),
    isBase64Encoded: binary
  }
}

function isUtf8Text (buf: Buffer): boolean {
  return Buffer.from(buf.toString('utf8'), 'utf8').equals(buf) && !buf.includes(0)
}

async function runHttp (spec: RunSpec, role: Role): Promise<RunRecord> {
  const app = appFor(spec, role)
  const uncaught: string[] = []
  currentUncaught = uncaught
  let pending: Promise<{ status: number, payload: string, echo: unknown }>
  try {
    if (spec.kind === 'light-my-request') {
      pending = lightMyRequest.inject((req: unknown, res: unknown) => app(req, res), { method: 'POST', url: '/', headers: headersFor(spec.body, spec.variant, false), payload: spec.body.body })
        .then((r) => ({ status: r.statusCode, payload: r.payload, echo: r.headers['x-echo'] }))
    } else {
      const key = `${spec.kind}|${spec.library}|${role}|${spec.body.name}`
      let handler = handlers.get(key)
      if (!handler) {
        handler = spec.kind === 'serverless-http' ? serverlessHttp(app) : serverlessExpress({ app })
        handlers.set(key, handler)
      }
      pending = handler(apiGatewayEvent(spec), { awsRequestId: 'req-1', getRemainingTimeInMillis: () => 30000, succeed () {}, fail () {}, done () {} })
        .then((r) => ({ status: r.statusCode, payload: r.isBase64Encoded === true ? Buffer.from(r.body, 'base64').toString('utf8') : r.body, echo: r.headers?.['x-echo'] ?? r.multiValueHeaders?.['x-echo']?.[0] }))
    }
  } catch (err) {
    currentUncaught = null
    return { thrown: describeThrown(err), uncaught, hang: false }
  }
  let timer: NodeJS.Timeout | undefined
  const outcome = await Promise.race([
    pending.then((r) => ({ r }), (err: unknown) => ({ rejected: describeThrown(err) })),
    new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), TIMEOUT_MS) })
  ])
  clearTimeout(timer)
  await delay(SETTLE_MS)
  currentUncaught = null
  if (outcome === null) return { uncaught, hang: true }
  if ('rejected' in outcome) return { thrown: 'the driver rejected: ' + outcome.rejected, uncaught, hang: false }
  let echo: unknown
  try {
    echo = JSON.parse(typeof outcome.r.echo === 'string' ? Buffer.from(outcome.r.echo, 'base64').toString('utf8') : outcome.r.payload)
  } catch {
    echo = { notFromTheApp: outcome.r.payload.slice(0, 300) }
  }
  return { http: { status: outcome.r.status, echo }, uncaught, hang: false }
}

/** Run one library's middleware (reference or candidate) on one freshly built request-like. */
export function runOnce (spec: RunSpec, role: Role): Promise<RunRecord> {
  return isHttpKind(spec.kind) ? runHttp(spec, role) : runDirect(spec, role)
}

/** JSON round trip, so echoes built in-process compare with echoes parsed from a response. */
export function normalise<T> (v: T): T {
  return v === undefined ? v : JSON.parse(JSON.stringify(v)) as T
}
