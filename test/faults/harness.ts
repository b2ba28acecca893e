// Fault injection for every reader: the reference requests, sources that fail at step k, the parsers under test, a recording server, and the checks every faulted request must pass.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import http, { IncomingMessage, ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { PassThrough, pipeline } from 'node:stream'
import zlib from 'node:zlib'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import { endRequest, fakeRequest, fakeResponse, sleep, tick } from '../hostile/helpers'

/** How long a faulted request may take to settle before the test calls it hung: generous, it only has to settle at all. */
export const GUARD_MS = 5000

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void
export type ParserKind = 'json' | 'text' | 'raw' | 'urlencoded' | 'multipart'
export type Encoding = 'identity' | 'gzip' | 'deflate' | 'br'
export type Framing = 'length' | 'chunked'
export type Size = 'small' | 'large'

export const ENCODINGS: readonly Encoding[] = ['identity', 'gzip', 'deflate', 'br']
export const FRAMINGS: readonly Framing[] = ['length', 'chunked']
export const SIZES: readonly Size[] = ['small', 'large']

/** What an error handler sees of an error: enough for exact assertions. */
export interface ErrorLike {
  status?: number
  statusCode?: number
  type?: string
  code?: string
  message?: string
  cause?: { code?: string }
  storageErrors?: unknown[]
  [key: string]: unknown
}

// ---------------------------------------------------------------------------
// The process: uncaught exceptions and unhandled rejections are recorded, never fatal, and each test takes its own.
// ---------------------------------------------------------------------------

export interface ProcessWatch {
  /** Where the record stands now. */
  mark: () => number
  /** What reached the process since `mark`, as one line each. */
  since: (mark: number) => string[]
}

/** Records 'uncaughtException' and 'unhandledRejection' while the file runs; `before`/`after` are node:test's. */
export function watchProcess (before: (fn: () => void) => void, after: (fn: () => void) => void): ProcessWatch {
  const seen: string[] = []
  const record = (err: unknown): void => { seen.push(String((err as Error)?.stack ?? err).split('\n').slice(0, 3).join(' | ')) }
  before(() => {
    process.on('uncaughtException', record)
    process.on('unhandledRejection', record)
  })
  after(() => {
    process.off('uncaughtException', record)
    process.off('unhandledRejection', record)
  })
  return { mark: () => seen.length, since: (mark) => seen.slice(mark) }
}

// ---------------------------------------------------------------------------
// Settling: next (or the promise) is counted; waiting for it is event-driven, with GUARD_MS as the only bound.
// ---------------------------------------------------------------------------

export interface Settlement {
  calls: number
  err: unknown
  /** The first call's value, for a reader that resolved. */
  value?: unknown
  /** Resolves at the first call. */
  readonly first: Promise<void>
}

/** A `next` that counts its calls, and the record it fills. */
export function recorder (): { next: Next, state: Settlement } {
  let resolve: () => void = () => {}
  const state: Settlement = { calls: 0, err: undefined, first: new Promise<void>((r) => { resolve = r }) }
  const next: Next = (err) => {
    state.calls++
    if (state.calls === 1) {
      state.err = err
      resolve()
    }
  }
  return { next, state }
}

/** A reader's promise as a settlement: resolving or rejecting counts as one call. */
export function settleReader (promise: Promise<unknown>): Settlement {
  const { next, state } = recorder()
  promise.then((value) => { state.value = value; next() }, (err: unknown) => { next(err ?? new Error('rejected with ' + String(err))) })
  return state
}

/** Whether the settlement came within `ms` (from now). */
export async function settledWithin (state: Settlement, ms = GUARD_MS): Promise<boolean> {
  if (state.calls > 0) return true
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<false>((resolve) => { timer = setTimeout(resolve, ms, false) })
  const settled = await Promise.race([state.first.then(() => true as const), expired])
  clearTimeout(timer)
  return settled
}

/** The promise's value, or undefined when it has not settled after `ms` (the timer is cleared either way). */
export async function within<T> (promise: Promise<T>, ms = GUARD_MS): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<undefined>((resolve) => { timer = setTimeout(() => { resolve(undefined) }, ms) })
  try {
    return await Promise.race([promise, expired])
  } finally {
    clearTimeout(timer)
  }
}

