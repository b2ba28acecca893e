// Test servers for the HTTP suites: middlewares on a real node:http server that answer with exact JSON.
import assert from 'node:assert/strict'
import http, { type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void

/** A JSON reply as the tests see it. */
export type Payload = Record<string, unknown>

/** What the server answered (or, for a request nobody could answer, what it would have answered). */
export interface Result {
  status: number
  json: Payload
}

export interface Reply extends Result {
  headers: IncomingHttpHeaders
}

export interface RequestOptions {
  method?: string
  path?: string
  headers?: Record<string, string | number | string[]>
  /** A string or Buffer is sent with its Content-Length; a list of chunks is sent chunked. */
  body?: string | Buffer | ReadonlyArray<string | Buffer>
}

export interface TestServer {
  port: number
  /** Sends one request with node:http (no keep-alive) and parses the JSON reply. */
  request: (options?: RequestOptions) => Promise<Reply>
  /** Shorthand for a POST with a Content-Type. */
  post: (contentType: string | undefined, body?: RequestOptions['body'], headers?: RequestOptions['headers']) => Promise<Reply>
  /** Writes raw bytes on a TCP socket; see {@link rawRequest}. */
  raw: (data: RawData, options?: RawOptions) => Promise<RawReply>
  /** Every result the final handlers produced so far, in order (also for requests whose client left). */
  results: Result[]
  /** Resolves with the next result not yet taken by a previous call (for aborted requests). */
  nextResult: () => Promise<Result>
}

export interface ServeOptions {
  /** Runs before the middlewares under test (e.g. to call `req.setEncoding`). */
  before?: Middleware[]
}

/**
 * Tags what JSON cannot show: `undefined` as `{ $undefined: true }`, a Buffer as `{ $buffer: base64 }`.
 * Own keys are copied as own keys, `__proto__` included.
 */
export function encode (value: unknown): unknown {
  if (value === undefined) return { $undefined: true }
  if (Buffer.isBuffer(value)) return { $buffer: value.toString('base64') }
  if (Array.isArray(value)) return value.map(encode)
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value)) {
      Object.defineProperty(out, key, { value: encode((value as Record<string, unknown>)[key]), enumerable: true, writable: true, configurable: true })
    }
    return out
  }
  return value
}

/** The tag {@link encode} gives a Buffer, for expected values. */
export function buffer (data: string | Buffer): { $buffer: string } {
  return { $buffer: Buffer.from(data).toString('base64') }
}

/** The tag {@link encode} gives `undefined`, for expected values. */
export const UNDEFINED = Object.freeze({ $undefined: true })

/**
 * The success payload: `body` (absent when `req.body` does not exist), `_body: true` when body-parser 1.x's
 * flag is set, `nullPrototype: true` when the body is an object without prototype.
 */
export function describeRequest (req: IncomingMessage & { body?: unknown, _body?: unknown }): Payload {
  const payload: Payload = {}
  if ('body' in req) payload.body = encode(req.body)
  if (req._body === true) payload._body = true
  if (req.body !== null && typeof req.body === 'object' && Object.getPrototypeOf(req.body) === null) payload.nullPrototype = true
  return payload
}

interface HttpErrorLike {
  name?: unknown
  message?: unknown
  status?: unknown
  statusCode?: unknown
  expose?: unknown
}

/** The error payload: name, message, status, statusCode, expose and every own enumerable property. */
export function describeError (err: unknown): Result {
  if (err === null || typeof err !== 'object') {
    return { status: 500, json: { thrown: String(err) } }
  }
  const e = err as HttpErrorLike
  const json: Payload = { name: e.name, message: e.message, status: e.status, statusCode: e.statusCode, expose: e.expose }
  for (const key of Object.keys(err)) {
    if (key !== 'stack') json[key] = encode((err as Record<string, unknown>)[key])
  }
  const status = typeof e.status === 'number' ? e.status : 500
  return { status, json }
}

/**
 * Starts a server on 127.0.0.1 running `middlewares` in order, then a final handler (200 with
 * {@link describeRequest}) or an error handler ({@link describeError}). The server closes itself after
 * the test, and the test fails if a middleware called `next` more than once.
 */
