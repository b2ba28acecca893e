// Drawn bodies across runtimes: the same request bytes over real HTTP to Bun.serve, Deno.serve and workerd (bodykit's built
// readers on the Web Request each hands over) and to a Node http server (the same readers on its IncomingMessage) get the
// same answer, value or error.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import fc from 'fast-check'
import { drawn, encode, headersFor, split, type Drawn, type Kind } from '../sources/drawn-bodies'
import { DIST, exchange, RUNTIMES, serveRuntime, type Answer, type Runtime, type Server } from './runtime-servers'
import { OPTIONS_HEADER, outcomeOf, type Readers } from './web-routes'

const RUNS = Number(process.env.RUNTIME_DRAWN_RUNS ?? 120)
// One seed for every runtime, so that each is sent the same requests; fast-check prints it with a counterexample.
const SEED = process.env.RUNTIME_DRAWN_SEED !== undefined ? Number(process.env.RUNTIME_DRAWN_SEED) : Date.now() ^ (Math.random() * 0x100000000)

/**
 * Only framing that real HTTP carries: a right Content-Length, or chunked without one. A length that disagrees with the
 * body desynchronises the connection (the rest is taken for the next request, or the server waits for bytes that never
 * come), and one that is not a number is refused by the HTTP parser before any handler; both are proven in process
 * (test/web/request.test.ts). Only the default entry has the Web readers.
 */
const framed: fc.Arbitrary<Drawn> = fc.tuple(drawn, fc.constantFrom<Drawn['length']>('exact', 'absent'))
  .map(([d, length]) => ({ ...d, entry: 'default', length }))


/** The options test/web/request.test.ts reads with: the drawn limit, qs for urlencoded, files kept in memory. */
function optionsFor (d: Drawn, limit: number): object {
  if (d.kind === 'multipart') return { limit, files: { storage: 'memory' } }
  return { limit, ...(d.kind === 'urlencoded' ? { extended: true } : {}) }
}

/** A limit no drawn body reaches, compressed or not, below the one-call inflation's bound (the same code path). */
const UNREACHED = 100_000

