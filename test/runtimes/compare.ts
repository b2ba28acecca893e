// What the runtime tests that compare a runtime with Node share: the Node server they are compared with, the raw
// `/drawn/<kind>` request, and how two answers are compared (with the differences that are allowed and why).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before } from 'node:test'
import { DIST, exchange, type Answer, type Runtime } from './runtime-servers'
import { OPTIONS_HEADER, outcomeOf, type Readers } from './web-routes'

// eslint-disable-next-line @typescript-eslint/no-require-imports
export const loadDist = (): Readers => require(DIST) as Readers

type NodeReader = (req: IncomingMessage, options: object) => Promise<unknown>

/** The ground truth: the same readers, from `dist/`, on Node's IncomingMessage, answering as web-routes.ts does. */
function createNodeServer (): http.Server {
  const bodykit = loadDist()
  const readers: Record<string, NodeReader> = {
    json: bodykit.readJson as NodeReader,
    text: bodykit.readText as NodeReader,
    raw: bodykit.readRaw as NodeReader,
    urlencoded: bodykit.readUrlencoded as NodeReader,
    multipart: bodykit.readMultipart as NodeReader
  }
  return http.createServer((req, res) => {
    const kind = String(req.url).slice('/drawn/'.length)
    const options = JSON.parse(String(req.headers[OPTIONS_HEADER])) as object
    void outcomeOf(() => readers[kind](req, options)).then(({ status, body }) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    })
  })
}

/** The Node server for the tests of the current `describe`: listening before them, closed after; `port()` once up. */
export function serveNode (): { port: () => number } {
  let server: http.Server | null = null
  let port = 0
  before(async () => {
    assert.ok(fs.existsSync(DIST), 'dist/index.js is missing: run `npm run build` first (npm test and npm run fuzz do)')
    server = createNodeServer()
    await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve))
    port = (server.address() as AddressInfo).port
  })
  after(() => new Promise<void>((resolve) => {
    server?.closeAllConnections()
    server?.close(() => { resolve() })
  }))
  return { port: () => port }
}

/** A request as bytes on the wire: its head (latin1, as an HTTP parser reads header bytes) and its body. */
export interface WireRequest { head: string, body: Buffer }

/**
 * A `/drawn/<kind>` request, the same for every server: the reader's options in OPTIONS_HEADER, the body with its exact
 * Content-Length (`'length'`) or chunked in the given pieces.
 */
export function drawnRequest (kind: string, headers: Record<string, string>, options: object, body: Buffer, pieces: readonly Buffer[] | 'length'): WireRequest {
  const framing = pieces === 'length' ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' }
  const all = { host: '127.0.0.1', ...headers, ...framing, [OPTIONS_HEADER]: JSON.stringify(options) }
  const head = `POST /drawn/${kind} HTTP/1.1\r\n` + Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n'
  if (pieces === 'length') return { head, body }
  // A chunk of no bytes would end the body: an empty body is the last chunk alone.
  const chunks = pieces.filter((piece) => piece.length > 0)
    .flatMap((piece) => [Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')])
  return { head, body: Buffer.concat([...chunks, Buffer.from('0\r\n\r\n')]) }
}

const bytesOf = (request: WireRequest): Buffer => Buffer.concat([Buffer.from(request.head, 'latin1'), request.body])

/** Sends a request and reads the answer. All of it goes as the body of `exchange`, which would write a head as UTF-8. */
export function send (port: number, request: WireRequest): Promise<Answer> {
  return exchange(port, '', bytesOf(request))
}

/** The request, for a failure message: replayable with any raw HTTP client. */
export const describeRequest = (request: WireRequest): string => `request (base64): ${bytesOf(request).toString('base64')}`

/** What an answer says, for a failure message. */
export const show = (answer: Answer): string => `${answer.status} ${answer.text.slice(0, 400)}`

export interface Compared { status: number | null, json: { type?: unknown, message?: unknown, [key: string]: unknown } | null }

/**
 * What is compared of an answer: its status and JSON, without the stack web-routes.ts adds to an error that is not
 * bodykit's (a zlib error keeps body-parser's shape, a 400 without a type): its frames are the runtime's own.
 */
export function comparable (answer: Answer): Compared {
  const json = answer.json as Compared['json']
  if (json === null || typeof json !== 'object' || !('stack' in json)) return { status: answer.status, json }
  const { stack: _stack, ...rest } = json
  return { status: answer.status, json: rest }
}

export type Allowance = 'engine message'

/**
 * Why a runtime's answer may differ from Node's and both be right, or null. Either way nothing else may differ.
 * A JSON SyntaxError's message is the engine's: JavaScriptCore's on Bun (as in web-servers.test.ts); the newer V8 of
 * Deno and workerd adds ` (line 1 column 7)` to Node 20's. Nothing else: a body's answer is its first error in byte
 * order however its chunks are grouped (issue 45), so a body over its limit, or a damaged compressed one, gets
 * the same answer on every runtime, whichever of its pieces came together.
 */
function allowedDifference (fromRuntime: Compared, fromNode: Compared): Allowance | null {
  return fromRuntime.json?.type === 'entity.parse.failed' && fromNode.json?.type === 'entity.parse.failed' ? 'engine message' : null
}

/** A JSON SyntaxError's message as compared: none from JavaScriptCore, V8's without the position newer versions add. */
function engineMessage (runtime: Runtime['name'] | 'node', message: unknown): unknown {
  if (runtime === 'bun') return null
  return String(message).replace(/ \(line \d+ column \d+\)$/, '')
}

/**
 * Asserts that a runtime answered as Node did, but for an allowed difference. Resolves with the allowed difference
 * met, or null when the answers are the same.
 */
export async function assertSameAnswer (runtime: Runtime['name'], fromRuntime: Answer, fromNode: Answer, why: string): Promise<Allowance | null> {
  const [a, b] = [comparable(fromRuntime), comparable(fromNode)]
  if (allowedDifference(a, b) === 'engine message') {
    const message = engineMessage(runtime, a.json?.message)
    assert.deepEqual({ ...a, json: { ...a.json, message } }, { ...b, json: { ...b.json, message: message === null ? null : engineMessage('node', b.json?.message) } }, why)
    return a.json?.message === b.json?.message ? null : 'engine message'
  }
  assert.deepEqual(a, b, why)
  return null
}