/** Waits until `check` holds, polling; false when it still does not after `ms`. */
export async function eventually (check: () => boolean, ms = GUARD_MS): Promise<boolean> {
  const deadline = Date.now() + ms
  for (let polls = 0; !check(); polls++) {
    if (Date.now() > deadline) return false
    await (polls < 20 ? tick() : sleep(2))
  }
  return true
}

/** The window in which a second call to `next` would show (a bug); its length never makes a correct run fail. */
export const SECOND_CALL_WINDOW_MS = 20

// ---------------------------------------------------------------------------
// Descriptors, folders, listeners.
// ---------------------------------------------------------------------------

/** Open descriptors of this process (sockets included). */
export function openFds (): number {
  return fs.readdirSync('/proc/self/fd').length
}

/** What each open descriptor of this process is (a path, `socket:[inode]`, `anon_inode:[eventfd]`, …), by number. */
export function fdTargets (): Map<string, string> {
  const targets = new Map<string, string>()
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      targets.set(fd, fs.readlinkSync(`/proc/self/fd/${fd}`))
    } catch {
      // Closed between the listing and the look (the listing's own descriptor, for one).
    }
  }
  return targets
}

/** The descriptors open now that were not in `before` (a failure message's detail). */
export function fdsOpenedSince (before: Map<string, string>): string[] {
  return [...fdTargets()].filter(([fd, target]) => before.get(fd) !== target).map(([fd, target]) => `${fd} → ${target}`)
}

/** Waits (polling, at most `ms`) for the descriptor count to come back to `baseline`; returns the count seen last. */
export async function fdsBackTo (baseline: number, ms = GUARD_MS): Promise<number> {
  await eventually(() => openFds() <= baseline, ms)
  return openFds()
}

/** The active resources as counts by type (what keeps the loop alive). */
export function activeResources (): Map<string, number> {
  const counts = new Map<string, number>()
  for (const type of process.getActiveResourcesInfo()) counts.set(type, (counts.get(type) ?? 0) + 1)
  return counts
}

/** The resource types with more active now than in `baseline`, as `type before→now`. */
export function resourcesAbove (baseline: Map<string, number>): string[] {
  const out: string[] = []
  for (const [type, count] of activeResources()) if (count > (baseline.get(type) ?? 0)) out.push(`${type} ${baseline.get(type) ?? 0}→${count}`)
  return out
}

/** A fresh upload folder under the system's temp folder. */
export function makeFolder (prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-faults-' + prefix + '-'))
}

/** The names in a folder. */
export function listFolder (folder: string): string[] {
  return fs.readdirSync(folder)
}

/**
 * Counts fs.unlink calls on a folder whose callback has not run yet. "Removed before next(err)" is decided by it:
 * an unlink runs on the thread pool, so a listing alone may or may not see a file whose removal was only started.
 */
export function trackUnlinks (folder: string): { pending: () => number, restore: () => void } {
  const original = fs.unlink
  let pending = 0
  const patched = function unlink (this: unknown, target: fs.PathLike, callback: fs.NoParamCallback): void {
    if (typeof target !== 'string' || !target.startsWith(folder)) return original.call(fs, target, callback)
    pending++
    original.call(fs, target, (err) => {
      pending--
      callback(err)
    })
  }
  ;(fs as unknown as { unlink: typeof patched }).unlink = patched
  return { pending: () => pending, restore: () => { (fs as unknown as { unlink: typeof original }).unlink = original } }
}

/** The events a body reader listens to. */
const WATCHED_EVENTS = ['data', 'end', 'error', 'aborted', 'close', 'readable', 'unpipe', 'drain', 'finish', 'pause', 'resume']

/** Listener counts of the events a reader uses (Node's own `clearIncoming` aside). */
export function listenerCounts (emitter: NodeJS.EventEmitter | null | undefined): Record<string, number> {
  const counts: Record<string, number> = {}
  if (!emitter || typeof emitter.listeners !== 'function') return counts
  for (const event of WATCHED_EVENTS) counts[event] = emitter.listeners(event).filter((fn) => fn.name !== 'clearIncoming').length
  return counts
}

