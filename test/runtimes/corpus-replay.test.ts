// Replays the Jazzer.js corpora of the web and multipart fuzz targets over real HTTP to Bun.serve, Deno.serve and workerd
// (bodykit's built readers on the Web Request each hands over): every input gets the answer, value or error, that the
// same readers give on Node's IncomingMessage.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import { sourceOf, splitAt } from '../fuzz/targets/harness'
import * as multipartTarget from '../fuzz/targets/multipart'
import * as webTarget from '../fuzz/targets/web'
import { assertSameAnswer, describeRequest, drawnRequest, loadDist, send, serveNode, show, type WireRequest } from './compare'
import { RUNTIMES, serveRuntime, type Answer, type Runtime, type Server } from './runtime-servers'
import type { Readers } from './web-routes'

const CORPUS = path.join(__dirname, '../fuzz/corpus')
/** Inputs the in-process replay reports as todo (a finding not fixed yet, a hang perhaps): not sent here either. */
const KNOWN = JSON.parse(fs.readFileSync(path.join(__dirname, '../fuzz/known-findings.json'), 'utf8')) as Record<string, string>

type Kind = 'json' | 'text' | 'urlencoded' | 'raw' | 'multipart'

/** One request to replay: an input of a target, in one framing. */
interface Replay {
  name: string
  request: WireRequest
  /** Node's answer, asked once and compared with every runtime's. */
  fromNode?: Answer
}

/** The requests of both corpora and what was not sent, with why: the same for every runtime. */
interface Corpus {
  replays: Replay[]
  inputs: Map<string, number>
  skipped: Map<string, number>
  /** Inputs sent otherwise than the target delivers them in process. */
  adapted: Map<string, number>
}

const countIn = <K>(map: Map<K, number>, key: K): void => { map.set(key, (map.get(key) ?? 0) + 1) }
const listOf = (map: Map<unknown, number>): string => [...map].sort().map(([key, n]) => `${key} ×${n}`).join('; ') || 'none'

function filesOf (target: string): string[] {
  const dir = path.join(CORPUS, target)
  return fs.existsSync(dir) ? fs.readdirSync(dir).sort() : []
}

/** Options as JSON carries them: the same, but for keys left undefined (which the readers take as unset). */
function withoutUndefined (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined).map(([key, field]) => [key, withoutUndefined(field)]))
}

/** Why a request cannot be replayed as the target reads it, or null. */
async function whyNotSent (readers: Readers, kind: Kind, headers: Record<string, string>, options: object): Promise<string | null> {
  for (const [name, value] of Object.entries(headers)) {
    try {
      // The same check as Node's HTTP client; Node's parser refuses the same bytes (control characters but tab).
      http.validateHeaderValue(name, value)
    } catch {
      return `a ${name} Node's HTTP client and parser refuse`
    }
  }
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(options)), withoutUndefined(options))) return 'options JSON does not carry'
  const reader = { json: readers.readJson, text: readers.readText, urlencoded: readers.readUrlencoded, raw: readers.readRaw, multipart: readers.readMultipart }[kind] as (request: Request, options: object) => Promise<unknown>
  try {
    // A request without a body or Content-Type is not read: the only refusal left is of the options.
    await reader(new Request('http://localhost/', { method: 'POST' }), options)
  } catch (err) {
    return `options the reader refuses (${String(err)})`
  }
  return null
}

