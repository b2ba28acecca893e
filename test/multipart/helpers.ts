// Shared by the multipart suites: a real server running one multipart middleware that answers JSON, a multipart body builder, raw-socket clients, and probes for descriptors and upload folders.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import { encode, rawRequest } from '../helpers/server'

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void

export const BOUNDARY = 'bodykitSecurityBoundary'
export const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY

/** One part: `--B`, its header lines as given, a blank line, its data, and the CRLF that belongs to the next delimiter. */
export function part (headers: string, data: string | Buffer = ''): Buffer {
  return Buffer.concat([Buffer.from('--' + BOUNDARY + '\r\n' + headers + '\r\n\r\n', 'latin1'), Buffer.from(data), Buffer.from('\r\n')])
}

/** A text field part. */
export function field (name: string, value: string | Buffer): Buffer {
  return part('Content-Disposition: form-data; name="' + name + '"', value)
}

/** A file part (application/octet-stream). */
export function file (name: string, filename: string, data: string | Buffer): Buffer {
  return part('Content-Disposition: form-data; name="' + name + '"; filename="' + filename + '"\r\nContent-Type: application/octet-stream', data)
}

/** The closing delimiter. */
export const CLOSE = Buffer.from('--' + BOUNDARY + '--\r\n')

/** A whole form: the parts, then the closing delimiter. */
export function form (...parts: Buffer[]): Buffer {
  return Buffer.concat([...parts, CLOSE])
}

/** Splits a body into pieces of `size` bytes (each becomes one socket write). */
export function pieces (body: Buffer, size = 64 * 1024): Buffer[] {
  const out: Buffer[] = []
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, at + size))
  return out
}

/** Open descriptors of this process (sockets included: wait for connections to close before comparing). */
export function openFds (): number {
  return fs.readdirSync('/proc/self/fd').length
}

/**
 * Waits for the descriptor count to come back to `baseline`, then returns it. No time bound (the kernel gives no
 * event for a closed descriptor, so this polls): a machine under load only makes it slower, and a descriptor that
 * is never closed ends the test at the runner's timeout.
 */
export async function settleFds (baseline: number): Promise<number> {
  let count = openFds()
  while (count > baseline) {
    await sleep(5)
    count = openFds()
  }
  return count
}

/** The names in an upload folder. */
export function listUploads (directory: string): string[] {
  return fs.readdirSync(directory)
}

/** A fresh, empty upload folder for one test, removed after it. */
export function uploadDir (t: TestContext): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-mp-'))
  t.after(() => { fs.rmSync(directory, { recursive: true, force: true }) })
  return directory
}

