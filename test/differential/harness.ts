// Differential test harness: one node:http server per target, a raw TCP client,
// named request setups / option functions, and normalisation of what the
// application sees after a body-parser middleware ran.
//
// Run:   node --import tsx --test test/differential/*.test.ts
// Env:   BODYKIT_DIFF_SELF=1          compare each body-parser release with itself (harness check)
//        BODYKIT_DIFF_DUMP=/tmp/out   also write every outcome to /tmp/out.<variant>.json
import assert from 'node:assert/strict'
import { existsSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import net from 'node:net'
import path from 'node:path'
import { after, before, it } from 'node:test'
import type { Case, ParserKind, RequestSpec, Variant } from './corpus'
import { prefixVerdictOf } from '../fuzz/compressed-model'

// ---------------------------------------------------------------------------
// Entry table: which modules are compared. `reference` is the body-parser
// release whose behaviour is the oracle, `candidate` the module under test.
// Set BODYKIT_DIFF_SELF=1 to compare each reference with itself (harness
// development before src/ exists).
// ---------------------------------------------------------------------------
export const ENTRIES: Record<Variant, { reference: string, candidate: string }> = {
  default: { reference: 'body-parser', candidate: '../../src/index' },
  legacy: { reference: 'body-parser-1', candidate: '../../src/legacy' }
}

export const SELF_MODE = process.env.BODYKIT_DIFF_SELF === '1'

type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void
type Factory = (options?: unknown) => Middleware
export type ParserModule = Record<ParserKind, Factory>

const load = createRequire(__filename)

function pickFactories (mod: unknown): ParserModule {
  const m = mod as Record<string, unknown> & { default?: Record<string, unknown> }
  const source = typeof m.json === 'function' ? m : (m.default ?? m)
  return {
    json: source.json as Factory,
    raw: source.raw as Factory,
    text: source.text as Factory,
    urlencoded: source.urlencoded as Factory
  }
}

/** The entry module itself, as `require()` returns it. */
export function loadModule (variant: Variant, role: 'reference' | 'candidate'): unknown {
  const spec = role === 'candidate' && !SELF_MODE ? ENTRIES[variant].candidate : ENTRIES[variant].reference
  return load(spec)
}

export function loadEntry (variant: Variant, role: 'reference' | 'candidate'): ParserModule {
  return pickFactories(loadModule(variant, role))
}

export function describeTargets (variant: Variant): string {
  const candidate = SELF_MODE ? ENTRIES[variant].reference + ' (self mode)' : ENTRIES[variant].candidate
  return `${candidate} vs ${ENTRIES[variant].reference}`
}

/** True when the candidate entry module can be found on disk (or self mode). */
export function candidateAvailable (variant: Variant): boolean {
  if (SELF_MODE) return true
  const base = path.resolve(__dirname, ENTRIES[variant].candidate)
  return ['.ts', '.js', '/index.ts', '/index.js'].some((ext) => existsSync(base + ext))
}

// ---------------------------------------------------------------------------
// Named functions referenced from the (pure data) corpus.
// ---------------------------------------------------------------------------
type AnyReq = http.IncomingMessage & Record<string, unknown>

function verifyLog (req: AnyReq): unknown[] {
  if (!Array.isArray(req.__diffVerify)) req.__diffVerify = []
  return req.__diffVerify as unknown[]
}

function errorWith (message: string, props: Record<string, unknown>): Error {
  return Object.assign(new Error(message), props)
}

export const NAMED_FUNCTIONS: Record<string, (...args: never[]) => unknown> = {
  // verify(req, res, buf, encoding)
  verifyRecord: (req: AnyReq, res: http.ServerResponse, buf: unknown, encoding: unknown) => {
    verifyLog(req).push({ isBuffer: Buffer.isBuffer(buf), buf: serialise(buf), encoding: serialise(encoding), resIsResponse: res instanceof http.ServerResponse })
  },
  verifyReturnsFalse: () => false,
  verifyThrowPlain: () => { throw new Error('verify rejected the body') },
  verifyThrow401: () => { throw errorWith('not authorised', { status: 401 }) },
  verifyThrow500: () => { throw errorWith('verify broke', { status: 500 }) },
  verifyThrowType: () => { throw errorWith('custom verify failure', { type: 'custom.verify.type' }) },
  verifyThrowTypeAndStatus: () => { throw errorWith('teapot', { type: 'custom.teapot', status: 418, extra: 'kept' }) },
  verifyThrowString: () => { throw 'a string was thrown' },
  verifyThrowPlainObject: () => { throw { status: 401, message: 'object thrown' } },
  verifyThrowIfFirstByteIsX: (_req: AnyReq, _res: unknown, buf: Buffer) => {
    if (buf.length > 0 && buf[0] === 0x78) throw new Error('first byte is x')
  },
  // reviver(key, value)
  upperCaseStrings: (_k: string, v: unknown) => typeof v === 'string' ? v.toUpperCase() : v,
  dropKeyA: (k: string, v: unknown) => k === 'a' ? undefined : v,
  reviverThrows: (k: string, v: unknown) => { if (k === 'boom') throw new Error('reviver exploded'); return v },
  reviverThrowsNull: (k: string, v: unknown) => { if (k === 'boom') throw null; return v },
  reviverThrowsString: (k: string, v: unknown) => { if (k === 'boom') throw 'reviver string'; return v },
  reviverThrowsWithProps: (k: string, v: unknown) => { if (k === 'boom') throw errorWith('reviver props', { status: 422, type: 'custom.reviver', code: 'X' }); return v },
  // type(req)
  fnAlwaysTrue: () => true,
  fnAlwaysFalse: () => false,
  fnReturnsString: () => 'yes',
  fnReturnsZero: () => 0,
  fnHasXParseHeader: (req: AnyReq) => req.headers['x-parse'] === '1',
  fnThrows: () => { throw new Error('type function threw') }
}

/** Replace option values that name a function in NAMED_FUNCTIONS by that function. */
export function resolveOptions (options: unknown): unknown {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) return options
  const out: Record<string, unknown> = {}
  for (const [k, v] of Object.entries(options)) {
    out[k] = (k === 'verify' || k === 'reviver' || k === 'type') && typeof v === 'string' && Object.hasOwn(NAMED_FUNCTIONS, v)
      ? NAMED_FUNCTIONS[v]
      : v
  }
  return out
}