/** The events that have more listeners now than at the baseline, e.g. `data 0→1`; empty when none. */
export function listenersLeft (baseline: Record<string, number>, now: Record<string, number>): string[] {
  return Object.keys(now).filter((event) => now[event] > (baseline[event] ?? 0)).map((event) => `${event} ${baseline[event] ?? 0}→${now[event]}`)
}

// ---------------------------------------------------------------------------
// The reference bodies: every parser's body, identity or compressed, small or large, with Content-Length or chunked,
// cut into chunks that put a step at the headers, the first chunk, mid-body, between multipart parts and the last byte.
// ---------------------------------------------------------------------------

export const BOUNDARY = 'faultBoundary7MA4YWxkTrZu0gW'
const PIECE = 32 * 1024
const LARGE = 160 * 1024

/** Deterministic bytes (mulberry32), so that every run sends the same bodies. */
export function seededBytes (length: number, seed: number): Buffer {
  const out = Buffer.alloc(length)
  let state = seed >>> 0
  for (let i = 0; i < length; i++) {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    out[i] = ((t ^ (t >>> 14)) >>> 0) & 0xff
  }
  return out
}

/** Text that compresses poorly (so a large compressed body spans several chunks, and a fault lands mid-inflate). */
function noisyText (length: number, seed: number): string {
  return seededBytes(Math.ceil(length * 3 / 4), seed).toString('base64url').slice(0, length)
}

function multipartPart (headers: string, data: string | Buffer): Buffer {
  return Buffer.concat([Buffer.from('--' + BOUNDARY + '\r\n' + headers + '\r\n\r\n'), Buffer.from(data), Buffer.from('\r\n')])
}

/** A multipart field part. */
export function fieldPart (name: string, value: string): Buffer {
  return multipartPart('Content-Disposition: form-data; name="' + name + '"', value)
}

/** A multipart file part. */
export function filePart (name: string, filename: string, data: string | Buffer): Buffer {
  return multipartPart('Content-Disposition: form-data; name="' + name + '"; filename="' + filename + '"\r\nContent-Type: application/octet-stream', data)
}

/** A multipart request of these parts (then the closing delimiter), with its Content-Length, in pieces of `piece` bytes. */
export function formRequest (parts: Buffer[], piece = PIECE): Pick<WireBody, 'headers' | 'chunks'> {
  const body = Buffer.concat([...parts, CLOSE_DELIMITER])
  return { headers: { 'content-type': MULTIPART_TYPE, 'content-length': String(body.length) }, chunks: split(body, piece) }
}

/** The closing delimiter. */
export const CLOSE_DELIMITER = Buffer.from('--' + BOUNDARY + '--\r\n')
export const MULTIPART_TYPE = 'multipart/form-data; boundary=' + BOUNDARY

const CONTENT_TYPES: Record<ParserKind, string> = {
  json: 'application/json',
  text: 'text/plain; charset=utf-8',
  raw: 'application/octet-stream',
  urlencoded: 'application/x-www-form-urlencoded',
  multipart: MULTIPART_TYPE
}

/** The body's segments before encoding: one per multipart part (so that chunks end between parts), else one. */
function plainSegments (kind: ParserKind, size: Size): Buffer[] {
  const large = size === 'large'
  switch (kind) {
    case 'json': return [Buffer.from(large ? JSON.stringify({ data: noisyText(LARGE, 1) }) : '{"name":"fault","items":[1,2,3]}')]
    case 'text': return [Buffer.from(large ? noisyText(LARGE, 2) : 'hello, fault')]
    case 'raw': return [large ? seededBytes(LARGE, 3) : seededBytes(32, 3)]
    case 'urlencoded': return [Buffer.from(large ? 'a=' + noisyText(LARGE, 4) + '&b=2' : 'a=1&b=two')]
    case 'multipart': return [
      fieldPart('name', 'fault'),
      filePart('first', 'first.bin', large ? seededBytes(LARGE / 2, 5) : 'first file, twenty b'),
      filePart('second', 'second.bin', large ? seededBytes(LARGE / 2, 6) : 'second ten'),
      CLOSE_DELIMITER
    ]
  }
}

