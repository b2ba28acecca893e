// The topics of multer's own suite and of its users' suites (@koa/multer, multer-s3), as those suites build a request:
// a PassThrough carrying `headers`, `res` null, the body written before, after or piece by piece around the call.
// Every case runs through multer 2.5.0 and through bodykit/multer and must end the same way (docs/multer.md's
// documented differences aside, each cited where it applies).
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import realMulter from 'multer'
import bodykitMulter from '../../src/multer'
import { BOUNDARY, buildForm, field, file, formType, type Part } from './ported-form'

type Multer = typeof realMulter
type Upload = ReturnType<Multer>
type Next = (err?: unknown) => void
type Middleware = (req: unknown, res: null, next: Next) => void
type FakeRequest = PassThrough & { headers: Record<string, string>, body?: unknown, file?: unknown, files?: unknown }

const LIBRARIES = { multer: realMulter, bodykit: bodykitMulter as unknown as Multer }
type LibraryName = keyof typeof LIBRARIES

/** How the body reaches the request, as users' tests do it. */
const SHAPES = ['ended-before-call', 'written-after-call', 'pieces-after-call'] as const
const FRAMINGS = ['content-length', 'chunked'] as const
type Shape = typeof SHAPES[number]
type Framing = typeof FRAMINGS[number]

/** A run whose next() has not come by then is a hang (these requests are in-process and take a few ms). */
const RUN_TIMEOUT_MS = 500

interface RunContext {
  /** A fresh folder for this run's disk storage (removed after the run). */
  dir: string
  lib: Multer
}

interface Case {
  name: string
  body: Buffer
  mount: (upload: Upload) => unknown
  options?: (ctx: RunContext) => Record<string, unknown>
  /** The request's Content-Type; a form with the default boundary unless given. */
  contentType?: string
  timeoutMs?: number
  /** A `req.body` set before the middleware runs (by an earlier parser). */
  presetBody?: () => unknown
  /** Also record whether the middleware touched the request stream. */
  recordStream?: boolean
  /** The user's fileFilter throws: multer lets it escape (an uncaught exception); bodykit must do the same, no more. */
  userThrows?: boolean
}

// ---------------------------------------------------------------------------------------------------------------
// Outcomes: everything a handler or a test can see, in a form deepStrictEqual compares (prototypes made explicit).

interface Outcome {
  /** What the middleware call itself threw, synchronously. */
  threw: string | null
  /** What writing the body threw (a listener failing inside write()). */
  writeThrew: string | null
  hang: boolean
  nextCalls: number
  error: Record<string, unknown> | null
  body: unknown
  file: unknown
  files: unknown
  /** Files in the run's folder when next was called: sorted contents. */
  disk: string[]
  stream?: { flowing: boolean | null, readableLength: number }
}

function describeBytes (bytes: Buffer): string {
  if (bytes.length <= 64) return 'bytes:' + JSON.stringify(bytes.toString('latin1'))
  return `bytes:len=${bytes.length},sha1=${crypto.createHash('sha1').update(bytes).digest('hex').slice(0, 12)}`
}

/** A value with its prototype spelled out, own keys in order (`__proto__` included), holes marked. */
function describeValue (value: unknown): unknown {
  if (value === undefined) return '<undefined>'
  if (value === null || typeof value !== 'object') return value
  if (Buffer.isBuffer(value)) return describeBytes(value)
  if (Array.isArray(value)) {
    const items: unknown[] = []
    for (let i = 0; i < value.length; i++) items.push(i in value ? describeValue(value[i]) : '<hole>')
    const extra = Object.keys(value).filter((key) => !/^\d+$/.test(key))
    return { proto: protoName(value), items, ...(extra.length > 0 ? { extra: extra.map((key) => [key, describeValue((value as unknown as Record<string, unknown>)[key])]) } : {}) }
  }
  const entries = Reflect.ownKeys(value).map((key) => [String(key), describeValue((value as Record<PropertyKey, unknown>)[key])])
  return { proto: protoName(value), entries }
}

function protoName (value: object): string {
  const proto = Object.getPrototypeOf(value)
  if (proto === null) return 'null'
  if (proto === Object.prototype) return 'Object'
  if (proto === Array.prototype) return 'Array'
  return 'other:' + String(proto.constructor?.name)
}