export function sleep (ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** The JSON the server answers: `{ body, files }` after success, `{ status, type, message, … }` after `next(err)`. */
export interface AnswerJson {
  body?: unknown
  files?: FileJson[]
  status?: number
  type?: string
  message?: string
  field?: string
  limit?: number
  [key: string]: unknown
}

/** A file of `req.files` as JSON: the buffer as its length (and its text when short). */
export interface FileJson {
  fieldName: string
  originalName: string
  mimeType: string
  encoding: string
  size: number
  bufferLength?: number
  text?: string
  fileName?: string
  path?: string
}

/** What the middleware did with one request, recorded on the server whether or not the client was still there. */
export interface Outcome {
  /** How often `next` was called (the server fails the test after more than once). */
  calls: number
  status: number
  json: AnswerJson
  /** The upload folder's listing when `next` was called (when the server was given one). */
  uploadsAtNext: string[] | null
}

export interface ServerOptions {
  /** An upload folder whose listing is taken when `next` is called. */
  directory?: string
  /** Runs after the middleware was called, e.g. to destroy the request mid-body. */
  afterStart?: (req: IncomingMessage, index: number) => void
}

export interface MultipartServer {
  port: number
  outcomes: Outcome[]
  /** Resolves with the outcome of the n-th request (0-based, in arrival order). */
  outcome: (index: number) => Promise<Outcome>
  /** How many requests arrived. */
  readonly count: number
  /** The server side of the last connection (its `bytesRead` tells what arrived). */
  readonly lastSocket: net.Socket | null
  /** The last request the server received. */
  readonly lastRequest: IncomingMessage | null
  /** Sends a multipart body (`FORM_TYPE` unless given) with its Content-Length and reads the answer. */
  send: (body: Buffer | Buffer[], options?: SendOptions) => Promise<Answer>
  /** A small valid form: proves the process and the server still answer. */
  ping: () => Promise<void>
}

export interface SendOptions {
  contentType?: string
  headers?: Record<string, string | number>
  /** Content-Length to declare (default: the body's length). */
  contentLength?: number
}

/** The answer a client read; status 0 when the connection closed without one. */
export interface Answer {
  status: number
  json: AnswerJson | undefined
  text: string
}

function describeFile (value: Record<string, unknown>): FileJson {
  const { buffer, ...rest } = value
  const out = { ...rest } as unknown as FileJson
  if (Buffer.isBuffer(buffer)) {
    out.bufferLength = buffer.length
    if (buffer.length <= 256) out.text = buffer.toString('latin1')
  }
  return out
}

function describeOutcome (req: IncomingMessage & { body?: unknown, files?: unknown }, err: unknown): { status: number, json: AnswerJson } {
  if (err !== undefined && err !== null) {
    const e = err as Record<string, unknown>
    const status = typeof e.status === 'number' ? e.status : 500
    const json: AnswerJson = { status, type: e.type as string | undefined, message: String(e.message) }
    for (const key of ['field', 'limit', 'name', 'code'] as const) if (e[key] !== undefined) (json as Record<string, unknown>)[key] = e[key]
    return { status, json }
  }
  const json: AnswerJson = { body: encode(req.body) }
  if ('files' in req) json.files = Array.isArray(req.files) ? req.files.map(describeFile) : req.files as FileJson[]
  return { status: 200, json }
}

/**
 * Starts a node:http server on 127.0.0.1 running `mw`, then answering JSON (see {@link AnswerJson}) with
 * `Connection: close`. Closes itself after the test; the test fails if `next` was called twice for a request.
 */
export async function startMultipartServer (t: TestContext, mw: Middleware, options: ServerOptions = {}): Promise<MultipartServer> {
  const outcomes: Outcome[] = []
  const waiters = new Map<number, (outcome: Outcome) => void>()
  const violations: string[] = []
  let count = 0
  let lastSocket: net.Socket | null = null
  let lastRequest: IncomingMessage | null = null
  const server = http.createServer((req, res) => {
    const index = count++
    lastRequest = req
    let calls = 0
    mw(req, res, (err) => {
      if (++calls > 1) {
        violations.push(`request ${index}: next called ${calls} times`)
        return
      }
      const uploadsAtNext = options.directory === undefined ? null : listUploads(options.directory)
      const { status, json } = describeOutcome(req, err)
      const outcome: Outcome = { calls, status, json, uploadsAtNext }
      Object.defineProperty(outcome, 'calls', { get: () => calls, enumerable: true })
      outcomes[index] = outcome
      waiters.get(index)?.(outcome)
      if (!res.headersSent && !res.destroyed) {
        const text = JSON.stringify(json)
        res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), connection: 'close' })
        res.end(text)
      }
    })
    options.afterStart?.(req, index)
  })
  const { port, send } = await listenForForms(t, server, violations, (socket) => { lastSocket = socket })
  return {
    port,
    outcomes,
    outcome: (index) => outcomes[index] !== undefined ? Promise.resolve(outcomes[index]) : new Promise((resolve) => waiters.set(index, resolve)),
    get count () { return count },
    get lastSocket () { return lastSocket },
    get lastRequest () { return lastRequest },
    send,
    ping: async () => {
      const answer = await send(form(field('ping', 'pong')))
      assert.equal(answer.status, 200, 'the server answers the next request')
      assert.deepEqual(answer.json?.body, { ping: 'pong' })
    }
  }
}