type Setup = (req: AnyReq, res: http.ServerResponse) => void | Promise<void>

export const SETUPS: Record<string, Setup> = {
  setEncodingUtf8: (req) => { req.setEncoding('utf8') },
  presetBody: (req) => { req.body = { preset: 1 } },
  presetBodyNull: (req) => { req.body = null },
  presetBodyString: (req) => { req.body = 'already' },
  presetBodyUndefined: (req) => { req.body = undefined },
  flagParsed: (req) => { req._body = true },
  consumeStream: (req) => new Promise<void>((resolve) => {
    req.on('data', () => {})
    req.on('end', () => resolve())
    req.on('error', () => resolve())
  }),
  pauseStream: (req) => { req.pause() }
}

// ---------------------------------------------------------------------------
// Normalisation
// ---------------------------------------------------------------------------
function protoKind (v: object): string {
  const p = Object.getPrototypeOf(v) as object | null
  if (p === null) return 'null'
  if (p === Object.prototype) return 'Object'
  if (p === Array.prototype) return 'Array'
  if (p === Buffer.prototype) return 'Buffer'
  const ctor = (p as { constructor?: { name?: unknown } }).constructor
  return 'other:' + String(ctor?.name)
}

/** Faithful, key-order preserving, JSON-safe description of a value. */
export function serialise (v: unknown, seen: Set<object> = new Set()): unknown {
  if (v === undefined) return ['undefined']
  if (v === null) return ['null']
  switch (typeof v) {
    case 'string': return ['string', v]
    case 'number': return ['number', Object.is(v, -0) ? '-0' : String(v)]
    case 'boolean': return ['boolean', v]
    case 'bigint': return ['bigint', String(v)]
    case 'symbol': return ['symbol', String(v)]
    case 'function': return ['function', (v as { name?: string }).name ?? '']
  }
  const o = v as object
  if (Buffer.isBuffer(o)) return ['Buffer', protoKind(o), o.toString('base64')]
  if (o instanceof Uint8Array) return ['Uint8Array', protoKind(o), Buffer.from(o).toString('base64')]
  if (seen.has(o)) return ['circular']
  seen.add(o)
  const entries: unknown[] = []
  for (const key of Object.keys(o)) {
    const d = Object.getOwnPropertyDescriptor(o, key)
    entries.push([key, d && 'value' in d ? serialise(d.value, seen) : ['accessor']])
  }
  seen.delete(o)
  if (Array.isArray(o)) return ['array', protoKind(o), o.length, entries]
  return ['object', protoKind(o), entries]
}