function encode (body: Buffer, encoding: Encoding): Buffer {
  switch (encoding) {
    case 'identity': return body
    case 'gzip': return zlib.gzipSync(body)
    case 'deflate': return zlib.deflateSync(body)
    case 'br': return zlib.brotliCompressSync(body)
  }
}

/** One reference request: its headers and its body in the chunks a source delivers, each chunk one step. */
export interface WireBody {
  kind: ParserKind
  encoding: Encoding
  size: Size
  framing: Framing
  headers: Record<string, string>
  chunks: Buffer[]
  /** Indexes of the chunks that end exactly at the end of a multipart part. */
  partEnds: ReadonlySet<number>
  /** `kind encoding size framing`, for messages. */
  label: string
}

/** Splits `data` into pieces of at most `size` bytes. */
export function split (data: Buffer, size: number): Buffer[] {
  const out: Buffer[] = []
  for (let at = 0; at < data.length; at += size) out.push(data.subarray(at, at + size))
  return out
}

export function buildBody (kind: ParserKind, encoding: Encoding, size: Size, framing: Framing): WireBody {
  const segments = plainSegments(kind, size)
  const chunks: Buffer[] = []
  const partEnds = new Set<number>()
  if (encoding === 'identity') {
    // Small bodies in about three pieces, so each has a first chunk, a middle and a last byte.
    const total = segments.reduce((sum, segment) => sum + segment.length, 0)
    const piece = size === 'large' ? PIECE : Math.max(1, Math.ceil(total / 3))
    for (const segment of segments) {
      chunks.push(...split(segment, piece))
      if (kind === 'multipart') partEnds.add(chunks.length - 1)
    }
  } else {
    const encoded = encode(Buffer.concat(segments), encoding)
    chunks.push(...split(encoded, size === 'large' ? PIECE : Math.max(1, Math.ceil(encoded.length / 3))))
  }
  // The last byte is a step of its own.
  const last = chunks.pop() as Buffer
  if (last.length > 1) chunks.push(last.subarray(0, last.length - 1))
  chunks.push(last.subarray(last.length - 1))
  if (partEnds.size > 0) {
    partEnds.delete(chunks.length - 2)
    partEnds.add(chunks.length - 1)
  }
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const headers: Record<string, string> = { 'content-type': CONTENT_TYPES[kind] }
  if (encoding !== 'identity') headers['content-encoding'] = encoding
  if (framing === 'length') headers['content-length'] = String(length)
  else headers['transfer-encoding'] = 'chunked'
  return { kind, encoding, size, framing, headers, chunks, partEnds, label: `${kind} ${encoding} ${size} ${framing === 'length' ? 'Content-Length' : 'chunked'}` }
}

/**
 * What a fault at step k interrupts (steps are 1-based: step j delivers chunk j, step n+1 ends the body): a name
 * for messages and counts.
 */
export function faultPoint (body: WireBody, k: number): string {
  const n = body.chunks.length
  const where = k === 1
    ? 'headers only'
    : k === 2 ? 'after the first chunk' : k === n ? 'before the last byte' : k === n + 1 ? 'before the end' : 'mid-body'
  const extras: string[] = []
  if (body.partEnds.has(k - 2) && k <= n) extras.push('between parts')
  if (body.encoding !== 'identity' && k > 1 && k <= n) extras.push('mid-inflate')
  return extras.length === 0 ? where : `${where}, ${extras.join(', ')}`
}

// ---------------------------------------------------------------------------
// Sources: a Node request that fails at step k (Node's IncomingMessage on a fake socket, or a PassThrough with
// headers as users' tests build one), and a Web Request whose stream errors or ends at step k.
// ---------------------------------------------------------------------------

