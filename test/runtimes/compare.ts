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

export type Allowance = 'engine message' | 'size or damage' | 'damage or its output'

/** A limit no drawn or corpus body reaches, compressed or not, below the one-call inflation's bound (the same code path). */
export const UNREACHED = 100_000

/**
 * A request whose refusal for its size or for a damage may come first by how its bytes are grouped into chunks (see
 * allowedDifference): what the difference is checked against.
 */
export interface SizeOrDamage {
  /** Node's answer to the same request with a limit of UNREACHED. */
  unlimited: () => Promise<Compared>
  /** A damaged compressed body's: what Node's zlib says of it inflated at once. */
  zlibMessage?: () => string | null
}

/**
 * Why a runtime's answer may differ from Node's and both be right, or null. Either way nothing else may differ.
 * - A JSON SyntaxError's message is the engine's: JavaScriptCore's on Bun (as in web-servers.test.ts); the newer V8 of
 *   Deno and workerd adds ` (line 1 column 7)` to Node 20's.
 * - A damaged compressed body may be refused for its size (413) or for its damage (zlib's 400, or a refusal of what
 *   the damage inflated to): which comes first depends on when its pieces arrive, not on the reader. Node itself gives
 *   the damage instead of the size for the same bytes when the chunks arrive 50 ms apart (measured on Node 20 with a
 *   flipped gzip form); a runtime that hands the reader each chunk as it comes may do so with no gap. The other
 *   refusal must then be the one Node gives with a limit never reached.
 * - So may a body over the limit sent chunked, compressed or not, with a damage before the limit: the reader refuses
 *   as soon as the bytes it was handed pass the limit (as raw-body does), unparsed, so a chunk that crosses the limit
 *   hides a damage in it. Deno 2.9.6 hands on as one the HTTP chunks that came in together (measured: chunks of 100,
 *   100, 100 and 50 bytes written at once reached the handler as one of 350, two times in three), Node each on its
 *   own. The multipart fuzz target accepts the same in process (any refusal of a body over the limit delivered in pieces).
 * - A damaged compressed body's zlib error may come before or after a refusal of what the damage inflated to
 *   (a malformed part header): Deno's zlib can stop at the damage before it hands on the bytes inflated ahead of
 *   it. Both are 400s, and the zlib error must be the one Node's zlib gives for the same bytes inflated at once.
 */
function allowedDifference (race: SizeOrDamage | null, fromRuntime: Compared, fromNode: Compared): Allowance | null {
  if (fromRuntime.json?.type === 'entity.parse.failed' && fromNode.json?.type === 'entity.parse.failed') return 'engine message'
  if (race === null) return null
  const size = (a: Compared): boolean => a.status === 413 && a.json?.type === 'entity.too.large'
  const damaged = (a: Compared): boolean => a.status !== null && a.status >= 400 && a.status < 500 && !size(a)
  if ((size(fromRuntime) && damaged(fromNode)) || (damaged(fromRuntime) && size(fromNode))) return 'size or damage'
  if (race.zlibMessage === undefined) return null
  const zlibError = (a: Compared): boolean => a.status === 400 && a.json?.type === null
  return fromRuntime.status === 400 && fromNode.status === 400 && zlibError(fromRuntime) !== zlibError(fromNode) ? 'damage or its output' : null
}

/** A JSON SyntaxError's message as compared: none from JavaScriptCore, V8's without the position newer versions add. */
function engineMessage (runtime: Runtime['name'] | 'node', message: unknown): unknown {
  if (runtime === 'bun') return null
  return String(message).replace(/ \(line \d+ column \d+\)$/, '')
}

/**
 * Asserts that a runtime answered as Node did, but for an allowed difference (`race`: how the request's refusal may
 * depend on its chunks, null if it may not). Resolves with the allowed difference met, or null when the answers are the same.
 */
export async function assertSameAnswer (runtime: Runtime['name'], fromRuntime: Answer, fromNode: Answer, why: string, race: SizeOrDamage | null): Promise<Allowance | null> {
  const [a, b] = [comparable(fromRuntime), comparable(fromNode)]
  const allowing = allowedDifference(race, a, b)
  if (allowing === 'engine message') {
    const message = engineMessage(runtime, a.json?.message)
    assert.deepEqual({ ...a, json: { ...a.json, message } }, { ...b, json: { ...b.json, message: message === null ? null : engineMessage('node', b.json?.message) } }, why)
    return a.json?.message === b.json?.message ? null : allowing
  }
  if (allowing === 'damage or its output' && race?.zlibMessage !== undefined) {
    const [zlibSide, otherSide] = a.json?.type === null ? [a, b] : [b, a]
    assert.equal(zlibSide.json?.message, race.zlibMessage(), `${why}\nthe zlib error is not Node's zlib's for these bytes`)
    assert.notEqual(otherSide.json?.type, undefined, why)
    return allowing
  }
  if (allowing === 'size or damage' && race !== null) {
    const unlimited = await race.unlimited()
    assert.deepEqual(a.status === 413 ? b : a, unlimited, `${why}\nNode, limit ${UNREACHED}: ${JSON.stringify(unlimited)}`)
    return allowing
  }
  assert.deepEqual(a, b, why)
  return null
}