export function describeError (err: unknown): unknown {
  if (err === null || typeof err !== 'object') return { nonObject: serialise(err) }
  const e = err as Record<string, unknown>
  const props: Record<string, unknown> = {}
  for (const key of Object.keys(e).sort()) props[key] = serialise(e[key])
  return {
    isError: err instanceof Error,
    constructor: String((e.constructor as { name?: unknown } | undefined)?.name),
    name: serialise(e.name),
    message: serialise(e.message),
    status: serialise(e.status),
    statusCode: serialise(e.statusCode),
    expose: serialise(e.expose),
    type: serialise(e.type),
    ownEnumerable: props,
    ownNames: Object.getOwnPropertyNames(e).sort()
  }
}

function describeBody (req: AnyReq): unknown {
  const present = 'body' in req
  const b = req.body
  return {
    present,
    own: Object.hasOwn(req, 'body'),
    typeof: typeof b,
    isBuffer: Buffer.isBuffer(b),
    proto: b !== null && typeof b === 'object' ? protoKind(b) : null,
    value: present ? serialise(b) : ['absent']
  }
}

export interface ServerRecord {
  factoryError?: unknown
  setupError?: unknown
  nextCalls: number
  nextArgs?: string
  /** next() was called before the middleware returned */
  nextSync?: boolean
  error?: unknown
  thrown?: unknown
  body: unknown
  flags: unknown
  stream: string | boolean | null
  verify: unknown
  headersSent: boolean
  responseHeaders: string[]
}

function snapshot (req: AnyReq, res: http.ServerResponse): Omit<ServerRecord, 'nextCalls'> {
  return {
    body: describeBody(req),
    flags: {
      _body: Object.hasOwn(req, '_body') ? serialise(req._body) : ['absent'],
      // Not compared: body-parser 1.x leaves an own `req.length = undefined` behind (an artefact of how it
      // hands the length to raw-body); bodykit/legacy adds nothing to req but body and _body. docs/differences.md.
    },
    // Did the middleware leave the stream untouched (null), pause it (false), or read it off ('read off')?
    // An app that reads the body itself after a skip depends on this. Whether the rest was already read
    // off when next(err) ran is not compared: bodykit answers a 413 before the body ends (docs/security.md).
    stream: req.destroyed ? 'destroyed' : req.readableEnded || req.readableFlowing === true ? 'read off' : req.readableFlowing,
    verify: req.__diffVerify === undefined ? ['not called'] : req.__diffVerify,
    headersSent: res.headersSent,
    responseHeaders: res.getHeaderNames().sort()
  }
}

// ---------------------------------------------------------------------------
// Servers
// ---------------------------------------------------------------------------
export interface TargetServer {
  port: number
  records: Map<string, ServerRecord>
  close: () => Promise<void>
}

function buildMiddleware (mod: ParserModule, c: Case): Middleware {
  const chain = c.chain ?? [{ parser: c.parser, options: c.options }]
  const mws = chain.map((step) => {
    const factory = mod[step.parser]
    return step.options === undefined ? factory() : factory(resolveOptions(step.options))
  })
  return (req, res, next) => {
    const run = (i: number): void => {
      if (i >= mws.length) { next(); return }
      mws[i](req, res, (err?: unknown) => {
        if (err !== undefined && err !== null) next(err)
        else run(i + 1)
      })
    }
    run(0)
  }
}

