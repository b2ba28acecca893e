// Shared by the hostile-input tests and the fuzz: both entries with their body-parser oracle, a recording server, fake requests.
import { Duplex, Readable } from 'node:stream'
import zlib from 'node:zlib'
import http, { IncomingMessage, ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import { createRequire } from 'node:module'
import bodykit from '../../src/index'
import bodykitLegacy from '../../src/legacy'

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void
export type ParserName = 'json' | 'raw' | 'text' | 'urlencoded'
export type Factories = Record<ParserName, (options?: Record<string, unknown>) => Middleware>

export interface Entry {
  name: 'default' | 'legacy'
  bodykit: Factories
  /** The body-parser release whose observable behaviour this entry keeps. */
  reference: Factories
}

const load = createRequire(__filename)

export const entries: Entry[] = [
  { name: 'default', bodykit: bodykit as unknown as Factories, reference: load('body-parser') as Factories },
  { name: 'legacy', bodykit: bodykitLegacy as unknown as Factories, reference: load('body-parser-1') as Factories }
]

export const MiB = 1024 * 1024

/** The error `type`s of the spec's list (section 7) plus the depth error. */
export const specErrorTypes = new Set([
  'encoding.unsupported', 'entity.parse.failed', 'entity.verify.failed', 'request.aborted', 'entity.too.large',
  'request.size.invalid', 'stream.encoding.set', 'stream.not.readable', 'parameters.too.many', 'charset.unsupported',
  'querystring.parse.rangeError'
])

export interface HttpErrorLike {
  status: number
  type?: string
  message: string
  [key: string]: unknown
}

/** What one request did on the server side. */
export interface Outcome {
  calls: number
  err?: HttpErrorLike
  body?: unknown
  /** Socket bytes read (headers included) when `next` was first called. */
  bytesReadAtNext: number
  /** Socket bytes read when the socket closed, or null while it is open. */
  bytesReadAtClose: number | null
  closedAt: number | null
  nextAt: number
}

export interface RecordingServer {
  port: number
  outcomes: Outcome[]
  /** Resolves when the n-th request (0-based) called next. */
  outcome: (index: number) => Promise<Outcome>
  close: () => Promise<void>
}

/** A node:http server running `mw`, answering `[type] message` with the error's status, or the JSON body. */
export async function startServer (mw: Middleware): Promise<RecordingServer> {
  const outcomes: Outcome[] = []
  const waiters = new Map<number, (o: Outcome) => void>()
  let requests = 0
  const server = http.createServer((req, res) => {
    const index = requests++
    const socket = req.socket
    let outcome: Outcome | undefined
    mw(req, res, (err) => {
      if (outcome) {
        outcome.calls++
        return
      }
      const e = err as HttpErrorLike | undefined
      outcome = { calls: 1, err: e, body: (req as { body?: unknown }).body, bytesReadAtNext: socket.bytesRead, bytesReadAtClose: null, closedAt: null, nextAt: Date.now() }
      outcomes[index] = outcome
      socket.once('close', () => {
        if (outcome) {
          outcome.bytesReadAtClose = socket.bytesRead
          outcome.closedAt = Date.now()
        }
      })
      waiters.get(index)?.(outcome)
      if (e) {
        res.statusCode = e.status ?? 500
        res.end(`[${e.type}] ${e.message}`)
      } else {
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify(Buffer.isBuffer(outcome.body) ? { buffer: outcome.body.length } : outcome.body ?? null))
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    outcomes,
    outcome: (index) => outcomes[index] ? Promise.resolve(outcomes[index]) : new Promise((resolve) => waiters.set(index, resolve)),
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** A readable stream of `total` bytes of `fill`, for fetch (counts what was pulled). */
export function generatedBody (total: number, fill = 0x20): { stream: ReadableStream<Uint8Array>, sent: () => number } {
  let sent = 0
  const chunk = new Uint8Array(64 * 1024).fill(fill)
  return {
    sent: () => sent,
    stream: new ReadableStream({
      pull (controller) {
        if (sent >= total) return controller.close()
        const part = chunk.subarray(0, Math.min(chunk.length, total - sent))
        sent += part.length
        controller.enqueue(part)
      }
    })
  }
}

/** A socket that is open, readable and idle: enough for IncomingMessage, on-finished and raw-body. */
export function fakeSocket (): Socket {
  return new Duplex({ read () {}, write (_chunk, _encoding, callback) { callback() } }) as unknown as Socket
}

/** A request whose headers arrived and whose body has not; feed it with push()/end()/abort(). */
export function fakeRequest (headers: Record<string, string>): IncomingMessage {
  const req = new IncomingMessage(fakeSocket())
  req.method = 'POST'
  req.url = '/'
  req.httpVersion = '1.1'
  req.httpVersionMajor = 1
  req.httpVersionMinor = 1
  req.headers = { host: 'localhost', ...headers }
  return req
}

/** Ends a fake request's body as Node's HTTP parser does. */
export function endRequest (req: IncomingMessage): void {
  req.complete = true
  req.push(null)
}

/** Aborts a fake request as Node's server does when the client goes away. */
export function abortRequest (req: IncomingMessage): void {
  req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
}

/** A response for a fake request (never sent). */
export function fakeResponse (req: IncomingMessage): ServerResponse {
  return new ServerResponse(req)
}

/** Listener counts of the events a body reader uses (Node's own `clearIncoming` aside). */
export function listenerCounts (emitter: NodeJS.EventEmitter): Record<string, number> {
  const counts: Record<string, number> = {}
  for (const event of ['data', 'end', 'error', 'aborted', 'close', 'readable', 'unpipe']) {
    counts[event] = emitter.listeners(event).filter((fn) => fn.name !== 'clearIncoming').length
  }
  return counts
}

export const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls until `done()` holds, with no time bound: a machine under load only makes it slower, and a state that
 * never comes (a bug) ends the test at the runner's timeout instead of a guess at how long is long enough.
 */
export async function until (done: () => boolean): Promise<void> {
  for (let polls = 0; !done(); polls++) await (polls < 20 ? tick() : sleep(1))
}

/** The own property names of the built-in prototypes, to check nothing was added or changed. */
export function prototypeSnapshot (): string {
  const protos = [Object.prototype, Array.prototype, Function.prototype, String.prototype, Number.prototype, Boolean.prototype, Buffer.prototype, Uint8Array.prototype, Error.prototype]
  return JSON.stringify(protos.map((p) => Reflect.ownKeys(p).map(String).sort()))
}

/**
 * body-parser 1.x leaves its decompressor piped after success, so a late zlib error can go unhandled (fixed
 * in body-parser 2.4.0; security-history.md). The fuzz gives the oracle's decompressor a no-op error
 * listener, so that any uncaught error left can only come from bodykit.
 */
export function shieldReferencePipes (req: IncomingMessage): void {
  const pipe = req.pipe
  req.pipe = function pipeShielded<T extends NodeJS.WritableStream> (this: IncomingMessage, destination: T, options?: { end?: boolean }): T {
    (destination as unknown as NodeJS.EventEmitter).on('error', () => {})
    return pipe.call(this, destination, options) as T
  }
}

/** Counts what the decompressors push, to show inflation stops at the limit. */
export function spyInflated (): { total: () => number, restore: () => void } {
  let total = 0
  const classes = [zlib.Gunzip, zlib.Inflate, zlib.BrotliDecompress] as unknown as { prototype: Readable }[]
  for (const c of classes) {
    c.prototype.push = function push (this: Readable, chunk: Buffer | null, encoding?: BufferEncoding): boolean {
      if (chunk) total += chunk.length
      return Readable.prototype.push.call(this, chunk, encoding)
    }
  }
  return {
    total: () => total,
    restore: () => { for (const c of classes) delete (c.prototype as { push?: unknown }).push }
  }
}