export async function serve (t: TestContext, middlewares: Middleware | Middleware[], options: ServeOptions = {}): Promise<TestServer> {
  const chain = [...(options.before ?? []), ...(Array.isArray(middlewares) ? middlewares : [middlewares])]
  const results: Result[] = []
  const waiters: Array<(result: Result) => void> = []
  let taken = 0
  const violations: string[] = []

  function record (result: Result, res: ServerResponse): void {
    results.push(result)
    const waiter = waiters.shift()
    if (waiter) {
      taken++
      waiter(result)
    }
    if (!res.headersSent && !res.destroyed) {
      const text = JSON.stringify(result.json)
      res.writeHead(result.status, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(text),
        connection: 'close'
      })
      res.end(text)
    }
  }

  const server = http.createServer(function handle (req, res) {
    let index = 0
    function step (err?: unknown): void {
      if (err !== undefined && err !== null) {
        record(describeError(err), res)
        return
      }
      const middleware = chain[index++]
      if (!middleware) {
        record({ status: 200, json: describeRequest(req) }, res)
        return
      }
      let calls = 0
      try {
        middleware(req, res, function next (nextErr?: unknown) {
          if (++calls > 1) violations.push(`${middleware.name || 'middleware'} called next ${calls} times`)
          else step(nextErr)
        })
      } catch (thrown) {
        record(describeError(thrown), res)
      }
    }
    step()
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port

  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    assert.deepEqual(violations, [])
  })

  return {
    port,
    results,
    request: (requestOptions) => sendRequest(port, requestOptions),
    post: (contentType, body, headers) => sendRequest(port, {
      body,
      headers: contentType === undefined ? { ...headers } : { 'content-type': contentType, ...headers }
    }),
    raw: (data, rawOptions) => rawRequest(port, data, rawOptions),
    nextResult: () => {
      if (taken < results.length) return Promise.resolve(results[taken++])
      return new Promise((resolve) => waiters.push(resolve))
    }
  }
}

/** One request with node:http, no agent (so the connection closes after the reply). */
export function sendRequest (port: number, options: RequestOptions = {}): Promise<Reply> {
  const { method = 'POST', path = '/', body } = options
  const headers: Record<string, string | number | string[]> = { ...options.headers }
  const chunked = Array.isArray(body)
  const hasHeader = (name: string) => Object.keys(headers).some((key) => key.toLowerCase() === name)
  if (body !== undefined && !chunked && !hasHeader('content-length') && !hasHeader('transfer-encoding')) {
    headers['content-length'] = Buffer.byteLength(body as string | Buffer)
  }
  if (chunked && !hasHeader('transfer-encoding')) headers['transfer-encoding'] = 'chunked'
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        try {
          resolve({ status: res.statusCode as number, headers: res.headers, json: JSON.parse(text) as Payload })
        } catch (err) {
          reject(new Error(`reply is not JSON (${res.statusCode}): ${text}`, { cause: err }))
        }
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    if (chunked) {
      for (const chunk of body as ReadonlyArray<string | Buffer>) req.write(chunk)
      req.end()
    } else {
      req.end(body as string | Buffer | undefined)
    }
  })
}

export type RawData = string | Buffer | ReadonlyArray<string | Buffer>

export interface RawOptions {
  /**
   * After writing: 'wait' keeps the socket open until the server closes it (default), 'end' half-closes
   * it, 'destroy' destroys it at once (an aborted request: resolves with no reply).
   */
  then?: 'wait' | 'end' | 'destroy'
}

export interface RawReply {
  /** 0 when the socket was destroyed before any reply. */
  status: number
  headers: Record<string, string>
  text: string
  json: Payload | undefined
}

/**
 * Writes `data` (chunks in order, each a separate write, waiting for 'drain') on a fresh TCP socket and reads
 * the whole HTTP/1.1 reply until the server closes the connection. Write the `Connection: close` header yourself.
 */
export function rawRequest (port: number, data: RawData, options: RawOptions = {}): Promise<RawReply> {
  const { then = 'wait' } = options
  const chunks = typeof data === 'string' || Buffer.isBuffer(data) ? [data] : data
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const received: Buffer[] = []
    let settled = false
    function finish (): void {
      if (settled) return
      settled = true
      resolve(parseRawReply(Buffer.concat(received)))
    }
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the reply arrived (the server stopped reading early) still counts as the reply.
      if (received.length > 0 || err.code === 'ECONNRESET' || err.code === 'EPIPE') finish()
      else if (!settled) {
        settled = true
        reject(err)
      }
    })
    socket.on('connect', async () => {
      // Large bodies wait for 'drain', so the client's memory stays bounded by a chunk.
      for (const chunk of chunks) {
        if (settled || socket.destroyed) return
        if (!socket.write(chunk)) await whenDrained(socket)
      }
      if (then === 'end') socket.end()
      if (then === 'destroy') socket.destroy()
    })
  })
}