export async function startServer (mod: ParserModule, cases: readonly Case[]): Promise<TargetServer> {
  const records = new Map<string, ServerRecord>()
  const cache = new Map<number, { mw?: Middleware, factoryError?: unknown }>()

  const getMiddleware = (index: number): { mw?: Middleware, factoryError?: unknown } => {
    let entry = cache.get(index)
    if (!entry) {
      try {
        entry = { mw: buildMiddleware(mod, cases[index]) }
      } catch (err) {
        entry = { factoryError: describeError(err) }
      }
      cache.set(index, entry)
    }
    return entry
  }

  const respond = (id: string, res: http.ServerResponse, record: ServerRecord): void => {
    records.set(id, record)
    try {
      if (!res.headersSent) {
        res.statusCode = 200
        res.setHeader('x-diff-app', '1')
        res.setHeader('content-type', 'application/json')
      }
      res.end(JSON.stringify(record))
    } catch {
      // the socket may already be gone (abort cases); the record is what matters
    }
  }

  const handle = async (req: AnyReq, res: http.ServerResponse): Promise<void> => {
    const id = String(req.headers['x-case-id'] ?? '')
    const index = Number(id.split('.')[0])
    const c = cases[index]
    if (!c) { res.statusCode = 404; res.end(); return }
    const { mw, factoryError } = getMiddleware(index)
    if (!mw) {
      respond(id, res, { factoryError, nextCalls: 0, ...snapshot(req, res) })
      return
    }
    try {
      for (const name of c.setup ?? []) await SETUPS[name](req, res)
    } catch (err) {
      respond(id, res, { setupError: describeError(err), nextCalls: 0, ...snapshot(req, res) })
      return
    }
    let nextCalls = 0
    let returned = false
    let first: Omit<ServerRecord, 'nextCalls'> | undefined
    const finish = (): void => {
      setTimeout(() => { respond(id, res, { ...(first as Omit<ServerRecord, 'nextCalls'>), nextCalls }) }, 20)
    }
    const next = (...args: unknown[]): void => {
      nextCalls++
      if (nextCalls !== 1) return
      first = {
        ...snapshot(req, res),
        nextArgs: args.length === 0 ? 'none' : args[0] === undefined ? 'undefined' : 'value',
        nextSync: !returned,
        ...(args.length > 0 && args[0] !== undefined ? { error: describeError(args[0]) } : {})
      }
      finish()
    }
    try {
      mw(req, res, next)
      returned = true
    } catch (err) {
      returned = true
      if (nextCalls === 0) {
        first = { ...snapshot(req, res), thrown: describeError(err) }
        finish()
      } else if (first) {
        first.thrown = describeError(err)
      }
    }
  }

  const server = http.createServer((req, res) => { void handle(req as AnyReq, res) })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as net.AddressInfo).port
  return {
    port,
    records,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

// ---------------------------------------------------------------------------
// Raw TCP client
// ---------------------------------------------------------------------------
export interface WireRequest {
  parts: Buffer[]
  end: 'wait' | 'halfClose' | 'abort'
  trailing?: Buffer
}

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

function toBuffer (b: string | Buffer | undefined): Buffer {
  if (b === undefined) return Buffer.alloc(0)
  return typeof b === 'string' ? Buffer.from(b, 'utf8') : b
}

function splitAt (buf: Buffer, points: readonly number[]): Buffer[] {
  const out: Buffer[] = []
  let last = 0
  for (const p of [...points].sort((a, b) => a - b)) {
    if (p <= last || p >= buf.length) continue
    out.push(buf.subarray(last, p))
    last = p
  }
  out.push(buf.subarray(last))
  return out
}

export function buildWire (spec: RequestSpec, id: string): WireRequest {
  const method = spec.method ?? 'POST'
  const body = toBuffer(spec.body)
  const framing = spec.framing ?? (spec.body === undefined ? 'none' : 'length')
  const lines = [`${method} ${spec.path ?? '/'} HTTP/1.1`, 'Host: 127.0.0.1', 'Connection: close', `x-case-id: ${id}`]
  if (spec.contentType !== undefined && spec.contentType !== null) lines.push(`Content-Type: ${spec.contentType}`)
  for (const [k, v] of spec.headers ?? []) lines.push(`${k}: ${v}`)
  const parts: Buffer[] = []
  let extraTrailing: Buffer | undefined
  if (framing === 'chunked') {
    lines.push('Transfer-Encoding: chunked')
    const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1')
    const pieces = body.length === 0 ? [] : splitAt(body, spec.splits ?? [])
    parts.push(head)
    for (const piece of pieces) {
      parts.push(Buffer.concat([Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')]))
    }
    if (spec.send === undefined) parts.push(Buffer.from('0\r\n\r\n'))
  } else {
    if (framing === 'length') lines.push(`Content-Length: ${spec.contentLength ?? body.length}`)
    const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1')
    // a declared Content-Length shorter than the body: the excess goes after the answer (see trailing)
    const declared = Number(spec.contentLength ?? body.length)
    const cut = spec.send ?? (spec.end !== 'halfClose' && spec.end !== 'abort' && declared < body.length ? declared : undefined)
    if (cut !== undefined && spec.send === undefined) extraTrailing = body.subarray(cut)
    const sent = cut === undefined ? body : body.subarray(0, cut)
    parts.push(head, ...(sent.length ? splitAt(sent, spec.splits ?? []) : []))
  }
  let partsOut = parts
  if (framing === 'chunked' && spec.send !== undefined) {
    // abort / half-close mid chunked body: send only the first `send` bytes of the encoded body
    const encoded = Buffer.concat(parts.slice(1))
    partsOut = [parts[0], encoded.subarray(0, spec.send)]
  }
  return { parts: partsOut.filter((p) => p.length > 0), end: spec.end ?? 'wait', trailing: spec.trailing === undefined ? extraTrailing : toBuffer(spec.trailing) }
}

export interface ClientResult { status: number | null, fromApp: boolean }

export function sendRaw (port: number, wire: WireRequest, timeoutMs = 3000): Promise<ClientResult> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const received: Buffer[] = []
    let done = false
    let sentTrailing = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(received).toString('latin1')
      const m = /^HTTP\/1\.[01] (\d{3})/.exec(text)
      const headEnd = text.indexOf('\r\n\r\n')
      const head = headEnd === -1 ? text : text.slice(0, headEnd)
      resolve({ status: m ? Number(m[1]) : null, fromApp: /\r\nx-diff-app: 1\r\n/i.test(head + '\r\n') })
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.on('error', () => {})
    socket.on('data', (chunk) => {
      received.push(chunk)
      if (wire.trailing && !sentTrailing) {
        sentTrailing = true
        socket.write(wire.trailing, () => {})
      }
    })
    socket.on('close', finish)
    socket.on('connect', () => {
      void (async () => {
        for (let i = 0; i < wire.parts.length; i++) {
          if (i > 0) await delay(3)
          if (socket.destroyed) return
          socket.write(wire.parts[i])
        }
        if (wire.end === 'halfClose') {
          await delay(10)
          socket.end()
        } else if (wire.end === 'abort') {
          await delay(30)
          socket.destroy()
          finish()
        }
      })()
    })
  })
}

// ---------------------------------------------------------------------------
// Running cases
// ---------------------------------------------------------------------------
export interface Outcome {
  httpStatus: number | null
  record: ServerRecord | null
}

async function runOne (server: TargetServer, c: Case, index: number, tag: string): Promise<Outcome> {
  const id = `${index}.${tag}`
  const client = await sendRaw(server.port, buildWire(c.request, id))
  let record = server.records.get(id) ?? null
  const ending = c.request.end ?? 'wait'
  if (!record && (ending !== 'wait' || client.status === null)) {
    // no answer from the app (abort cases): poll the record for up to ~2 s
    for (let waited = 0; !record && waited < 2000; waited += 10) {
      await delay(10)
      record = server.records.get(id) ?? null
    }
  }
  // the HTTP status only matters when the app could answer; otherwise it is Node's own
  return { httpStatus: client.fromApp || ending !== 'wait' ? null : client.status, record }
}

async function pool<T> (items: readonly T[], concurrency: number, fn: (item: T, i: number) => Promise<void>): Promise<void> {
  let next = 0
  const workers = Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) {
      const i = next++
      await fn(items[i], i)
    }
  })
  await Promise.all(workers)
}