export type NodeSourceKind = 'incoming' | 'passthrough'
/** 'error': destroyed with an error; 'aborted': 'aborted' then 'close' (as Node's server on a lost client); 'destroy': destroyed without either. */
export type NodeFault = 'error' | 'aborted' | 'destroy'
export const NODE_SOURCES: readonly NodeSourceKind[] = ['incoming', 'passthrough']
export const NODE_FAULTS: readonly NodeFault[] = ['error', 'aborted', 'destroy']

export interface NodeSource {
  req: IncomingMessage
  res: ServerResponse
  /** Emitters whose listeners must be back to their baseline once the read settled. */
  emitters: Array<[string, NodeJS.EventEmitter]>
  deliver: (chunk: Buffer) => void
  end: () => void
  fail: (fault: NodeFault, step: number) => void
}

export function nodeSource (kind: NodeSourceKind, headers: Record<string, string>): NodeSource {
  if (kind === 'incoming') {
    const req = fakeRequest(headers)
    return {
      req,
      res: fakeResponse(req),
      emitters: [['request', req], ['socket', req.socket]],
      deliver: (chunk) => { req.push(chunk) },
      end: () => { endRequest(req) },
      fail: (fault, step) => {
        if (fault === 'error') req.destroy(new Error('source failed at step ' + step))
        // What Node's server does when the client goes away (abortIncoming): 'aborted', then 'close'.
        else if (fault === 'aborted') req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
        else req.destroy()
      }
    }
  }
  const stream = Object.assign(new PassThrough(), { headers: { host: 'localhost', ...headers }, method: 'POST', url: '/', httpVersion: '1.1' })
  return {
    req: stream as unknown as IncomingMessage,
    res: {} as ServerResponse,
    emitters: [['request', stream]],
    deliver: (chunk) => { stream.write(chunk) },
    end: () => { stream.end() },
    fail: (fault, step) => {
      if (fault === 'error') stream.destroy(new Error('source failed at step ' + step))
      else if (fault === 'aborted') {
        stream.emit('aborted')
        stream.destroy()
      } else stream.destroy()
    }
  }
}

/** 'error': the stream errors (as a runtime does when the client goes away: an AbortError); 'end-early': it ends there. */
export type WebFault = 'error' | 'end-early'
export const WEB_FAULTS: readonly WebFault[] = ['error', 'end-early']

/** A Request whose body stream delivers one chunk per pull; at pull `fault.k` it fails instead. `steps()` counts the pulls answered. */
export function webSource (body: WireBody, fault: { k: number, mode: WebFault } | null): { request: Request, steps: () => number } {
  let steps = 0
  let index = 0
  const stream = new ReadableStream<Uint8Array>({
    pull (controller) {
      steps++
      if (fault !== null && steps === fault.k) {
        if (fault.mode === 'error') controller.error(new DOMException('the client went away at step ' + steps, 'AbortError'))
        else controller.close()
        return
      }
      if (index < body.chunks.length) controller.enqueue(new Uint8Array(body.chunks[index++]))
      else controller.close()
    }
  }, { highWaterMark: 0 })
  const request = new Request('http://localhost/', { method: 'POST', headers: body.headers, body: stream, duplex: 'half' } as RequestInit)
  return { request, steps: () => steps }
}

/** One request's read: what the source did and how the read settled. */
export interface Played {
  state: Settlement
  settled: boolean
  /** Steps the source performed (deliveries and the end) before the fault, or all of them. */
  steps: number
  thrown?: unknown
  /** Listener counts before the read, and the emitters, to compare once it settled. */
  listeners: Array<{ name: string, emitter: NodeJS.EventEmitter, before: Record<string, number> }>
  /** What the read handed on (req for a middleware, the value for a reader), for its stored files. */
  handedOn: () => unknown
}