/** Reads both corpora into requests, once. */
async function readCorpus (readers: Readers): Promise<Corpus> {
  const corpus: Corpus = { replays: [], inputs: new Map(), skipped: new Map(), adapted: new Map() }
  const skip = (target: string, file: string, why: string | null): boolean => {
    if (KNOWN[`${target}/${file}`] !== undefined) why = 'a known finding (test/fuzz/known-findings.json)'
    if (why !== null) countIn(corpus.skipped, `${target}: ${why}`)
    return why !== null
  }

  for (const file of filesOf('web')) {
    countIn(corpus.inputs, 'web')
    const input = webTarget.draw(sourceOf(fs.readFileSync(path.join(CORPUS, 'web', file))))
    const { wire, options } = webTarget.requestOf(input)
    // drawnRequest frames the body itself.
    const { 'content-length': _length, 'transfer-encoding': _chunked, ...headers } = wire.headers
    if (skip('web', file, await whyNotSent(readers, input.kind, headers, options))) continue
    // A Content-Length that is not the body's desynchronises a real connection (the rest is taken for the next
    // request, or the server waits for bytes that never come): those inputs go with the exact length instead.
    if (input.framing !== 'length' && input.framing !== 'chunked') countIn(corpus.adapted, `web: '${input.framing}' framing sent with the exact length`)
    const body = Buffer.concat(wire.chunks)
    const pieces = input.framing === 'chunked' ? wire.chunks : 'length'
    const request = (limit: number): WireRequest => drawnRequest(input.kind, headers, { ...options, limit }, body, pieces)
    corpus.replays.push({ name: `web/${file} (${input.kind}, ${pieces === 'length' ? 'length' : 'chunked'})`, request: request(input.limit) })
  }

  for (const file of filesOf('multipart')) {
    countIn(corpus.inputs, 'multipart')
    const input = multipartTarget.draw(sourceOf(fs.readFileSync(path.join(CORPUS, 'multipart', file))))
    const options = multipartTarget.optionsOf(input)
    const headers = { 'content-type': input.contentType }
    if (skip('multipart', file, await whyNotSent(readers, 'multipart', headers, options))) continue
    // The target's deliveries that HTTP carries: whole with its length, and chunked in the drawn pieces.
    const pieces = splitAt(input.body, input.splits)
    corpus.replays.push({ name: `multipart/${file} (length)`, request: drawnRequest('multipart', headers, options, input.body, 'length') })
    corpus.replays.push({ name: `multipart/${file} (chunked)`, request: drawnRequest('multipart', headers, options, input.body, pieces) })
  }
  return corpus
}

/** Both corpora as requests, read for the first runtime that runs (dist/ is there by then: checked before it). */
let corpusRead: Promise<Corpus> | null = null

describe('the web and multipart fuzz corpora across runtimes, against the same readers on Node\'s IncomingMessage', () => {
  const node = serveNode()

  /**
   * Sends every request to the runtime and compares with Node's; fails with every difference. One at a time: the whole
   * corpus (about 1,500 requests) takes 2 to 4 s a runtime on 2 busy cores, and a few connections at once saved little.
   */
  async function replayAll (t: TestContext, runtime: Runtime, s: Server, corpus: Corpus): Promise<void> {
    const statuses = new Map<number | null, number>()
    const allowed = new Map<string, number>()
    const differences: string[] = []
    const started = Date.now()
    for (const replay of corpus.replays) {
      const wire = describeRequest(replay.request)
      const fromNode = replay.fromNode ??= await send(node.port(), replay.request)
      assert.ok(fromNode.json !== null, `${replay.name}: Node answered without the handler: ${show(fromNode)}\n${wire}`)
      let fromRuntime: Answer
      try {
        fromRuntime = await send(s.port, replay.request)
      } catch (err) {
        // A server that died answers nothing after: this request is the cause.
        assert.ok(s.child.exitCode === null && s.child.signalCode === null, `the ${runtime.name} server exited at ${replay.name}:\n${wire}\n${s.output().slice(-3000)}`)
        differences.push(`${replay.name}: ${runtime.name} did not answer: ${(err as Error).message}\n${wire}`)
        continue
      }
      countIn(statuses, fromRuntime.status)
      try {
        const allowing = await assertSameAnswer(runtime.name, fromRuntime, fromNode, `${replay.name}\n${runtime.name}: ${show(fromRuntime)}\nNode: ${show(fromNode)}\n${wire}`)
        if (allowing !== null) countIn(allowed, allowing)
      } catch (err) {
        differences.push((err as Error).message)
      }
    }
    t.diagnostic(`${corpus.replays.length} requests from ${listOf(corpus.inputs)} inputs in ${((Date.now() - started) / 1000).toFixed(1)} s`)
    t.diagnostic(`skipped: ${listOf(corpus.skipped)}`)
    t.diagnostic(`adapted: ${listOf(corpus.adapted)}`)
    t.diagnostic(`statuses: ${listOf(statuses)}; allowed differences: ${listOf(allowed)}`)
    assert.ok(corpus.replays.length > 0, `no corpus input to replay in ${CORPUS}`)
    assert.equal(differences.length, 0, `${differences.length} answers differ from Node's:\n\n${differences.join('\n\n')}\n\n${runtime.name}'s output:\n${s.output().slice(-3000)}`)
  }

  for (const runtime of RUNTIMES) {
    describe(`${runtime.name}@${runtime.version}`, () => {
      const { ready } = serveRuntime(runtime)

      it('gives the value or error Node gives for every input of the web and multipart corpora', async (t) => {
        const s = ready(t)
        if (s === null) return
        corpusRead ??= readCorpus(loadDist())
        await replayAll(t, runtime, s, await corpusRead)
      })
    })
  }
})