function truncate (text: string, max: number): string {
  return text.length > max ? text.slice(0, max) + `… (${text.length - max} more chars)` : text
}

/** Up to `max` paths at which two JSON-safe values differ (iterative, so deep values are fine). */
export function diffPaths (a: unknown, b: unknown, max = 12): string[] {
  const out: string[] = []
  const stack: Array<[string, unknown, unknown]> = [['$', a, b]]
  while (stack.length && out.length < max) {
    const [p, x, y] = stack.pop() as [string, unknown, unknown]
    if (x !== null && y !== null && typeof x === 'object' && typeof y === 'object' && Array.isArray(x) === Array.isArray(y)) {
      const keys = [...new Set([...Object.keys(x), ...Object.keys(y)])].reverse()
      for (const k of keys) stack.push([`${p}.${k}`, (x as Record<string, unknown>)[k], (y as Record<string, unknown>)[k]])
    } else if (JSON.stringify(x) !== JSON.stringify(y)) {
      out.push(`${p}: expected ${truncate(String(JSON.stringify(y)), 300)}, got ${truncate(String(JSON.stringify(x)), 300)}`)
    }
  }
  return out
}

/** How a suite departs from the default comparison: another candidate module, record fields left out. */
export interface SuiteOptions {
  /** The module under test instead of the variant's entry (e.g. middlewares built on the promise API). */
  candidate?: ParserModule
  /** Record fields not compared, for a candidate that cannot match them by design. */
  ignore?: ReadonlyArray<keyof ServerRecord>
}