function describeFile (value: unknown, dir: string): unknown {
  if (value === undefined) return '<undefined>'
  if (value === null || typeof value !== 'object') return value
  const f = value as Record<string, unknown>
  const out: Array<[string, unknown]> = [['proto', protoName(f)]]
  for (const key of Object.keys(f)) {
    const v = f[key]
    if (key === 'buffer' && Buffer.isBuffer(v)) out.push([key, describeBytes(v)])
    else if (key === 'destination' && typeof v === 'string') out.push([key, v === dir ? '<run dir>' : v.startsWith(dir) ? '<run dir>' + v.slice(dir.length) : v])
    else if (key === 'filename' && typeof v === 'string' && /^[0-9a-f]{32}$/.test(v)) out.push([key, '<32 hex>'])
    else if (key === 'path' && typeof v === 'string') {
      out.push([key, typeof f.destination === 'string' && typeof f.filename === 'string' && v === path.join(f.destination, f.filename) ? '<destination>/<filename>' : v])
      out.push(['(content at path)', fs.existsSync(v) ? describeBytes(fs.readFileSync(v)) : '<missing>'])
    } else out.push([key, describeValue(v)])
  }
  return out
}

function describeFiles (value: unknown, dir: string): unknown {
  if (value === undefined) return '<undefined>'
  if (Array.isArray(value)) return { proto: protoName(value), items: value.map((f) => describeFile(f, dir)) }
  if (value !== null && typeof value === 'object') {
    return { proto: protoName(value), entries: Object.keys(value).map((key) => [key, describeFiles((value as Record<string, unknown>)[key], dir)]) }
  }
  return value
}

function describeError (err: unknown): Record<string, unknown> {
  if (!(err instanceof Error)) return { thrownValue: describeValue(err) }
  const e = err as Error & Record<string, unknown>
  return {
    className: e.constructor.name,
    name: e.name,
    code: e.code,
    field: e.field,
    filename: e.filename,
    message: e.message,
    status: e.status,
    statusCode: e.statusCode,
    ownKeys: Object.keys(e),
    storageErrors: Array.isArray(e.storageErrors) ? e.storageErrors.map((s: unknown) => s instanceof Error ? s.message : s) : describeValue(e.storageErrors)
  }
}

function listDisk (dir: string): string[] {
  const found: string[] = []
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) found.push(describeBytes(fs.readFileSync(path.join(entry.parentPath ?? (entry as unknown as { path: string }).path, entry.name))))
  }
  return found.sort()
}

// ---------------------------------------------------------------------------------------------------------------
// Running one request.

let uncaught: Error[] = []
function countUncaught (err: Error): void { uncaught.push(err) }

function piecesOf (body: Buffer): Buffer[] {
  const size = body.length <= 4096 ? 7 : Math.ceil(body.length / 200)
  const pieces: Buffer[] = []
  for (let at = 0; at < body.length; at += size) pieces.push(body.subarray(at, at + size))
  return pieces
}