/** Feeds `body` to a middleware or reader step by step; at step `fault.k` the source fails instead. */
export async function playNode (start: Middleware,
  body: Pick<WireBody, 'headers' | 'chunks'>, kind: NodeSourceKind, fault: { k: number, mode: NodeFault } | null): Promise<Played> {
  const source = nodeSource(kind, body.headers)
  const listeners = source.emitters.map(([name, emitter]) => ({ name, emitter, before: listenerCounts(emitter) }))
  const { next, state } = recorder()
  const played: Played = { state, settled: false, steps: 0, listeners, handedOn: () => source.req }
  try {
    start(source.req, source.res, next)
  } catch (thrown) {
    played.thrown = thrown
  }
  const n = body.chunks.length
  for (let step = 1; step <= n + 1; step++) {
    await tick()
    if (fault !== null && step === fault.k) {
      source.fail(fault.mode, step)
      break
    }
    played.steps++
    if (step <= n) source.deliver(body.chunks[step - 1])
    else source.end()
  }
  played.settled = await settledWithin(state)
  return played
}

// ---------------------------------------------------------------------------
// The parsers under test.
// ---------------------------------------------------------------------------

/** A storage engine of the user's own, as an app writes one: its file written with a stream, its partial file removed on error. */
export function folderEngine (folder: string): multer.StorageEngine {
  return {
    _handleFile (_req, file, callback) {
      const target = path.join(folder, 'custom-' + randomBytes(8).toString('hex'))
      const out = fs.createWriteStream(target, { flags: 'wx' })
      pipeline(file.stream, out, (err) => {
        if (!err) return callback(null, { path: target, size: out.bytesWritten })
        // Unlinked once closed: a stream destroyed while opening still creates its file.
        const unlink = (): void => { fs.unlink(target, () => { callback(err) }) }
        if (out.closed) unlink()
        else out.once('close', unlink)
      })
    },
    _removeFile (_req, file, callback) {
      fs.unlink(file.path, (err) => { callback(err !== null && err.code !== 'ENOENT' ? err : null) })
    }
  }
}

export type Storage = 'memory' | 'disk' | 'custom'

/** One middleware under test: built once per upload folder. */
export interface MiddlewareTarget {
  /** e.g. `default json`, `legacy multipart disk`, `multer custom`. */
  name: string
  kind: ParserKind
  encodings: readonly Encoding[]
  /** Whether files go to the upload folder. */
  usesFolder: boolean
  make: (folder: string) => Middleware
}

const BIG = { limit: '2mb' }

function bodyParserTargets (entryName: 'default' | 'legacy', entry: typeof bodykit | typeof legacy): MiddlewareTarget[] {
  // compat(v1): body-parser 1.x has no brotli: a br body is refused unread there.
  const encodings = entryName === 'legacy' ? ENCODINGS.filter((e) => e !== 'br') : ENCODINGS
  const mw = (m: unknown): Middleware => m as Middleware
  return [
    { name: `${entryName} json`, kind: 'json', encodings, usesFolder: false, make: () => mw(entry.json(BIG)) },
    { name: `${entryName} text`, kind: 'text', encodings, usesFolder: false, make: () => mw(entry.text(BIG)) },
    { name: `${entryName} raw`, kind: 'raw', encodings, usesFolder: false, make: () => mw(entry.raw(BIG)) },
    { name: `${entryName} urlencoded`, kind: 'urlencoded', encodings, usesFolder: false, make: () => mw(entry.urlencoded({ ...BIG, extended: false })) },
    { name: `${entryName} multipart memory`, kind: 'multipart', encodings, usesFolder: false, make: () => mw(entry.multipart({ ...BIG, files: { storage: 'memory' } })) },
    { name: `${entryName} multipart disk`, kind: 'multipart', encodings, usesFolder: true, make: (folder) => mw(entry.multipart({ ...BIG, files: { storage: 'disk', directory: folder } })) }
  ]
}

/** The multer middleware of a storage: `any()`, every file taken. */
export function multerMiddleware (storage: Storage, folder: string, options: Partial<multer.Options> = {}): Middleware {
  const engine = storage === 'memory' ? multer.memoryStorage() : storage === 'disk' ? multer.diskStorage({ destination: folder }) : folderEngine(folder)
  return multer({ storage: engine, ...options }).any() as unknown as Middleware
}

export function middlewareTargets (): MiddlewareTarget[] {
  return [
    ...bodyParserTargets('default', bodykit),
    ...bodyParserTargets('legacy', legacy),
    ...(['memory', 'disk', 'custom'] as const).map((storage): MiddlewareTarget => ({
      name: `multer ${storage}`, kind: 'multipart', encodings: ENCODINGS, usesFolder: storage !== 'memory', make: (folder) => multerMiddleware(storage, folder)
    }))
  ]
}