/** Resolves on 'drain' or 'close', whichever comes first, and leaves no listener behind. */
function whenDrained (socket: net.Socket): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      socket.removeListener('drain', done)
      socket.removeListener('close', done)
      resolve()
    }
    socket.on('drain', done)
    socket.on('close', done)
  })
}

function parseRawReply (data: Buffer): RawReply {
  if (data.length === 0) return { status: 0, headers: {}, text: '', json: undefined }
  const text = data.toString('latin1')
  const split = text.indexOf('\r\n\r\n')
  const head = split === -1 ? text : text.slice(0, split)
  const [statusLine, ...headerLines] = head.split('\r\n')
  const headers: Record<string, string> = {}
  for (const line of headerLines) {
    const colon = line.indexOf(':')
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
  }
  const bodyText = split === -1 ? '' : data.subarray(Buffer.byteLength(text.slice(0, split + 4), 'latin1')).toString('utf8')
  let json: Payload | undefined
  try {
    json = JSON.parse(bodyText) as Payload
  } catch {
    json = undefined
  }
  return { status: Number(statusLine.split(' ')[1]), headers, text: bodyText, json }
}

/** Builds a raw HTTP/1.1 request head (ending with the blank line); `Connection: close` is added. */
export function rawHead (headers: Record<string, string | number>, requestLine = 'POST / HTTP/1.1'): string {
  const lines = [requestLine, 'Host: 127.0.0.1', 'Connection: close']
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`)
  return lines.join('\r\n') + '\r\n\r\n'
}

/** Encodes chunks in the chunked transfer coding, terminating chunk included. */
export function chunkedBody (chunks: ReadonlyArray<string | Buffer>): Buffer {
  const parts: Buffer[] = []
  for (const chunk of chunks) {
    const bytes = Buffer.from(chunk)
    if (bytes.length === 0) continue
    parts.push(Buffer.from(bytes.length.toString(16) + '\r\n'), bytes, Buffer.from('\r\n'))
  }
  parts.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(parts)
}

/** Starts any request listener (an Express app) on 127.0.0.1; it closes itself after the test. */
export async function listen (t: TestContext, listener: http.RequestListener): Promise<{ port: number, request: (options?: RequestOptions) => Promise<Reply>, post: TestServer['post'] }> {
  const server = http.createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
  return {
    port,
    request: (options) => sendRequest(port, options),
    post: (contentType, body, headers) => sendRequest(port, {
      body,
      headers: contentType === undefined ? { ...headers } : { 'content-type': contentType, ...headers }
    })
  }
}

/**
 * Writes a request head (and, with `body`, body bytes forever, or until the reply) on a TCP socket; resolves with
 * the status line's code, the reply's body and how many body bytes the client managed to write before the reply.
 */
export function sendHead (port: number, head: string, body?: Buffer): Promise<{ status: number, text: string, written: number }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let received = Buffer.alloc(0)
    let written = 0
    let replied = false
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      const text = received.toString('latin1')
      const end = text.indexOf('\r\n\r\n')
      if (end === -1) return
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, end))
      if (length === null || received.length < end + 4 + Number(length[1])) return
      replied = true
      socket.destroy()
      resolve({ status: Number(text.split(' ')[1]), text: text.slice(end + 4), written })
    })
    socket.on('error', (err) => { if (!replied) reject(err) })
    socket.on('close', () => { if (!replied) reject(new Error('closed without a reply after ' + written + ' body bytes')) })
    socket.on('connect', async () => {
      socket.write(head)
      if (body === undefined) return
      // An endless chunked body: one chunk after another, as long as the socket takes them.
      while (!replied && !socket.destroyed) {
        written += body.length
        if (!socket.write(body)) await new Promise((resolve) => { socket.once('drain', resolve); socket.once('close', resolve) })
      }
    })
  })
}