async function runOnce (libName: LibraryName, testCase: Case, shape: Shape, framing: Framing): Promise<Outcome> {
  const lib = LIBRARIES[libName]
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-ported-'))
  try {
    const upload = lib((testCase.options?.({ dir, lib }) ?? {}) as never)
    const middleware = testCase.mount(upload) as Middleware
    const req = new PassThrough() as FakeRequest
    const body = testCase.body
    req.headers = { 'content-type': testCase.contentType ?? formType() }
    if (framing === 'content-length') req.headers['content-length'] = String(body.length)
    else req.headers['transfer-encoding'] = 'chunked'

    const outcome: Outcome = { threw: null, writeThrew: null, hang: false, nextCalls: 0, error: null, body: null, file: null, files: null, disk: [] }
    const write = (action: () => void): void => {
      try { action() } catch (err) { outcome.writeThrew ??= String(err) }
    }
    if (testCase.presetBody) req.body = testCase.presetBody()
    if (shape === 'ended-before-call') write(() => req.end(body))

    let finish!: () => void
    const finished = new Promise<void>((resolve) => { finish = resolve })
    let givenUp = false
    const next: Next = (err) => {
      // Once the run has timed out its request is destroyed: what follows is the test's doing, not the library's.
      if (givenUp) return
      outcome.nextCalls++
      if (outcome.nextCalls > 1) return
      // What the next handler sees, at the moment it is called.
      outcome.error = err === undefined || err === null ? null : describeError(err)
      outcome.body = describeValue(req.body)
      outcome.file = describeFile(req.file, dir)
      outcome.files = describeFiles(req.files, dir)
      outcome.disk = listDisk(dir)
      if (testCase.recordStream) outcome.stream = { flowing: req.readableFlowing, readableLength: req.readableLength }
      finish()
    }
    try {
      middleware(req, null, next)
    } catch (err) {
      outcome.threw = String(err)
      finish()
    }
    if (shape === 'written-after-call') setImmediate(() => write(() => req.end(body)))
    if (shape === 'pieces-after-call') {
      const pieces = piecesOf(body)
      const sendNext = (): void => {
        if (req.destroyed) return
        const piece = pieces.shift()
        if (piece === undefined) return write(() => req.end())
        write(() => req.write(piece))
        setImmediate(sendNext)
      }
      setImmediate(sendNext)
    }

    let timer: NodeJS.Timeout | undefined
    const timedOut = new Promise<boolean>((resolve) => { timer = setTimeout(resolve, testCase.timeoutMs ?? RUN_TIMEOUT_MS, true) })
    outcome.hang = await Promise.race([finished.then(() => false), timedOut])
    clearTimeout(timer)
    givenUp = outcome.hang
    // A second next() shows up within a few turns of the event loop.
    await new Promise((resolve) => setTimeout(resolve, 10))
    if (outcome.hang) req.destroy()
    return outcome
  } finally {
    // Leave file handles time to close before the folder goes.
    await new Promise((resolve) => setTimeout(resolve, 5))
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------------------------
// What bodykit must show, given multer's outcome.

/** docs/multer.md, "Status of upload errors": MulterError codes answered 413 (the rest 400). */
const TOO_LARGE = new Set(['LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT'])

/** Errors the cases' own filters and engines raise: passed on untouched by both. */
function isUserError (error: Record<string, unknown>): boolean {
  return typeof error.message === 'string' && /^(user|engine): /.test(error.message)
}

/** Whether two described bodies are both objects with the same prototype. */
function sameKind (part: unknown, whole: unknown): boolean {
  const [p, w] = [part, whole] as Array<{ proto?: unknown } | null>
  return p !== null && w !== null && typeof p === 'object' && typeof w === 'object' && p.proto !== undefined && p.proto === w.proto
}

function expectedFromMulter (theirs: Outcome, ours: Outcome): Outcome {
  const expected: Outcome = structuredClone(theirs)
  if (expected.error && ours.error) {
    const e = expected.error
    // docs/multer.md, row "Status of upload errors": MulterError gets an inherited status (413 for a limit, else
    // 400); busboy's errors a non-enumerable 400; own properties, code and message unchanged.
    if (e.className === 'MulterError' && e.status === undefined) {
      e.status = e.statusCode = TOO_LARGE.has(String(e.code)) ? 413 : 400
    } else if (!isUserError(e) && e.status === undefined) {
      e.status = e.statusCode = 400
    }
    // docs/multer.md, row "req.body after an error": which fields it holds depends on when the error became known
    // (multer may add fields of the same chunk; bodykit reads a small body whole, so a field after a file whose engine
    // fails later is there). Only its kind is compared: the same prototype, never undefined.
    if (sameKind(ours.body, theirs.body)) expected.body = ours.body
  }
  return expected
}

// ---------------------------------------------------------------------------------------------------------------
// The cases.

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')
const BIG = crypto.createHash('sha256').update('seed').digest()
const LARGE = Buffer.alloc(3 * 1024 * 1024)
for (let at = 0; at < LARGE.length; at += BIG.length) BIG.copy(LARGE, at)
const GARBAGE = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff))

const form = (...parts: Part[]): Buffer => buildForm(parts)
const x = (n: number): string => 'x'.repeat(n)

/** A storage engine of the user's own, asynchronous like multer-s3: stores sizes; `failRemove` makes removal fail. */
function userEngine (options: { failHandle?: boolean, failRemove?: boolean }): unknown {
  return {
    _handleFile (_req: unknown, f: { stream: NodeJS.ReadableStream }, callback: (err: Error | null, info?: object) => void) {
      let size = 0
      f.stream.on('data', (chunk: Buffer) => { size += chunk.length })
      f.stream.on('end', () => {
        setImmediate(() => options.failHandle ? callback(new Error('engine: bucket unavailable')) : callback(null, { size, key: 'k-' + size }))
      })
    },
    _removeFile (_req: unknown, _f: unknown, callback: (err: Error | null) => void) {
      setImmediate(() => callback(options.failRemove ? new Error('engine: cannot delete') : null))
    }
  }
}

type FilterCallback = (err: Error | null, accept?: boolean) => void
type FileInfo = { originalname: string, fieldname: string }

/** Field names of `length` characters, made distinct. */
function names (count: number, length: number): Part[] {
  return Array.from({ length: count }, (_, i) => field((String(i) + x(length)).slice(0, length), 'v'))
}

