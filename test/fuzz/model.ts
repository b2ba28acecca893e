// The fuzz model: random requests (type, charset, encoding, length, bytes, chunking, aborts) and the verdict against body-parser.
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import fc from 'fast-check'
import { specErrorTypes, type Entry, type HttpErrorLike, type Middleware, type ParserName } from '../hostile/helpers'

/** Total property runs for a file: BODYKIT_FUZZ_RUNS (default 3000) times its share. */
export function runsFor (share: number): number {
  const total = Number(process.env.BODYKIT_FUZZ_RUNS) || 3000
  return Math.max(10, Math.round(total * share))
}

export type Framing = 'exact' | 'chunked' | 'under' | 'over' | 'garbage'
/** bodykit's poisoning option, or undefined when left out. */
export type Action = 'ignore' | 'remove' | 'error' | undefined
export type Mangle = 'none' | 'plain' | 'truncate' | 'trailing' | 'flip' | 'bomb'

export interface FuzzInput {
  parser: ParserName
  limit: number
  inflate: boolean
  verify: boolean
  flavour: number
  contentType: string | undefined
  contentEncoding: string | undefined
  payload: Buffer
  mangle: Mangle
  framing: Framing
  garbageLength: string
  splits: number[]
  abortAfter: number | null
  gaps: boolean
  /** bodykit-only options (body-parser gets none of them): with 'ignore' or left out, its result must be body-parser's. */
  rawBody: boolean
  onProtoPoisoning: Action
  onConstructorPoisoning: Action
}

const contentTypes = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-16', 'application/json; charset=utf-16le',
  'application/json; charset=latin1', 'application/json; charset=bogus', 'application/vnd.api+json', 'APPLICATION/JSON',
  'application/json ; charset="utf-8"', 'application/json;charset', 'application/json; charset=utf-8; x=y', 'application/json garbage',
  'text/plain', 'text/plain; charset=iso-8859-1', 'text/plain; charset=utf-16le', 'text/plain; charset=x-bogus', 'text/plain; charset=koi8-r',
  'text/html', 'application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=iso-8859-1',
  'application/x-www-form-urlencoded; charset=utf-16', 'application/x-www-form-urlencoded; charset=UTF-8', 'application/octet-stream',
  'application/octet-stream; charset=utf-8', 'image/png', '*/*', 'application/*', 'multipart/form-data; boundary=x', ''
]
const encodings = [undefined, 'identity', 'gzip', 'gzip', 'deflate', 'deflate', 'br', 'br', 'zstd', 'GZIP', 'Deflate', 'x-gzip', 'gzip, deflate', 'compress', '']
const garbageLengths = ['abc', '', '1e3', '-1', ' 12', '0x10', '3.5', '99999999999']

const formPayload = fc.array(fc.tuple(fc.constantFrom('a', 'b[c]', 'd[]', '__proto__[x]', 'e[0][f]', 'utf8', 'x.y', '%E2%9C%93', ''), fc.constantFrom('1', '', '%', '%FF', '+', '✓', '%E2%9C%93', 'a%20b', '&#9786;')), { maxLength: 8 })
  .map((pairs) => pairs.map(([k, v]) => k + '=' + v).join('&'))

const payload = fc.oneof(
  fc.json({ maxDepth: 3 }).map((s) => Buffer.from(s)),
  formPayload.map((s) => Buffer.from(s)),
  fc.string({ maxLength: 80 }).map((s) => Buffer.from(s)),
  fc.string({ unit: 'binary', maxLength: 80 }).map((s) => Buffer.from(s, 'utf16le')),
  fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
  fc.constantFrom(Buffer.from('{"a":1}'), Buffer.from('[]'), Buffer.from('a=1&b=2'), Buffer.from('\ufeff{"bom":true}'), Buffer.alloc(0)),
  // Prototype-poisoning keys, plain, escaped, nested, and look-alikes that are not poisoning.
  fc.constantFrom(
    '{"a":1,"__proto__":{"x":1}}', '[{"b":{"\\u005f_proto__":null}}]', '{"constructor":{"prototype":{"y":2}},"z":[{"__proto__":[]}]}',
    '{"constructor":"c","p":{"constructor":{"name":"n"}}}', '{"__proto__":{"constructor":{"prototype":{}}}}', '"__proto__"', '{"x":"constructor"}'
  ).map((s) => Buffer.from(s))
)
const action = fc.constantFrom<Action>(undefined, 'ignore', 'remove', 'error')