function withoutFields (outcome: Outcome, ignore: ReadonlyArray<keyof ServerRecord>): Outcome {
  if (outcome.record === null || ignore.length === 0) return outcome
  const record = { ...outcome.record }
  for (const key of ignore) delete record[key]
  return { ...outcome, record }
}

/** An inflated count: a 413 `received` past `limit` by at most one 16 KiB zlib output chunk. */
const INFLATED_COUNT_SLACK = 16 * 1024

/**
 * The rule for `received` on a 413 after inflation. body-parser counts the zlib output chunks read so far,
 * which depend on how the compressed body was split on the wire; bodykit inflates a small body at once and
 * reports the count for a body in one piece (docs/differences.md). So for a compressed body sent in several
 * pieces, both counts must be past `limit` by at most one chunk and are then not compared further; a body in
 * one piece is compared exactly. body-parser's verdict may also come before the last piece, bodykit's comes
 * after it: the request is read off either way, and may already be destroyed when next(err) runs.
 */
function applyInflatedCountRule (c: Case, outcome: Outcome): Outcome {
  const compressed = (c.request.headers ?? []).some(([name, value]) => name.toLowerCase() === 'content-encoding' && value.trim().toLowerCase() !== 'identity')
  const props = (outcome.record?.error as { ownEnumerable?: Record<string, [string, string]> } | undefined)?.ownEnumerable
  if (!compressed || !c.request.splits?.length || props?.type?.[1] !== 'entity.too.large' || props.received === undefined) return outcome
  const received = Number(props.received[1])
  const limit = Number(props.limit?.[1])
  if (!(received > limit && received <= limit + INFLATED_COUNT_SLACK)) return outcome
  const copy = JSON.parse(JSON.stringify(outcome)) as Outcome
  ;(copy.record?.error as { ownEnumerable: Record<string, unknown> }).ownEnumerable.received = ['rule', 'past limit by at most 16 KiB']
  if (copy.record?.stream === 'destroyed') copy.record.stream = 'read off'
  return copy
}

/**
 * Issue 45's one difference for a damaged compressed body (docs/differences.md): bodykit answers 413 because the
 * longest prefix that inflates without error passes `limit` (the model's count), body-parser zlib's error for the
 * whole (message, code), because that output came in the zlib write that failed. Everything else must be equal.
 */