/**
 * Starts a test server on 127.0.0.1, reporting each connection, and closes it after the test (failing it on a
 * violation). Gives its port and a form sender bound to it.
 */
export async function listenForForms (t: TestContext, server: http.Server, violations: string[], onConnection: (socket: net.Socket) => void):
Promise<{ port: number, send: (body: Buffer | Buffer[], sendOptions?: SendOptions) => Promise<Answer> }> {
  server.on('connection', onConnection)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  closeAfterTest(t, server, violations)
  return { port, send: (body, sendOptions = {}) => sendForm(port, body, sendOptions) }
}

/** Sends a form over a raw socket (its Content-Type and Content-Length unless given) and reads the answer. */
export function sendForm (port: number, body: Buffer | Buffer[], sendOptions: SendOptions = {}): Promise<Answer> {
  const chunks = Buffer.isBuffer(body) ? [body] : body
  const length = sendOptions.contentLength ?? chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const head = requestHead({ 'Content-Type': sendOptions.contentType ?? FORM_TYPE, 'Content-Length': length, ...sendOptions.headers })
  return exchange(port, [Buffer.from(head, 'latin1'), ...chunks])
}

/** Closes a test's server after it, and fails the test on any recorded violation (a second next, an uncaught error). */
export function closeAfterTest (t: TestContext, server: http.Server, violations: string[]): void {
  t.after(async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
    assert.deepEqual(violations, [])
  })
}

/** An HTTP/1.1 request head (with the blank line), `Connection: close` included. */
export function requestHead (headers: Record<string, string | number>): string {
  const lines = ['POST / HTTP/1.1', 'Host: 127.0.0.1', 'Connection: close']
  for (const [name, value] of Object.entries(headers)) lines.push(name + ': ' + value)
  return lines.join('\r\n') + '\r\n\r\n'
}

/** Sends the chunks on a fresh TCP socket (test/helpers/server.ts `rawRequest`) and reads the reply as an {@link Answer}. */
export async function exchange (port: number, chunks: Buffer[]): Promise<Answer> {
  const reply = await rawRequest(port, chunks)
  return { status: reply.status, json: reply.json as AnswerJson | undefined, text: reply.text }
}

/**
 * A request cut off mid-body: writes the head (declaring `contentLength`) and `sent`, waits until the server has
 * read all of it, then either the client destroys its socket or the server calls `req.destroy(err)` (as a
 * timeout or a proxy does). `ready` can hold the cut back further (e.g. until a file is on disk); it is waited
 * for at most 5 s. Resolves once the client's socket is closed.
 */
export async function interruptMidBody (server: MultipartServer, sent: Buffer, contentLength: number,
  by: 'client' | 'server' = 'client', ready: () => boolean = () => true): Promise<void> {
  const head = Buffer.from(requestHead({ 'Content-Type': FORM_TYPE, 'Content-Length': contentLength }), 'latin1')
  const before = server.count
  const socket = net.connect(server.port, '127.0.0.1')
  socket.on('error', () => {})
  socket.resume()
  await new Promise((resolve) => socket.once('connect', resolve))
  await new Promise((resolve) => socket.write(Buffer.concat([head, sent]), resolve))
  // Polls the server side: the cut must come after the bytes arrived, or it is not "mid-file". Bounded, because
  // `ready` may hold only for a moment (a filter pending) that a poll can miss; the tests' outcomes hold either way.
  const until = Date.now() + 5000
  const arrived = (): boolean => server.count > before && (server.lastSocket?.bytesRead ?? 0) >= head.length + sent.length
  while (Date.now() < until && !(arrived() && ready())) await sleep(1)
  // The server may have closed the connection already (it answered an error with `connection: close`).
  const closed = socket.closed ? Promise.resolve() : new Promise((resolve) => socket.once('close', resolve))
  if (by === 'client') socket.destroy()
  else server.lastRequest?.destroy(new Error('the server gave up on this request'))
  await closed
}
