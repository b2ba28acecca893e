// HTTP/2 servers for the tests (h2c, and TLS with a certificate made at test time) and Node's http2 client to talk to them.
import { EventEmitter } from 'node:events'
import http2, { type ClientHttp2Session, type Http2SecureServer, type Http2Server, type Http2ServerRequest, type Http2ServerResponse, type ServerHttp2Session } from 'node:http2'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { describeError, describeRequest, type Result } from '../helpers/server'
import type { Entry, Factories } from '../hostile/helpers'

const load = createRequire(__filename)

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void

/** The playground's certificate maker: one key and certificate per test process. */
let certificate: { key: string, cert: string } | null = null
export function testCertificate (): { key: string, cert: string } {
  if (certificate === null) {
    const { createSelfSignedCertificate } = load(path.join(__dirname, '..', '..', 'examples', 'self-signed.js'))
    certificate = createSelfSignedCertificate() as { key: string, cert: string }
  }
  return certificate
}

export interface H2Server {
  /** `http://127.0.0.1:port` (h2c) or `https://127.0.0.1:port`. */
  origin: string
  /** Every result the final handler produced, in order. */
  results: Result[]
  /** Streams of the server not yet closed and freed (a stream's 'close' is its last event). */
  openStreams: () => number
  /** Resolves once every stream of the server has closed (at once if none is open). */
  streamsClosed: () => Promise<void>
  /** Resolves with the result at `index` once the final handler produced it. */
  result: (index: number) => Promise<Result>
  /** Closes the server and every session on it. */
  close: () => Promise<void>
}

/**
 * Starts an HTTP/2 server on 127.0.0.1 running the middlewares of the request's path through the compat API,
 * then answering with the body (200, {@link describeRequest}) or the error ({@link describeError}), as the
 * HTTP/1.1 suites' servers do.
 */
export async function serveH2 (routes: Record<string, Middleware[]>, options: { tls: boolean }): Promise<H2Server> {
  const results: Result[] = []
  const handler = (req: Http2ServerRequest, res: Http2ServerResponse): void => {
    const middlewares = routes[req.url] ?? []
    let index = 0
    const next: Next = (err) => {
      if (err !== undefined || index === middlewares.length) {
        const result = err !== undefined ? describeError(err) : { status: 200, json: describeRequest(req as unknown as IncomingMessage) }
        results.push(result)
        resultAdded.emit('result')
        res.writeHead(result.status, { 'content-type': 'application/json' })
        res.end(JSON.stringify(result.json))
        return
      }
      middlewares[index++](req as unknown as IncomingMessage, res as unknown as ServerResponse, next)
    }
    next()
  }
  const server: Http2Server | Http2SecureServer = options.tls
    ? http2.createSecureServer({ ...testCertificate(), allowHTTP1: true }, handler)
    : http2.createServer(handler)
  return listen(server, options.tls, results, resultAdded)
}

/** Told of each result serveH2's handler produces, so tests wait for an event, not for time. */
const resultAdded = new EventEmitter().setMaxListeners(0)

/** Listens on a free port of 127.0.0.1 and gives the close function that also ends open sessions. */
export async function listen (server: Http2Server | Http2SecureServer, tls: boolean, results: Result[] = [], added = new EventEmitter()): Promise<H2Server> {
  const sessions = new Set<ServerHttp2Session>()
  const streams = new EventEmitter()
  let open = 0
  server.on('stream', (stream) => {
    open++
    stream.once('close', () => {
      if (--open === 0) streams.emit('none open')
    })
  })
  server.on('session', (session: ServerHttp2Session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    results,
    openStreams: () => open,
    streamsClosed: () => open === 0 ? Promise.resolve() : new Promise((resolve) => { streams.once('none open', resolve) }),
    result: (index) => new Promise((resolve) => {
      const check = (): void => {
        if (results.length <= index) return
        added.removeListener('result', check)
        resolve(results[index])
      }
      added.on('result', check)
      check()
    }),
    close: () => new Promise((resolve) => {
      for (const session of sessions) session.destroy()
      server.close(() => resolve())
    })
  }
}

/** Opens a client session (a self-signed certificate is accepted). */
export function connect (origin: string): Promise<ClientHttp2Session> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(origin, { rejectUnauthorized: false })
    session.once('connect', () => resolve(session))
    session.once('error', reject)
  })
}

export interface H2Answer extends Result {
  /** The RST_STREAM code the stream closed with (0: NO_ERROR, also for a stream that ended normally). */
  rstCode: number | undefined
}