/** One promise reader under test. */
export interface ReaderTarget {
  name: string
  kind: ParserKind
  usesFolder: boolean
  read: (req: IncomingMessage | Request, folder: string) => Promise<unknown>
}

export function readerTargets (): ReaderTarget[] {
  const req = (r: IncomingMessage | Request): IncomingMessage => r as IncomingMessage
  return [
    { name: 'readJson', kind: 'json', usesFolder: false, read: (r) => bodykit.readJson(req(r), BIG) },
    { name: 'readText', kind: 'text', usesFolder: false, read: (r) => bodykit.readText(req(r), BIG) },
    { name: 'readRaw', kind: 'raw', usesFolder: false, read: (r) => bodykit.readRaw(req(r), BIG) },
    { name: 'readUrlencoded', kind: 'urlencoded', usesFolder: false, read: (r) => bodykit.readUrlencoded(req(r), BIG) },
    { name: 'readMultipart memory', kind: 'multipart', usesFolder: false, read: (r) => bodykit.readMultipart(req(r), { ...BIG, files: { storage: 'memory' } }) },
    { name: 'readMultipart disk', kind: 'multipart', usesFolder: true, read: (r, folder) => bodykit.readMultipart(req(r), { ...BIG, files: { storage: 'disk', directory: folder } }) }
  ]
}

/** The paths of the disk files a successful read handed on (req.files, req.file, a reader's `files`), which the app then owns. */
export function storedPaths (value: unknown): string[] {
  const out: string[] = []
  const visit = (item: unknown, depth: number): void => {
    if (item === null || typeof item !== 'object' || depth > 3) return
    const p = (item as { path?: unknown }).path
    if (typeof p === 'string') out.push(p)
    for (const child of Array.isArray(item) ? item : Object.values(item)) visit(child, depth + 1)
  }
  visit(value, 0)
  return out
}

/** Removes what a successful read stored, as the app's handler would (moves it away). */
export function removeStored (...values: unknown[]): void {
  for (const value of values) for (const p of storedPaths(value)) fs.rmSync(p, { force: true })
}

/** Whether an error is one an error handler can answer: an object with an http status of 400 to 599, or none (500). */
export function isAnswerable (err: unknown): boolean {
  if (err === null || typeof err !== 'object') return false
  const status = (err as ErrorLike).status ?? (err as ErrorLike).statusCode
  return status === undefined || (typeof status === 'number' && status >= 400 && status < 600)
}

/** `type` or `code` and message of an error, for messages. */
export function summarize (err: unknown): string {
  if (err === undefined) return 'no error'
  if (err === null || typeof err !== 'object') return String(err)
  const e = err as ErrorLike
  return `${e.status ?? '-'} ${e.type ?? e.code ?? ''} ${String(e.message).slice(0, 80)}`.trim()
}

/** Summarises violations in one assertion: how many, and the first `shown` of them (FAULTS_SHOWN=1000 lists more). */
export function assertNone (violations: string[], what: string, shown = Number(process.env.FAULTS_SHOWN ?? 12)): void {
  if (violations.length === 0) return
  const more = violations.length > shown ? `\n… and ${violations.length - shown} more` : ''
  assert.fail(`${violations.length} ${what}:\n${violations.slice(0, shown).join('\n')}${more}`)
}

// ---------------------------------------------------------------------------
// A recording server over real HTTP: each request's settlement, the upload folder at next(), and a raw client.
// ---------------------------------------------------------------------------

export interface ServedRequest {
  index: number
  req: IncomingMessage
  res: ServerResponse
  state: Settlement
  /** The upload folder's listing when `next` was first called. */
  uploadsAtNext: string[] | null
  /** A synchronous throw out of the middleware (a bug: it must call next instead). */
  thrown?: unknown
}