export const fuzzInput: fc.Arbitrary<FuzzInput> = fc.record({
  parser: fc.constantFrom<ParserName>('json', 'raw', 'text', 'urlencoded'),
  limit: fc.constantFrom(0, 1, 20, 100, 1000, 4096, 102400),
  inflate: fc.oneof({ weight: 5, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  verify: fc.boolean(),
  flavour: fc.nat(3),
  contentType: fc.oneof({ weight: 8, arbitrary: fc.constantFrom<string | undefined>(...contentTypes, undefined) }, { weight: 1, arbitrary: fc.string({ maxLength: 30 }) }),
  contentEncoding: fc.constantFrom(...encodings),
  payload,
  mangle: fc.constantFrom<Mangle>('none', 'none', 'none', 'plain', 'truncate', 'trailing', 'flip', 'bomb'),
  framing: fc.constantFrom<Framing>('exact', 'exact', 'exact', 'chunked', 'chunked', 'under', 'over', 'garbage'),
  garbageLength: fc.constantFrom(...garbageLengths),
  splits: fc.array(fc.nat(400), { maxLength: 6 }),
  abortAfter: fc.option(fc.nat(6), { freq: 6 }),
  gaps: fc.boolean(),
  rawBody: fc.boolean(),
  onProtoPoisoning: action,
  onConstructorPoisoning: action
})

// JSON objects built from keys that poison (plain or `\u`-escaped) and keys that only look alike.
const poisonKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'a', '\\u005f_proto__', 'constructo\\u0072', 'proto')
const { object: poisonedJson } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constantFrom('1', 'null', '"x"', '"__proto__"'), tie('object'), tie('array')),
  object: fc.array(fc.tuple(poisonKey, tie('value')), { maxLength: 4 }).map((pairs) => '{' + pairs.map(([key, value]) => `"${key}":${String(value)}`).join(',') + '}'),
  array: fc.array(tie('value'), { maxLength: 3 }).map((items) => '[' + items.join(',') + ']')
}))

/** Well-formed json requests whose bodies are full of prototype-poisoning keys, for the poisoning options. */
export const poisonInput: fc.Arbitrary<FuzzInput> = fc.record({
  input: fuzzInput,
  payload: poisonedJson.map((text) => Buffer.from(text)),
  contentEncoding: fc.constantFrom(undefined, 'gzip'),
  framing: fc.constantFrom<Framing>('exact', 'chunked')
}).map(({ input, payload, contentEncoding, framing }) => ({
  ...input, parser: 'json' as const, contentType: 'application/json', payload, contentEncoding, framing, mangle: 'none' as const, abortAfter: null, limit: 102400, inflate: true
}))

function compress (encoding: string, data: Buffer): Buffer {
  switch (encoding) {
    case 'gzip': case 'x-gzip': return zlib.gzipSync(data)
    case 'deflate': return zlib.deflateSync(data)
    case 'br': return zlib.brotliCompressSync(data)
    case 'zstd': {
      const zstd = (zlib as unknown as { zstdCompressSync?: (b: Buffer) => Buffer }).zstdCompressSync
      return zstd ? zstd(data) : data
    }
  }
  return data
}

/** The bytes sent on the wire, the headers, and the chunks they arrive in. */
export interface Wire { headers: Record<string, string>, body: Buffer, chunks: Buffer[], declared: number | null }

