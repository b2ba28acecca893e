// Drawn bodies across runtimes: the same request bytes over real HTTP to Bun.serve, Deno.serve and workerd (bodykit's built
// readers on the Web Request each hands over) and to a Node http server (the same readers on its IncomingMessage) get the
// same answer, value or error.
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import fc from 'fast-check'
import { drawn, encode, headersFor, split, type Drawn } from '../sources/drawn-bodies'
import { assertSameAnswer, describeRequest, drawnRequest, send, serveNode, show, type WireRequest } from './compare'
import { RUNTIMES, serveRuntime, type Runtime, type Server } from './runtime-servers'

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

/** A drawn request as bytes on the wire: the same for every server, exact or chunked in the drawn pieces. */
function requestOf (d: Drawn, limit = Math.max(1, d.payload.length + d.limit)): WireRequest {
  const wire = encode(d.payload, d.encoding)
  // drawnRequest frames the body itself.
  const { 'content-length': _length, 'transfer-encoding': _chunked, ...headers } = headersFor(d, wire)
  return drawnRequest(d.kind, headers, optionsFor(d, limit), wire, d.length === 'exact' ? 'length' : split(wire, d.pieces))
}

describe('drawn bodies across runtimes, against the same readers on Node\'s IncomingMessage', () => {
  const node = serveNode()

  /** Sends each drawn request to Node and to the runtime's server and compares the answers; counts what was allowed. */
  async function compareDrawn (t: TestContext, runtime: Runtime, s: Server, requests: fc.Arbitrary<Drawn>, runs: number): Promise<void> {
    t.diagnostic(`seed ${SEED} (RUNTIME_DRAWN_SEED replays it)`)
    const statuses = new Map<number | null, number>()
    const allowed = new Map<string, number>()
    let firstUnanswered: string | null = null
    const started = Date.now()
    try {
      await fc.assert(fc.asyncProperty(requests, async (d) => {
        const request = requestOf(d)
        const wire = describeRequest(request)
        const fromNode = await send(node.port(), request)
        assert.ok(fromNode.json !== null, `Node answered without the handler: ${show(fromNode)}\n${wire}`)
        const fromRuntime = await send(s.port, request).catch((err: Error) => {
          const message = `${runtime.name}: ${err.message}\n${JSON.stringify(d)}\n${wire}`
          firstUnanswered ??= message
          throw new Error(message + '\n' + s.output().slice(-2000))
        })
        statuses.set(fromRuntime.status, (statuses.get(fromRuntime.status) ?? 0) + 1)
        const why = `${runtime.name}: ${show(fromRuntime)}\nNode: ${show(fromNode)}\n${wire}\n${s.output().slice(-2000)}`
        const allowing = await assertSameAnswer(runtime.name, fromRuntime, fromNode, why)
        if (allowing !== null) allowed.set(allowing, (allowed.get(allowing) ?? 0) + 1)
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