/** A part with `extra` X- headers between Content-Disposition and Content-Type. */
function fileWithHeaders (extra: number): Part {
  // Short lines, so that 2,000 pairs stay inside busboy's 16 KiB header block.
  const headers = Array.from({ length: extra }, () => 'X: 1')
  return { raw: 'Content-Disposition: form-data; name="doc"; filename="h.txt"\r\n' + headers.map((h) => h + '\r\n').join('') + 'Content-Type: image/gif\r\n\r\nGIF89a' }
}

const cases: Case[] = [
  // The five APIs.
  { name: 'none(): text fields only', mount: (u) => u.none(), body: form(field('name', 'Ada'), field('lang', 'en')) },
  { name: 'none(): a file is LIMIT_UNEXPECTED_FILE', mount: (u) => u.none(), body: form(field('a', '1'), file('doc', 'a.txt', 'hi')) },
  { name: 'single(): one file between fields', mount: (u) => u.single('avatar'), body: form(field('before', '1'), file('avatar', 'me.png', PNG, 'image/png'), field('after', '2')) },
  { name: 'single(): no file sent', mount: (u) => u.single('avatar'), body: form(field('a', '1')) },
  { name: 'single(): a second file in its field (maxCount 1)', mount: (u) => u.single('avatar'), body: form(file('avatar', '1.txt', 'one'), file('avatar', '2.txt', 'two')) },
  { name: 'single(): a file in another field', mount: (u) => u.single('avatar'), body: form(field('a', '1'), file('other', 'o.txt', 'other')) },
  { name: 'single(): a file part with an empty filename is no file', mount: (u) => u.single('avatar'), body: form({ name: 'avatar', filename: '', data: '' }, field('a', '1')) },
  { name: 'array(): files up to maxCount', mount: (u) => u.array('docs', 3), body: form(file('docs', '1.txt', 'a'), file('docs', '2.txt', 'bb'), file('docs', '3.txt', 'ccc')) },
  { name: 'array(): one file over maxCount', mount: (u) => u.array('docs', 2), body: form(file('docs', '1.txt', 'a'), file('docs', '2.txt', 'bb'), file('docs', '3.txt', 'ccc')) },
  { name: 'array() without maxCount: five files', mount: (u) => u.array('docs'), body: form(...[1, 2, 3, 4, 5].map((i) => file('docs', i + '.txt', x(i)))) },
  {
    name: 'fields(): files by field name',
    mount: (u) => u.fields([{ name: 'avatar', maxCount: 1 }, { name: 'gallery', maxCount: 3 }]),
    body: form(file('gallery', 'g1.jpg', 'g1', 'image/jpeg'), field('title', 'trip'), file('avatar', 'a.png', PNG, 'image/png'), file('gallery', 'g2.jpg', 'g2', 'image/jpeg'))
  },
  { name: 'fields(): maxCount passed in one field', mount: (u) => u.fields([{ name: 'avatar', maxCount: 1 }, { name: 'gallery' }]), body: form(file('avatar', 'a.png', 'a'), file('gallery', 'g.jpg', 'g'), file('avatar', 'b.png', 'b')) },
  { name: 'fields(): a field it does not list', mount: (u) => u.fields([{ name: 'avatar' }]), body: form(file('avatar', 'a.png', 'a'), file('banner', 'b.png', 'b')) },
  { name: 'any(): files from several fields', mount: (u) => u.any(), body: form(file('a', 'a1.txt', 'a1'), field('t', 'x'), file('b', 'b.txt', 'b'), file('a', 'a2.txt', 'a2')) },

  // Fields: values and names.
  { name: 'empty form (closing delimiter only)', mount: (u) => u.none(), body: form() },
  { name: 'empty field values', mount: (u) => u.none(), body: form(field('a', ''), field('b', ''), field('a', '')) },
  { name: 'values with CRLF, quotes and UTF-8', mount: (u) => u.none(), body: form(field('note', 'line 1\r\nline 2 "quoted" é 日本 🎉'), field('dashes', '--' + BOUNDARY.slice(0, 10))) },
  { name: 'a repeated name becomes an array', mount: (u) => u.none(), body: form(field('tag', 'a'), field('tag', 'b'), field('tag', 'c')) },
  { name: 'nesting: a[b], a[c], a[d][e]', mount: (u) => u.none(), body: form(field('user[name]', 'Ada'), field('user[lang]', 'en'), field('user[address][city]', 'London')) },
  { name: 'nesting: three levels and an array inside', mount: (u) => u.none(), body: form(field('a[b][c][d]', 'deep'), field('a[b][list][]', '1'), field('a[b][list][]', '2')) },
  { name: 'arrays: a[] and a[0], a[1]', mount: (u) => u.none(), body: form(field('a[]', 'x'), field('a[]', 'y'), field('b[0]', 'first'), field('b[1]', 'second'), field('c[1]', 'sparse')) },
  {
    name: 'conflicts between a value, an object and an array',
    mount: (u) => u.none(),
    body: form(field('a', '1'), field('a[b]', '2'), field('c[]', '1'), field('c[d]', '2'), field('e[0]', 'x'), field('e[y]', 'z'), field('g[h]', '1'), field('g', '2'), field('k[]', '1'), field('k', '2'))
  },
  { name: 'names append-field keeps literally', mount: (u) => u.none(), body: form(field('[x]', '1'), field('a[', '2'), field('a[]b', '3'), field('x]y', '4'), field('p[q]r', '5')) },
  { name: 'an empty field name', mount: (u) => u.none(), body: form(field('a', '1'), field('', 'nameless'), field('b', '2')) },
  { name: 'prototype-looking names', mount: (u) => u.none(), body: form(field('__proto__', '1'), field('constructor', '2'), field('__proto__[polluted]', '3'), field('constructor[prototype][x]', '4'), field('toString', '5'), field('o[__proto__][p]', '6')) },
  { name: 'unicode field names', mount: (u) => u.none(), body: form(field('é', '1'), field('名前', '2'), field('emoji🎉[ключ]', '3')) },
  { name: 'a part without a name (MISSING_FIELD_NAME)', mount: (u) => u.any(), body: form(field('a', '1'), { raw: 'Content-Disposition: form-data\r\n\r\nanonymous' }) },

  // Filenames.
  { name: 'UTF-8 bytes in filename (defParamCharset latin1)', mount: (u) => u.single('doc'), body: form(file('doc', 'résumé 日本.txt', 'r')) },
  { name: 'UTF-8 bytes in filename (defParamCharset utf8)', options: () => ({ defParamCharset: 'utf8' }), mount: (u) => u.single('doc'), body: form(file('doc', 'résumé 日本.txt', 'r')) },
  { name: "filename*=UTF-8'' (RFC 5987)", mount: (u) => u.single('doc'), body: form({ name: 'doc', filenameStar: "UTF-8''r%C3%A9sum%C3%A9%20%E6%97%A5.txt", data: 'r' }) },
  { name: "filename*=iso-8859-1'en' (RFC 5987)", mount: (u) => u.single('doc'), body: form({ name: 'doc', filenameStar: "iso-8859-1'en'%E9t%E9.txt", data: 'e' }) },
  { name: 'filename and filename*: filename* wins', mount: (u) => u.single('doc'), body: form({ name: 'doc', filename: 'plain.txt', filenameStar: "UTF-8''fancy%C3%A9.txt", data: 'f' }) },
  { name: 'WHATWG escapes %22 %0A %0D in names and filenames', mount: (u) => u.any(), body: form(field('q%22name', '1'), field('line%0Abreak', '2'), file('f%22ile', 'a%22b%0Ac%0Dd.txt', 'esc')) },
  { name: 'a literal percent in a filename', mount: (u) => u.array('doc'), body: form(file('doc', '50%.pdf', 'p'), file('doc', '100%25.txt', 'q')) },
  { name: 'preservePath unset: folders stripped', mount: (u) => u.array('doc'), body: form(file('doc', 'dir/sub/file.txt', 'a'), file('doc', 'C:\\Users\\x\\win.txt', 'b'), file('doc', '../../etc/passwd', 'c')) },
  { name: 'preservePath: folders kept', options: () => ({ preservePath: true }), mount: (u) => u.array('doc'), body: form(file('doc', 'dir/sub/file.txt', 'a'), file('doc', 'C:\\Users\\x\\win.txt', 'b'), file('doc', '../../etc/passwd', 'c')) },
  {
    name: 'file without Content-Type; with Content-Transfer-Encoding',
    mount: (u) => u.array('doc'),
    body: form({ name: 'doc', filename: 'n.bin', type: null, data: 'n' }, { name: 'doc', filename: 'e.txt', type: 'text/plain; charset=utf-8', data: 'e', headers: ['Content-Transfer-Encoding: binary'] })
  },

  // Storage.
  { name: 'disk storage (dest): files and fields', options: ({ dir }) => ({ dest: dir }), mount: (u) => u.any(), body: form(field('a', '1'), file('doc', 'one.txt', 'first file'), file('doc', 'two.txt', 'second')) },
  {
    name: 'diskStorage() with destination and filename functions',
    options: ({ dir, lib }) => ({ storage: lib.diskStorage({ destination: (_req, _f, cb) => cb(null, dir), filename: (_req, f, cb) => cb(null, f.fieldname + '-' + f.originalname) }) }),
    mount: (u) => u.fields([{ name: 'doc' }, { name: 'pic' }]),
    body: form(file('doc', 'one.txt', 'first'), file('pic', 'p.png', PNG, 'image/png'))
  },
  { name: 'disk storage: files written before a files limit are removed', options: ({ dir }) => ({ dest: dir, limits: { files: 1 } }), mount: (u) => u.array('doc'), body: form(file('doc', 'one.txt', 'first'), file('doc', 'two.txt', 'second')) },
  {
    name: 'disk storage: files written before a fileFilter error are removed',
    options: ({ dir }) => ({ dest: dir, fileFilter: (_req: unknown, f: FileInfo, cb: FilterCallback) => f.originalname === 'bad.txt' ? cb(new Error('user: bad file')) : cb(null, true) }),
    mount: (u) => u.array('doc'),
    body: form(file('doc', 'good.txt', 'good'), field('mid', 'm'), file('doc', 'bad.txt', 'bad'))
  },
  { name: 'memory storage: a large file (3 MiB)', mount: (u) => u.single('big'), body: form(field('a', '1'), file('big', 'big.bin', LARGE, 'application/octet-stream')), timeoutMs: 8000 },
  { name: 'disk storage: a large file (3 MiB)', options: ({ dir }) => ({ dest: dir }), mount: (u) => u.single('big'), body: form(file('big', 'big.bin', LARGE, 'application/octet-stream'), field('a', '1')), timeoutMs: 8000 },
  { name: "a user's engine: stored as it says", options: () => ({ storage: userEngine({}) }), mount: (u) => u.array('doc'), body: form(file('doc', 'a.txt', 'aaa'), file('doc', 'b.txt', 'bb')) },
  { name: "a user's engine failing in _handleFile", options: () => ({ storage: userEngine({ failHandle: true }) }), mount: (u) => u.array('doc'), body: form(file('doc', 'a.txt', 'aaa'), field('z', 'z')) },
  { name: "a user's engine failing to remove: storageErrors", options: () => ({ storage: userEngine({ failRemove: true }), limits: { files: 1 } }), mount: (u) => u.array('doc'), body: form(file('doc', 'a.txt', 'aaa'), file('doc', 'b.txt', 'bb')) },

  // fileFilter.
  { name: 'fileFilter accepts (sync)', options: () => ({ fileFilter: (_r: unknown, _f: unknown, cb: FilterCallback) => cb(null, true) }), mount: (u) => u.array('doc'), body: form(file('doc', 'a.txt', 'a'), file('doc', 'b.txt', 'b')) },
  {
    name: 'fileFilter skips some files (sync)',
    options: () => ({ fileFilter: (_r: unknown, f: FileInfo, cb: FilterCallback) => cb(null, !f.originalname.endsWith('.exe')) }),
    mount: (u) => u.array('doc', 2),
    body: form(file('doc', 'a.txt', 'a'), file('doc', 'virus.exe', 'MZ'), file('doc', 'b.txt', 'b'))
  },
  {
    name: 'fileFilter answers later (async accept and skip)',
    options: () => ({ fileFilter: (_r: unknown, f: FileInfo, cb: FilterCallback) => { setImmediate(cb, null, f.originalname !== 'skip.txt') } }),
    mount: (u) => u.any(),
    body: form(file('doc', 'keep.txt', 'k'), file('doc', 'skip.txt', 's'), field('a', '1'), file('pic', 'keep2.txt', 'k2'))
  },
  { name: 'fileFilter calls back with an error', options: () => ({ fileFilter: (_r: unknown, _f: unknown, cb: FilterCallback) => cb(new Error('user: refused')) }), mount: (u) => u.single('doc'), body: form(field('a', '1'), file('doc', 'a.txt', 'a'), field('b', '2')) },
  { name: 'fileFilter calls back with an error later', options: () => ({ fileFilter: (_r: unknown, _f: unknown, cb: FilterCallback) => { setTimeout(cb, 5, new Error('user: refused later')) } }), mount: (u) => u.single('doc'), body: form(file('doc', 'a.txt', 'a')) },
  { name: 'fileFilter throws', options: () => ({ fileFilter: () => { throw new Error('user: filter threw') } }), mount: (u) => u.single('doc'), body: form(file('doc', 'a.txt', 'a')), userThrows: true, timeoutMs: 300 },

  // Limits: just under, at, and just over each.
  ...limitCases('fieldNameSize', 5, (n) => form(...names(2, n))),
  ...limitCases('fieldSize', 8, (n) => form(field('a', 'ok'), field('b', x(n)))),
  ...limitCases('fields', 2, (n) => form(...Array.from({ length: n }, (_, i) => field('f' + i, 'v')))),
  ...limitCases('fileSize', 10, (n) => form(file('doc', 'a.txt', 'small'), file('doc', 'b.txt', x(n)), field('after', '1'))),
  ...limitCases('files', 2, (n) => form(...Array.from({ length: n }, (_, i) => file('doc', i + '.txt', 'f' + i)), field('after', '1'))),
  ...limitCases('parts', 3, (n) => form(...Array.from({ length: n }, (_, i) => i % 2 ? file('doc', i + '.txt', 'f') : field('f' + i, 'v')))),
  // busboy's multipart reader ignores limits.headerPairs (multer passes it on): a part keeps its first 1,999 header pairs.
  ...limitCases('headerPairs', 3, (n) => form(fileWithHeaders(n - 2))),
  ...([1999, 2000, 2001] as const).map((n): Case => ({ name: `${n} header pairs in a part (busboy's fixed bound)`, mount: (u) => u.any(), body: form(fileWithHeaders(n - 2)) })),
  { name: 'limits as a function of the request', options: () => ({ limits: (req: FakeRequest) => ({ files: req.headers['content-type'].includes(BOUNDARY) ? 1 : 9 }) }), mount: (u) => u.any(), body: form(file('a', 'a.txt', 'a'), file('b', 'b.txt', 'b')) },
  { name: 'fieldNestingDepth passed', options: () => ({ limits: { fieldNestingDepth: 1 } }), mount: (u) => u.none(), body: form(field('a[b]', '1'), field('a[b][c]', '2')) },
  { name: 'fieldArrayIndexLimit passed', options: () => ({ limits: { fieldArrayIndexLimit: 3 } }), mount: (u) => u.none(), body: form(field('a[3]', '1'), field('a[4]', '2')) },

  // Malformed requests.
  { name: 'no boundary in Content-Type', contentType: 'multipart/form-data', mount: (u) => u.single('doc'), body: form(field('a', '1')) },
  { name: 'a boundary the body does not use', contentType: formType('SomethingElse'), mount: (u) => u.single('doc'), body: form(field('a', '1')) },
  { name: 'body cut in the middle of a file', mount: (u) => u.single('doc'), body: form(field('a', '1'), file('doc', 'a.txt', x(200))).subarray(0, 300) },
  { name: 'body cut in the middle of a header block', mount: (u) => u.none(), body: form(field('a', '1'), field('b', '2')).subarray(0, BOUNDARY.length + 120) },
  { name: 'no closing delimiter', mount: (u) => u.single('doc'), body: buildForm([field('a', '1'), file('doc', 'a.txt', 'complete')], { close: false }) },
  { name: 'garbage body', mount: (u) => u.any(), body: GARBAGE },
  { name: 'malformed part header', mount: (u) => u.any(), body: form(field('a', '1'), { raw: 'Content-Disposition form-data no colon\r\n\r\nx' }) },
  { name: 'empty body (0 bytes)', mount: (u) => u.any(), body: Buffer.alloc(0) },
  { name: 'a non-multipart Content-Type passes through unread', contentType: 'application/json', mount: (u) => u.any(), body: Buffer.from('{"a":1}'), recordStream: true },
  { name: 'a non-multipart request keeps the req.body an earlier parser set', contentType: 'text/plain', presetBody: () => ({ parsedBefore: true }), mount: (u) => u.single('doc'), body: Buffer.from('plain text'), recordStream: true },
  { name: 'multipart/mixed is read as well', contentType: 'multipart/mixed; boundary=' + BOUNDARY, mount: (u) => u.any(), body: form(field('a', '1'), file('f', 'f.txt', 'mixed')) }
]