export function toWire (input: FuzzInput): Wire {
  const encoding = (input.contentEncoding ?? 'identity').toLowerCase()
  let body = input.payload
  if (input.mangle === 'bomb') body = compress(encoding, Buffer.alloc(1024 * 1024))
  else if (input.mangle !== 'plain') body = compress(encoding, body)
  if (input.mangle === 'truncate') body = body.subarray(0, Math.floor(body.length / 2))
  if (input.mangle === 'trailing') body = Buffer.concat([body, Buffer.from('trailing bytes')])
  if (input.mangle === 'flip' && body.length) {
    body = Buffer.from(body)
    body[body.length >> 1] ^= 0x5a
  }
  const headers: Record<string, string> = {}
  if (input.contentType !== undefined) headers['content-type'] = input.contentType
  if (input.contentEncoding !== undefined) headers['content-encoding'] = input.contentEncoding
  let declared: number | null = body.length
  if (input.framing === 'chunked') {
    headers['transfer-encoding'] = 'chunked'
    declared = null
  } else if (input.framing === 'under') declared = Math.max(0, body.length - 1 - (input.splits[0] ?? 0) % 8)
  else if (input.framing === 'over') declared = body.length + 1 + (input.splits[0] ?? 0) % 8
  if (input.framing === 'garbage') {
    headers['content-length'] = input.garbageLength
    // As raw-body reads a Content-Length (a real HTTP parser would have refused these).
    declared = Number.isNaN(Number(input.garbageLength)) ? null : parseInt(input.garbageLength, 10)
  } else if (declared !== null) headers['content-length'] = String(declared)
  const cuts = [...new Set(input.splits.map((s) => s % (body.length + 1)))].sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let from = 0
  for (const cut of [...cuts, body.length]) {
    if (cut > from) chunks.push(body.subarray(from, cut))
    from = Math.max(from, cut)
  }
  return { headers, body, chunks, declared }
}

/** The middleware for an input, cached per entry, role and options (factories are not free, 1.x warns). */
const cache = new Map<string, Middleware>()
/** Tells apart factory sets of one entry (the HTTP/2 suites wrap them with an option of their own). */
const factoryIds = new WeakMap<object, number>()
let nextFactoryId = 0
function factoryId (factories: object): number {
  let id = factoryIds.get(factories)
  if (id === undefined) factoryIds.set(factories, id = nextFactoryId++)
  return id
}
const noVerify = (): void => {}
/** A verify that only records the Buffer it got, to check that req.rawBody is that very Buffer. */
const recordVerified = (req: { verified?: Buffer }, _res: unknown, buf: Buffer): void => { req.verified = buf }

export function middlewareFor (entry: Entry, role: 'bodykit' | 'reference', input: FuzzInput): Middleware {
  const options: Record<string, unknown> = { limit: input.limit, inflate: input.inflate }
  if (input.verify) options.verify = noVerify
  if (input.parser === 'urlencoded') options.extended = input.flavour % 2 === 0
  if (input.parser === 'json') options.strict = input.flavour !== 1
  if (input.parser === 'text' && input.flavour === 2) options.defaultCharset = 'iso-8859-1'
  if (input.flavour === 3) options.type = input.parser === 'raw' ? '*/*' : ['application/*', 'text/*']
  if (role === 'bodykit') {
    if (input.verify) options.verify = recordVerified
    if (input.rawBody) options.rawBody = true
    if (input.parser === 'json') Object.assign(options, { onProtoPoisoning: input.onProtoPoisoning, onConstructorPoisoning: input.onConstructorPoisoning })
  }
  const key = [entry.name, role, factoryId(entry[role]), input.parser, JSON.stringify(options), input.verify].join('|')
  let mw = cache.get(key)
  if (!mw) {
    mw = entry[role][input.parser](options)
    cache.set(key, mw)
  }
  return mw
}

/** What a middleware did with one request. */
export interface Result {
  calls: number
  err?: HttpErrorLike
  body?: unknown
  /** the body was read to its end */
  consumed?: boolean
  /** `req.rawBody`, the Buffer verify got, and whether the parser read the body (not skipped), when next ran */
  rawBody?: unknown
  verified?: unknown
  parsed?: boolean
}