/** A drawn request as bytes on the wire: the same for every server (its options in a header), chunked in the drawn pieces. */
function requestOf (d: Drawn, limit = Math.max(1, d.payload.length + d.limit)): { head: string, body: Buffer } {
  const wire = encode(d.payload, d.encoding)
  const headers = { host: '127.0.0.1', ...headersFor(d, wire), [OPTIONS_HEADER]: JSON.stringify(optionsFor(d, limit)) }
  const head = `POST /drawn/${d.kind} HTTP/1.1\r\n` + Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n'
  if (d.length === 'exact') return { head, body: wire }
  // A chunk of no bytes would end the body: an empty body is the last chunk alone.
  const chunks = split(wire, d.pieces).filter((piece) => piece.length > 0)
    .flatMap((piece) => [Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n')])
  return { head, body: Buffer.concat([...chunks, Buffer.from('0\r\n\r\n')]) }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadDist = (): Readers => require(DIST) as Readers

type NodeReader = (req: IncomingMessage, options: object) => Promise<unknown>

/** The ground truth: the same readers, from `dist/`, on Node's IncomingMessage, answering as web-routes.ts does. */
function createNodeServer (): http.Server {
  const bodykit = loadDist()
  const readers: Record<Kind, NodeReader> = {
    json: bodykit.readJson as NodeReader,
    text: bodykit.readText as NodeReader,
    raw: bodykit.readRaw as NodeReader,
    urlencoded: bodykit.readUrlencoded as NodeReader,
    multipart: bodykit.readMultipart as NodeReader
  }
  return http.createServer((req, res) => {
    const kind = String(req.url).slice('/drawn/'.length) as Kind
    const options = JSON.parse(String(req.headers[OPTIONS_HEADER])) as object
    void outcomeOf(() => readers[kind](req, options)).then(({ status, body }) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(body))
    })
  })
}

interface Compared { status: number | null, json: { type?: unknown, message?: unknown, [key: string]: unknown } | null }

/**
 * What is compared of an answer: its status and JSON, without the stack web-routes.ts adds to an error that is not
 * bodykit's (a zlib error keeps body-parser's shape, a 400 without a type): its frames are the runtime's own.
 */
function comparable (answer: Answer): Compared {
  const json = answer.json as Compared['json']
  if (json === null || typeof json !== 'object' || !('stack' in json)) return { status: answer.status, json }
  const { stack: _stack, ...rest } = json
  return { status: answer.status, json: rest }
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
 * - A damaged compressed body's zlib error may come before or after a refusal of what the damage inflated to
 *   (a malformed part header): Deno's zlib can stop at the damage before it hands on the bytes inflated ahead of
 *   it. Both are 400s, and the zlib error must be the one Node's zlib gives for the same bytes inflated at once.
 */
function allowedDifference (d: Drawn, fromRuntime: Compared, fromNode: Compared): 'engine message' | 'size or damage' | 'damage or its output' | null {
  if (fromRuntime.json?.type === 'entity.parse.failed' && fromNode.json?.type === 'entity.parse.failed') return 'engine message'
  if (d.encoding !== 'gzip-cut' && d.encoding !== 'gzip-flipped') return null
  const size = (a: Compared): boolean => a.status === 413 && a.json?.type === 'entity.too.large'
  const damage = (a: Compared): boolean => a.status !== null && a.status >= 400 && a.status < 500 && !size(a)
  if ((size(fromRuntime) && damage(fromNode)) || (damage(fromRuntime) && size(fromNode))) return 'size or damage'
  const zlibError = (a: Compared): boolean => a.status === 400 && a.json?.type === null
  return fromRuntime.status === 400 && fromNode.status === 400 && zlibError(fromRuntime) !== zlibError(fromNode) ? 'damage or its output' : null
}

/** What Node's zlib says of a damaged body inflated at once. */
function zlibMessage (d: Drawn): string | null {
  try {
    zlib.gunzipSync(encode(d.payload, d.encoding))
    return null
  } catch (err) {
    return (err as Error).message
  }
}

/** A JSON SyntaxError's message as compared: none from JavaScriptCore, V8's without the position newer versions add. */
function engineMessage (runtime: Runtime['name'] | 'node', message: unknown): unknown {
  if (runtime === 'bun') return null
  return String(message).replace(/ \(line \d+ column \d+\)$/, '')
}

/** What an answer says, for a failure message. */
const show = (answer: Answer): string => `${answer.status} ${answer.text.slice(0, 400)}`

describe('drawn bodies across runtimes, against the same readers on Node\'s IncomingMessage', () => {
  let node: http.Server | null = null
  let nodePort = 0

  before(async () => {
    assert.ok(fs.existsSync(DIST), 'dist/index.js is missing: run `npm run build` first (npm test and npm run fuzz do)')
    node = createNodeServer()
    await new Promise<void>((resolve) => node?.listen(0, '127.0.0.1', resolve))
    nodePort = (node.address() as AddressInfo).port
  })

  after(() => new Promise<void>((resolve) => {
    node?.closeAllConnections()
    node?.close(() => { resolve() })
  }))

  /** Sends each drawn request to Node and to the runtime's server and compares the answers; counts what was allowed. */
  async function compareDrawn (t: TestContext, runtime: Runtime, s: Server, requests: fc.Arbitrary<Drawn>, runs: number): Promise<void> {
    t.diagnostic(`seed ${SEED} (RUNTIME_DRAWN_SEED replays it)`)
    const statuses = new Map<number | null, number>()
    const allowed = new Map<string, number>()
    let firstUnanswered: string | null = null
    const started = Date.now()
    try {
      await fc.assert(fc.asyncProperty(requests, async (d) => {
        const { head, body } = requestOf(d)
        const wire = `request (base64): ${Buffer.concat([Buffer.from(head, 'latin1'), body]).toString('base64')}`
        const fromNode = await exchange(nodePort, head, body)
        assert.ok(fromNode.json !== null, `Node answered without the handler: ${show(fromNode)}\n${wire}`)
        const fromRuntime = await exchange(s.port, head, body).catch((err: Error) => {
          const message = `${runtime.name}: ${err.message}\n${JSON.stringify(d)}\n${wire}`
          firstUnanswered ??= message
          throw new Error(message + '\n' + s.output().slice(-2000))
        })
        statuses.set(fromRuntime.status, (statuses.get(fromRuntime.status) ?? 0) + 1)
        const why = `${runtime.name}: ${show(fromRuntime)}\nNode: ${show(fromNode)}\n${wire}\n${s.output().slice(-2000)}`
        const [a, b] = [comparable(fromRuntime), comparable(fromNode)]
        const allowing = allowedDifference(d, a, b)
        if (allowing === 'engine message') {
          const message = engineMessage(runtime.name, a.json?.message)
          assert.deepEqual({ ...a, json: { ...a.json, message } }, { ...b, json: { ...b.json, message: message === null ? null : engineMessage('node', b.json?.message) } }, why)
        } else if (allowing === 'damage or its output') {
          const [zlibSide, otherSide] = a.json?.type === null ? [a, b] : [b, a]
          assert.equal(zlibSide.json?.message, zlibMessage(d), `${why}\nthe zlib error is not Node's zlib's for these bytes`)
          assert.notEqual(otherSide.json?.type, undefined, why)
        } else if (allowing === 'size or damage') {
          const unlimited = requestOf(d, UNREACHED)
          const damage = comparable(await exchange(nodePort, unlimited.head, unlimited.body))
          assert.deepEqual(a.status === 413 ? b : a, damage, `${why}\nNode, limit ${UNREACHED}: ${JSON.stringify(damage)}`)
        } else {
          assert.deepEqual(a, b, why)
        }
        if (allowing !== null && !(allowing === 'engine message' && a.json?.message === b.json?.message)) allowed.set(allowing, (allowed.get(allowing) ?? 0) + 1)
      }), { numRuns: runs, seed: SEED, includeErrorInReport: true })
    } catch (err) {
      // A server that died answers no request after: the shrunk counterexample is any request, the first one is the cause.
      if (s.child.exitCode !== null || s.child.signalCode !== null) {
        assert.fail(`the ${runtime.name} server exited (${s.child.exitCode ?? s.child.signalCode}) at this request:\n${firstUnanswered}\n${s.output().slice(-3000)}`)
      }
      throw err
    }
    const count = (map: Map<unknown, number>): string => [...map].sort().map(([key, n]) => `${key} ×${n}`).join(', ') || 'none'
    t.diagnostic(`${runs} requests in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses: ${count(statuses)}; allowed differences: ${count(allowed)}`)
  }

  for (const runtime of RUNTIMES) {
    describe(`${runtime.name}@${runtime.version}`, () => {
      // Each run is two or three exchanges of a few milliseconds; the server outlives the longest run with its shrinking.
      const { ready } = serveRuntime(runtime, Math.max(120_000, RUNS * 300))

      it(`gives the value or error Node gives (${RUNS} drawn requests: damaged, compressed, chunked or not, charsets, limits around the size)`, async (t) => {
        const s = ready(t)
        if (s === null) return
        await compareDrawn(t, runtime, s, framed, RUNS)
      })
    })
  }
})