export interface H2Request {
  path?: string
  headers?: Record<string, string>
  /**
   * Sent as DATA frames after the HEADERS (one piece, or several): with `length` its Content-Length is sent too.
   * `null` ends the stream with its HEADERS (no body).
   */
  body: string | Buffer | Array<string | Buffer> | null
  length?: boolean
}

/** Sends one request on `session` and resolves with the answer once the stream closed. */
export function h2Request (session: ClientHttp2Session, request: H2Request): Promise<H2Answer> {
  const pieces = request.body === null ? [] : Array.isArray(request.body) ? request.body : [request.body]
  const headers: Record<string, string> = { ':method': 'POST', ':path': request.path ?? '/', ...request.headers }
  if (request.length === true) headers['content-length'] = String(pieces.reduce((sum, piece) => sum + Buffer.byteLength(piece), 0))
  return new Promise((resolve, reject) => {
    const stream = session.request(headers, { endStream: request.body === null })
    let status = 0
    let text = ''
    stream.on('response', (responseHeaders) => { status = Number(responseHeaders[':status']) })
    stream.setEncoding('utf8')
    stream.on('data', (chunk: string) => { text += chunk })
    // A refused upload's stream may be reset once the response is out: writes after that are dropped, not errors.
    stream.on('error', (err: NodeJS.ErrnoException) => { if (status === 0) reject(err) })
    stream.on('close', () => {
      if (status === 0) {
        reject(new Error('the stream closed without a response (RST_STREAM ' + stream.rstCode + ')'))
        return
      }
      resolve({ status, json: JSON.parse(text) as Result['json'], rstCode: stream.rstCode })
    })
    if (request.body === null) return
    for (const piece of pieces.slice(0, -1)) stream.write(piece)
    stream.end(pieces[pieces.length - 1] ?? '')
  })
}

/**
 * What two answers to the same bytes must share: all of it but `received` of a 413, which counts the pieces as
 * they arrived, and, for a request sent without a length, the length the other side was given (`expected`, `length`).
 */
export function comparableJson (json: Result['json'], sentLength: boolean): Result['json'] {
  const out = { ...json }
  if (out.type === 'entity.too.large') delete out.received
  if (!sentLength) {
    delete out.expected
    delete out.length
  }
  return out
}

/** Posts over HTTP/1.1 (no keep-alive), the pieces with their Content-Length or chunked, and reads the JSON answer. */
export function postHttp1 (port: number, path: string, headers: Record<string, string>, pieces: Buffer[], chunked: boolean): Promise<Result> {
  return new Promise((resolve, reject) => {
    const framing: Record<string, string> = chunked
      ? { 'transfer-encoding': 'chunked' }
      : { 'content-length': String(pieces.reduce((sum, piece) => sum + piece.length, 0)) }
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path, headers: { ...headers, ...framing, connection: 'close' } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode as number, json: JSON.parse(text) }))
    })
    req.on('error', reject)
    for (const piece of pieces) req.write(piece)
    req.end()
  })
}

/**
 * The entries with `readHttp2WithoutLength` set one way on every bodykit parser (an option given by a test still
 * wins): on, the suites that test how bodykit reads a body without a length run on both entries, although
 * `bodykit/legacy` leaves such a body unread by default (issue 25).
 */
export function withHttp2Reading (entries: readonly Entry[], on: boolean): Entry[] {
  return entries.map((entry) => {
    const bodykit = {} as Factories
    for (const [name, factory] of Object.entries(entry.bodykit) as Array<[keyof Factories, Factories[keyof Factories]]>) {
      bodykit[name] = (options) => factory({ readHttp2WithoutLength: on, ...options })
    }
    return { ...entry, bodykit }
  })
}

/**
 * The adapter Express needs over HTTP/2: Express gives each request and response its app's prototypes
 * (`app.request` over Express's request methods over http.IncomingMessage), which hides the getters of the
 * compat classes (headers, url, stream). This app's prototypes get Express's methods over the compat classes
 * instead; Express's own shared prototypes (and so other apps) are left alone.
 */
export function forHttp2<App extends { request: object, response: object }> (app: App): App {
  const rebase = (target: object, base: object): void => {
    const methods = Object.getOwnPropertyDescriptors(Object.getPrototypeOf(target))
    Object.setPrototypeOf(target, Object.create(base, methods))
  }
  rebase(app.request, http2.Http2ServerRequest.prototype)
  rebase(app.response, http2.Http2ServerResponse.prototype)
  return app
}