/** The cases of one limit: the body needs `limit - 1`, `limit`, then `limit + 1`. */
function limitCases (key: string, limit: number, bodyNeeding: (n: number) => Buffer): Case[] {
  return ([['just under', limit - 1], ['at', limit], ['just over', limit + 1]] as const).map(([where, n]) => ({
    name: `limits.${key} = ${limit}: ${where} (${n})`,
    options: () => ({ limits: { [key]: limit } }),
    mount: (u: Upload) => u.any(),
    body: bodyNeeding(n)
  }))
}

/** An outcome in a line: the error's code (or message), or the body and the files. */
function summarize (outcome: Outcome): unknown {
  if (outcome.hang) return 'hang'
  if (outcome.error) return { error: outcome.error.code ?? outcome.error.message, body: outcome.body }
  return { body: outcome.body, file: outcome.file, files: outcome.files, disk: outcome.disk, stream: outcome.stream }
}

// ---------------------------------------------------------------------------------------------------------------
// The suite.

const savedHandlers: Array<(...args: unknown[]) => void> = []

describe('multer\'s tested topics, as PassThrough requests, through multer 2.5.0 and bodykit/multer', () => {
  before(() => {
    // Scoped to this suite: the uncaught exceptions of each run are counted, not left to the runner.
    savedHandlers.push(...process.listeners('uncaughtException') as Array<(...args: unknown[]) => void>)
    process.removeAllListeners('uncaughtException')
    process.on('uncaughtException', countUncaught)
  })
  after(() => {
    process.removeListener('uncaughtException', countUncaught)
    for (const handler of savedHandlers) process.on('uncaughtException', handler)
  })

  for (const testCase of cases) {
    it(testCase.name, { timeout: 30000 }, async (t) => {
      const variants = SHAPES.flatMap((shape) => FRAMINGS.map((framing) => [shape, framing] as const))
      const outcomes: Record<LibraryName, Outcome[]> = { multer: [], bodykit: [] }
      const uncaughtBy: Record<LibraryName, string[]> = { multer: [], bodykit: [] }
      for (const libName of ['multer', 'bodykit'] as const) {
        uncaught = []
        outcomes[libName] = await Promise.all(variants.map(([shape, framing]) => runOnce(libName, testCase, shape, framing)))
        uncaughtBy[libName] = uncaught.map(String)
      }

      // What the case exercises, as multer answered its first shape (shown in the TAP output).
      t.diagnostic('multer: ' + JSON.stringify(summarize(outcomes.multer[0])))
      const problems: string[] = []
      variants.forEach(([shape, framing], i) => {
        let theirs = outcomes.multer[i]
        let ours = outcomes.bodykit[i]
        // After a throw from the user's filter, multer is left mid-write: only whether it still calls next is compared,
        // and where the throw went is counted below (an uncaught exception or out of the writer's write()).
        if (testCase.userThrows) [theirs, ours] = [theirs, ours].map((o) => ({ hang: o.hang, nextCalls: o.nextCalls, error: o.error }) as Outcome)
        // Where multer hangs, bodykit answers with an error instead (once): the request is never left without an answer.
        if (testCase.userThrows && theirs.hang && !ours.hang && ours.nextCalls === 1 && ours.error !== null) return
        const expected = expectedFromMulter(theirs, ours)
        try {
          assert.deepStrictEqual(ours, expected)
        } catch {
          problems.push(`[${shape}, ${framing}]\n    multer:  ${JSON.stringify(theirs)}\n    bodykit: ${JSON.stringify(ours)}`)
        }
      })
      if (testCase.userThrows) {
        // A filter that throws escapes multer once per request: as an uncaught exception, or out of the writer's write().
        // Deliberate difference (docs/multer.md): bodykit passes the throw to next, once, as it was thrown.
        const escaped = (name: LibraryName): number => uncaughtBy[name].length + outcomes[name].filter((o) => o.writeThrew !== null).length
        if (escaped('multer') === 0) problems.push('the filter\'s throw no longer escapes from multer: the case tests nothing')
        if (escaped('bodykit') !== 0) problems.push(`the filter's throw escaped ${escaped('bodykit')} times from bodykit`)
        for (const ours of outcomes.bodykit) {
          if (ours.nextCalls !== 1 || ours.error === null) problems.push(`bodykit did not pass the throw to next once: ${JSON.stringify(ours)}`)
        }
      } else if (uncaughtBy.bodykit.length > 0) {
        problems.push(`uncaught exceptions in bodykit: ${uncaughtBy.bodykit.length}: ${[...new Set(uncaughtBy.bodykit)].join(' | ')}`)
      }
      if (!testCase.userThrows && uncaughtBy.multer.length > 0) {
        problems.push(`uncaught exceptions in multer itself: ${[...new Set(uncaughtBy.multer)].join(' | ')}`)
      }
      if (problems.length > 0) assert.fail(`${problems.length} difference(s) in "${testCase.name}":\n  ${problems.join('\n  ')}`)
    })
  }
})