/** Records on `result` what the new options leave on the request when next runs. */
export function observeRequest (entry: Entry, req: object, result: Result): void {
  const r = req as { rawBody?: unknown, verified?: unknown, body?: unknown, _body?: unknown }
  result.rawBody = r.rawBody
  result.verified = r.verified
  // Without a reviver a parsed body is never undefined (default entry); legacy flags every body it reads.
  result.parsed = entry.name === 'legacy' ? r._body === true : r.body !== undefined
}

const FORBIDDEN = 'Object contains forbidden prototype property'

/**
 * body-parser's result as it must look under bodykit's own options: a json body with poisoning keys has
 * them removed, or becomes fastify's 400, by an oracle written from the option's documentation.
 */
export function expectedUnderOptions (input: FuzzInput, reference: Result): Result {
  if (input.parser !== 'json' || reference.err || reference.calls !== 1) return reference
  const proto = input.onProtoPoisoning ?? 'ignore'
  const ctor = input.onConstructorPoisoning ?? 'ignore'
  if (proto === 'ignore' && ctor === 'ignore') return reference
  const clean = (node: unknown): unknown => {
    if (node === null || typeof node !== 'object') return node
    if (Array.isArray(node)) return node.map(clean)
    const out = Object.create(Object.getPrototypeOf(node)) as Record<string, unknown>
    for (const key of Object.keys(node)) {
      const value = (node as Record<string, unknown>)[key]
      const action = key === '__proto__'
        ? proto
        : key === 'constructor' && value !== null && typeof value === 'object' && Object.hasOwn(value, 'prototype') ? ctor : 'ignore'
      if (action === 'error') throw new Error(FORBIDDEN)
      if (action === 'remove') continue
      Object.defineProperty(out, key, { value: clean(value), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  try {
    return { ...reference, body: clean(reference.body) }
  } catch {
    return { ...reference, body: undefined, err: { status: 400, type: 'entity.parse.failed', message: FORBIDDEN } as HttpErrorLike }
  }
}

/** rawBody: the very Buffer verify got, kept exactly when the body was read in full (verify and parse errors carry `body`). */
export function checkRawBody (input: FuzzInput, mine: Result): void {
  if (!input.rawBody) {
    assert.equal(mine.rawBody, undefined, 'rawBody set without the option')
    return
  }
  const raw = mine.rawBody
  if (raw !== undefined) assert.ok(Buffer.isBuffer(raw), 'rawBody is not a Buffer')
  if (mine.verified !== undefined) assert.equal(raw, mine.verified, 'rawBody is not the Buffer verify got')
  if (mine.err) assert.equal(raw !== undefined, 'body' in mine.err, 'rawBody kept on an error that did not follow a full read, or missing after one')
  else assert.equal(raw !== undefined, mine.parsed, 'rawBody must be set exactly when the body was parsed')
  if (!mine.err && input.parser === 'raw' && raw !== undefined) assert.equal(raw, mine.body, 'raw(): rawBody and body are one Buffer')
}

const extraProps = ['expected', 'length', 'limit', 'received', 'charset', 'encoding']

function describeError (err: HttpErrorLike): Record<string, unknown> {
  const out: Record<string, unknown> = { status: err.status, type: err.type, message: err.message }
  for (const key of extraProps) if (key in err) out[key] = err[key]
  return out
}

/** A faithful description of a parsed body: own keys, values, and the prototype of each object. */
export function shape (value: unknown): unknown {
  if (value === null || typeof value !== 'object') return [typeof value, value]
  if (Buffer.isBuffer(value)) return ['Buffer', value.toString('hex')]
  const proto = Object.getPrototypeOf(value)
  const kind = proto === null ? 'null' : proto === Object.prototype ? 'Object' : proto === Array.prototype ? 'Array' : 'other'
  return [kind, Reflect.ownKeys(value).map((key) => {
    const d = Object.getOwnPropertyDescriptor(value, key) as PropertyDescriptor
    return [String(key), 'value' in d ? shape(d.value) : 'accessor']
  })]
}

/**
 * The verdict: bodykit called next exactly once; its result is body-parser's (body, or error status, type,
 * message and extra props), except where issue 5 makes it stricter on a compressed body: a 413 when the
 * wire bytes or the declared length are over the limit, request.size.invalid when the length lies, and
 * request.aborted where body-parser never answers. Every error bodykit gives has a spec `type` (or is
 * the zlib error body-parser gives too).
 */
export function checkVerdict (input: FuzzInput, wire: Wire, delivered: number, mine: Result, bodyParsers: Result): void {
  assert.equal(mine.calls, 1, 'bodykit must call next exactly once')
  assert.ok(bodyParsers.calls <= 1, 'body-parser called next twice')
  checkRawBody(input, mine)
  const reference = expectedUnderOptions(input, bodyParsers)
  if (mine.err) {
    const e = mine.err
    assert.ok(e instanceof Error && typeof e.status === 'number', 'not an http error')
    const isZlib = e.type === undefined && e.status === 400 && typeof e.code === 'string'
    assert.ok((e.type !== undefined && specErrorTypes.has(e.type)) || isZlib, `unexpected error type ${String(e.type)} (${e.message})`)
  }
  const compressed = (input.contentEncoding ?? 'identity').toLowerCase() !== 'identity'
  if (compressed && !mine.err && mine.consumed) {
    assert.ok(delivered <= input.limit, `accepted a compressed body of ${delivered} bytes on the wire over limit ${input.limit}`)
  }
  if (compressed && mine.err && isStricter(input, wire, delivered, mine.err)) return
  if (reference.calls === 0) {
    assert.fail(`body-parser never called next; bodykit gave ${JSON.stringify(mine.err ? describeError(mine.err) : shape(mine.body))}`)
  }
  if (compressed && isInflatedTooLarge(mine.err, input.limit) && isInflatedTooLarge(reference.err, input.limit)) {
    // `received` on a 413 after inflation (docs/differences.md): body-parser counts the zlib output chunks read
    // so far, which depend on how the body was split on the wire; bodykit, inflating a small body at once,
    // gives the count for a body in one piece. Both are past `limit` by at most one 16 KiB chunk (checked
    // here); the rest of the error must be the same.
    assert.deepEqual({ ...describeError(mine.err as HttpErrorLike), received: 'past limit' }, { ...describeError(reference.err as HttpErrorLike), received: 'past limit' })
    return
  }
  if (reference.err || mine.err) {
    assert.deepEqual(mine.err ? describeError(mine.err) : { body: shape(mine.body) }, reference.err ? describeError(reference.err) : { body: shape(reference.body) })
    return
  }
  assert.deepEqual(shape(mine.body), shape(reference.body))
}

/** A 413 counted after inflation: `received` past `limit` by at most one 16 KiB zlib output chunk. */
function isInflatedTooLarge (err: HttpErrorLike | undefined, limit: number): boolean {
  const received = err?.received
  return err?.type === 'entity.too.large' && typeof received === 'number' && received > limit && received <= limit + 16 * 1024
}

function isStricter (input: FuzzInput, wire: Wire, delivered: number, err: HttpErrorLike): boolean {
  if (err.type === 'entity.too.large' && err.status === 413) {
    if ('expected' in err) return wire.declared !== null && err.expected === wire.declared && wire.declared > input.limit
    // A wire count only: a 413 counted after inflation must be body-parser's (issue 14 found this mask hiding one).
    return typeof err.received === 'number' && err.received > input.limit && err.received <= delivered && delivered > input.limit
  }
  if (err.type === 'request.size.invalid') return err.received === delivered && err.expected !== delivered
  if (err.type === 'request.aborted') return input.abortAfter !== null
  return false
}