export interface ServeOptions {
  /** The upload folder, listed when `next` is called. */
  folder?: string
  /** Runs right after the middleware was called (e.g. to answer early). */
  afterStart?: (served: ServedRequest) => void
  /** Whether the recorder answers once next is called (default true; an early answer has already been sent). */
  answer?: boolean
}

export interface Served {
  port: number
  requests: ServedRequest[]
  /** Resolves when request `index` (0-based, in arrival order) reached the handler. */
  arrived: (index: number) => Promise<ServedRequest>
  /** Closes every connection and the server. */
  close: () => Promise<void>
}

/**
 * A node:http server on 127.0.0.1 running `mw`. On the first `next` it answers `{ status, type, code, message }`
 * with `Connection: close` (or 200 and removes what a successful read stored, as an app moves it away).
 */
export async function serve (mw: Middleware, options: ServeOptions = {}): Promise<Served> {
  const requests: ServedRequest[] = []
  const waiters = new Map<number, (served: ServedRequest) => void>()
  const server = http.createServer((req, res) => {
    const { next, state } = recorder()
    const served: ServedRequest = { index: requests.length, req, res, state, uploadsAtNext: null }
    requests.push(served)
    const recording: Next = (err) => {
      const first = state.calls === 0
      next(err)
      if (!first) return
      served.uploadsAtNext = options.folder === undefined ? null : listFolder(options.folder)
      if (options.answer === false || res.headersSent || res.destroyed) return
      if (err === undefined || err === null) {
        removeStored((req as { files?: unknown }).files, (req as { file?: unknown }).file)
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' })
        res.end('{}')
        return
      }
      const e = err as ErrorLike
      const status = typeof e.status === 'number' ? e.status : 500
      const text = JSON.stringify({ status, type: e.type, code: e.code, message: String(e.message) })
      res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
      res.end(text)
    }
    try {
      mw(req, res, recording)
    } catch (thrown) {
      served.thrown = thrown
    }
    options.afterStart?.(served)
    waiters.get(served.index)?.(served)
    // A resolver kept would keep its request (and its socket) alive.
    waiters.delete(served.index)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    arrived: (index) => requests[index] !== undefined ? Promise.resolve(requests[index]) : new Promise((resolve) => waiters.set(index, resolve)),
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** An HTTP/1.1 request head for a POST with these headers. */
export function requestHead (headers: Record<string, string>): Buffer {
  const lines = ['POST / HTTP/1.1', 'Host: 127.0.0.1', ...Object.entries(headers).map(([name, value]) => name + ': ' + value)]
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1')
}

/** A client connection: what it received, and when the server closed it. */
export interface Client {
  socket: net.Socket
  /** Resolves with what arrived once the first byte of a response arrived. */
  responded: Promise<string>
  /** Resolves once the connection is closed (either side). */
  closed: Promise<void>
  received: () => string
}

/** Opens a connection and writes `first` (a request head and part of its body). */
export async function connect (port: number, first: Buffer): Promise<Client> {
  const socket = net.connect(port, '127.0.0.1')
  const parts: Buffer[] = []
  let answer: (text: string) => void = () => {}
  const responded = new Promise<string>((resolve) => { answer = resolve })
  socket.on('data', (chunk: Buffer) => {
    parts.push(chunk)
    answer(Buffer.concat(parts).toString('latin1'))
  })
  socket.on('error', () => {})
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  await new Promise((resolve) => socket.once('connect', resolve))
  await new Promise((resolve) => socket.write(first, resolve))
  return { socket, responded, closed, received: () => Buffer.concat(parts).toString('latin1') }
}

/** Writes `data` in pieces, waiting for 'drain'; stops quietly once the socket is closed. */
export async function keepSending (socket: net.Socket, data: Buffer, piece = 16 * 1024): Promise<void> {
  for (let at = 0; at < data.length && !socket.destroyed && socket.writable; at += piece) {
    if (!socket.write(data.subarray(at, at + piece))) {
      await new Promise<void>((resolve) => {
        const done = (): void => { socket.off('drain', done); socket.off('close', done); resolve() }
        socket.on('drain', done)
        socket.on('close', done)
      })
    }
  }
}

export { sleep, tick }