function isPrefixRuleDifference (c: Case, reference: Outcome, candidate: Outcome): boolean {
  if (c.damagedBody === undefined || reference.record === null || candidate.record === null) return false
  const verdict = prefixVerdictOf(c.damagedBody.encoding, Buffer.from(c.request.body ?? ''), c.damagedBody.limit)
  if (verdict.kind !== 'damaged' || !verdict.passes) return false
  type Props = Record<string, [string, string] | undefined>
  const theirs = (reference.record.error as { ownEnumerable?: Props } | undefined)?.ownEnumerable
  const mine = (candidate.record.error as { ownEnumerable?: Props } | undefined)?.ownEnumerable
  if (theirs?.code?.[1] !== verdict.error.code || (reference.record.error as { message?: [string, string] }).message?.[1] !== verdict.error.message) return false
  if (mine?.type?.[1] !== 'entity.too.large' || Number(mine.received?.[1]) !== verdict.received) return false
  const rest = (outcome: Outcome): string => JSON.stringify({ ...outcome, record: { ...outcome.record, error: 'compared above' } })
  assert.strictEqual(rest(candidate), rest(reference), `case "${c.name}": only the error may differ`)
  return true
}

function compareOutcomes (c: Case, variant: Variant, rawReference: Outcome, rawCandidate: Outcome, ignore: ReadonlyArray<keyof ServerRecord> = []): void {
  const reference = withoutFields(applyInflatedCountRule(c, rawReference), ignore)
  const candidate = withoutFields(applyInflatedCountRule(c, rawCandidate), ignore)
  const ref = JSON.stringify(reference)
  const cand = JSON.stringify(candidate)
  const message = (): string => [
    `case "${c.name}" (${describeTargets(variant)})`,
    'differences (path: expected body-parser, got candidate):',
    ...diffPaths(JSON.parse(cand), JSON.parse(ref)).map((d) => '  ' + d),
    `body-parser (expected): ${truncate(ref, 4000)}`,
    `candidate (actual):     ${truncate(cand, 4000)}`
  ].join('\n')
  if (c.knownDifference && !SELF_MODE) {
    assert.notStrictEqual(cand, ref, `known difference no longer present, remove the mark: ${message()}`)
    return
  }
  if (cand !== ref && isPrefixRuleDifference(c, reference, candidate)) return
  assert.strictEqual(cand, ref, cand === ref ? undefined : message())
}

/**
 * Register before/after hooks and one `it()` per case for a variant. Must be
 * called inside a describe() block.
 */
export function defineDifferentialSuite (variant: Variant, cases: readonly Case[], suite: SuiteOptions = {}): void {
  const results = new Map<number, { reference: Outcome, candidate: Outcome }>()
  const uncaught: string[] = []
  const onUncaught = (err: unknown): void => { uncaught.push(err instanceof Error ? (err.stack ?? err.message) : String(err)) }
  let servers: { reference: TargetServer, candidate: TargetServer } | undefined

  before(async () => {
    process.on('uncaughtException', onUncaught)
    const reference = await startServer(loadEntry(variant, 'reference'), cases)
    const candidate = await startServer(suite.candidate ?? loadEntry(variant, 'candidate'), cases)
    servers = { reference, candidate }
    await pool(cases, 8, async (c, i) => {
      const [r, k] = await Promise.all([runOne(reference, c, i, 'ref'), runOne(candidate, c, i, 'cand')])
      results.set(i, { reference: r, candidate: k })
    })
    if (process.env.BODYKIT_DIFF_DUMP) {
      // debugging aid: write every outcome to a JSON file
      const dump = cases.map((c, i) => ({ name: c.name, ...results.get(i) }))
      writeFileSync(`${process.env.BODYKIT_DIFF_DUMP}.${variant}.json`, JSON.stringify(dump, null, 1))
    }
  })

  after(async () => {
    process.removeListener('uncaughtException', onUncaught)
    if (servers) await Promise.all([servers.reference.close(), servers.candidate.close()])
  })

  cases.forEach((c, i) => {
    const label = c.knownDifference ? `${c.name} [known difference: ${c.knownDifference}]` : c.name
    it(label, () => {
      const r = results.get(i)
      assert.ok(r, `no result recorded for case ${c.name}`)
      assert.ok(r.reference.record || r.reference.httpStatus !== null, `reference gave neither a record nor an HTTP answer for ${c.name}`)
      compareOutcomes(c, variant, r.reference, r.candidate, suite.ignore)
    })
  })

  it('no uncaught exceptions while serving the corpus', () => {
    assert.deepStrictEqual(uncaught, [])
  })
}
