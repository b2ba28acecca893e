// 10,000 requests that end in errors, aborts and early answers, over every parser, disk and memory storage, in-process and over real HTTP: afterwards the active resources, the descriptors and the upload folders are back to where they were, and the heap is flat.
import fs from 'node:fs'
import { after, before, it } from 'node:test'
import v8 from 'node:v8'
import vm from 'node:vm'
import bodykit from '../../src/index'
import {
  NODE_FAULTS, WEB_FAULTS, activeResources, assertNone, buildBody, connect, eventually, fieldPart, filePart, keepSending, listFolder, listenerCounts,
  listenersLeft, makeFolder, middlewareTargets, multerMiddleware, MULTIPART_TYPE, openFds, fdTargets, fdsOpenedSince, playNode, removeStored, requestHead,
  resourcesAbove, seededBytes, serve, settleReader, settledWithin, summarize, tick, watchProcess, within, webSource,
  type Middleware, type NodeFault, type Served, type ServedRequest, type WebFault, type WireBody
} from './harness'

v8.setFlagsFromString('--expose-gc')
const gc = vm.runInNewContext('gc') as () => void

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

const TOTAL = 10_000
const CHECKPOINT = 2_000
/** One request in this many goes over real HTTP (an early answer or a client that goes away). */
const HTTP_EVERY = 25
/** Heap growth allowed per request between the checkpoint and the end: a resource bound, not a timing one. */
const BYTES_PER_REQUEST = 200

/** One in-process request: a body through a middleware or reader, failing at step k, or a body the parser refuses. */
interface InProcess {
  label: string
  run: (i: number) => Promise<string | null>
}

/**
 * The heap's data after full collections, with a turn of the loop between them (finalizers and weak callbacks run
 * there): heapUsed less the code spaces, where the JIT keeps compiling paths as they warm (a few hundred KB over
 * the first 10,000 requests, then flat), which is no memory a request holds.
 */
async function heapAfterGc (): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc()
    await tick()
  }
  let used = 0
  for (const space of v8.getHeapSpaceStatistics()) if (!space.space_name.startsWith('code')) used += space.space_used_size
  return used
}

/** The in-process scenarios: every middleware over an IncomingMessage that fails at a drawn step, a refused body, and the readers over a failing Web Request. */
function inProcessScenarios (): InProcess[] {
  const scenarios: InProcess[] = []
  for (const target of middlewareTargets()) {
    const folder = makeFolder('leak')
    folders.push(folder)
    const mw = target.make(folder)
    const bodies: WireBody[] = [buildBody(target.kind, 'identity', 'small', 'length'), buildBody(target.kind, 'gzip', 'small', 'chunked')]
    // One large body in ten: enough to cross the streaming paths without making the run slow.
    const large = buildBody(target.kind, 'deflate', 'large', 'length')
    for (const mode of NODE_FAULTS) {
      scenarios.push({
        label: `${target.name} ${mode}`,
        run: async (i) => {
          const body = i % 10 === 0 ? large : bodies[i % bodies.length]
          const k = 1 + (i * 7) % (body.chunks.length + 1)
          return checkPlayed(await playNode(mw, body, 'incoming', { k, mode: mode as NodeFault }), true)
        }
      })
    }
    // A body the parser refuses (cut short, or not what it says): an error without a fault of the source.
    const refused = refusedBody(target.kind)
    if (refused !== null) scenarios.push({ label: `${target.name} refused`, run: async () => checkPlayed(await playNode(mw, refused, 'incoming', null), true) })
  }
  const readers: Array<[string, (request: Request) => Promise<unknown>, WireBody]> = [
    ['readJson', (request) => bodykit.readJson(request as never), buildBody('json', 'gzip', 'small', 'chunked')],
    ['readMultipart', (request) => bodykit.readMultipart(request as never, { files: true }), buildBody('multipart', 'identity', 'small', 'length')]
  ]
  for (const [name, read, body] of readers) {
    for (const mode of WEB_FAULTS) {
      scenarios.push({
        label: `${name} web ${mode}`,
        run: async (i) => {
          const k = 1 + (i * 5) % (body.chunks.length + 1)
          const state = settleReader(read(webSource(body, { k, mode: mode as WebFault }).request))
          if (!(await settledWithin(state))) return 'never settled'
          return state.calls === 1 ? null : `settled ${state.calls} times`
        }
      })
    }
  }
  return scenarios
}

/** A body its parser refuses: JSON cut short, a form without its closing delimiter; none for text and raw (any bytes are a body). */
function refusedBody (kind: WireBody['kind']): Pick<WireBody, 'headers' | 'chunks'> | null {
  if (kind === 'json') return { headers: { 'content-type': 'application/json', 'content-length': '5' }, chunks: [Buffer.from('{"a":')] }
  if (kind === 'multipart') {
    const body = Buffer.concat([fieldPart('a', '1'), filePart('f', 'f.bin', seededBytes(2000, 41))])
    return { headers: { 'content-type': MULTIPART_TYPE, 'content-length': String(body.length) }, chunks: [body] }
  }
  return null
}

/** Whether a run settled once with an error, leaving no listener; removes what a successful one stored. */
function checkPlayed (played: Awaited<ReturnType<typeof playNode>>, expectError: boolean): string | null {
  if (played.thrown !== undefined) return `threw ${summarize(played.thrown)}`
  if (!played.settled) return 'never settled'
  if (played.state.calls !== 1) return `settled ${played.state.calls} times`
  if (played.state.err === undefined) {
    removeStored(played.handedOn())
    if (expectError) return 'no error'
  }
  for (const { name, emitter, before: counts } of played.listeners) {
    const left = listenersLeft(counts, listenerCounts(emitter))
    if (left.length > 0) return `listeners left on the ${name}: ${left.join(', ')}`
  }
  return null
}

/** The real-HTTP share: json, multipart() to disk and multer to disk, each answered 503 early or left by its client. */
interface HttpTarget { name: string, served: Served, folder: string | null, count: number }

async function startHttpTargets (): Promise<HttpTarget[]> {
  const made: Array<[string, (folder: string) => Middleware, boolean]> = [
    ['json()', () => bodykit.json({ limit: '2mb' }) as unknown as Middleware, false],
    ['multipart() disk', (directory) => bodykit.multipart({ files: { storage: 'disk', directory } }) as unknown as Middleware, true],
    ['multer disk', (folder) => multerMiddleware('disk', folder), true]
  ]
  const targets: HttpTarget[] = []
  for (const [name, make, disk] of made) {
    const folder = makeFolder('leak-http')
    folders.push(folder)
    const target: HttpTarget = { name, folder: disk ? folder : null, count: 0, served: undefined as unknown as Served }
    target.served = await serve(make(folder), {
      folder,
      answer: false,
      afterStart: (s) => {
        if ((s.index % 4) === 3) return
        void eventually(() => s.req.socket.bytesRead > 0).then(() => {
          if (s.res.headersSent) return
          s.res.writeHead(503, { connection: 'close' })
          s.res.end('busy')
        })
      }
    })
    targets.push(target)
  }
  return targets
}

const HOW = ['answered, client stops', 'answered, client keeps sending', 'answered, client leaves', 'client leaves'] as const

/** One request over real HTTP; the request index on its server decides how it ends (answered, then the client stops / keeps sending / leaves; or left unanswered). */
async function runHttp (target: HttpTarget, index: number): Promise<string | null> {
  const json = target.name === 'json()'
  const first = json ? Buffer.concat([Buffer.from('{"a":"'), Buffer.alloc(16 * 1024, 'x')]) : Buffer.concat([fieldPart('a', '1'), filePart('f', 'f.bin', seededBytes(16 * 1024, 42)).subarray(0, 8 * 1024)])
  const head = requestHead({ 'Content-Type': json ? 'application/json' : MULTIPART_TYPE, 'Content-Length': String(256 * 1024) })
  const client = await connect(target.served.port, Buffer.concat([head, first]))
  const request: ServedRequest = await target.served.arrived(index)
  const how = index % 4
  if (how === 3) {
    await eventually(() => request.req.socket.bytesRead >= head.length + first.length && (target.folder === null || listFolder(target.folder).length > 0))
    client.socket.destroy()
  } else {
    await within(client.responded)
    if (how === 1) await keepSending(client.socket, Buffer.alloc(32 * 1024, 'y'))
    if (how === 2) client.socket.destroy()
  }
  const settled = await settledWithin(request.state)
  await within(client.closed)
  client.socket.destroy()
  // The server keeps nothing of a request once it is done.
  delete target.served.requests[index]
  if (!settled) return 'never settled'
  return request.state.calls === 1 ? null : `next called ${request.state.calls} times`
}

it(`${TOTAL.toLocaleString('en')} requests ending in errors, aborts and early answers: resources, descriptors and folders back to baseline, heap flat`, async (t) => {
  const mark = watch.mark()
  const scenarios = inProcessScenarios()
  const httpTargets = await startHttpTargets()
  const violations: string[] = []
  const failures = new Map<string, number>()
  const record = (what: string | null): void => { if (what !== null) failures.set(what, (failures.get(what) ?? 0) + 1) }
  /** A kind of request that hung once is not run again (each hang costs the guard): counted as skipped. */
  const hung = new Set<string>()
  const unlessHung = async (kind: string, run: () => Promise<string | null>): Promise<void> => {
    if (hung.has(kind)) return record(`${kind}: not run again after it hung`)
    const problem = await run()
    if (problem !== null && problem.endsWith('never settled')) hung.add(kind)
    record(problem === null ? null : `${kind}: ${problem}`)
  }
  const fds = openFds()
  const fdsAtStart = fdTargets()
  const resources = activeResources()
  let heapAtCheckpoint = 0
  let http = 0
  for (let i = 0; i < TOTAL; i++) {
    if (i % HTTP_EVERY === HTTP_EVERY - 1) {
      const target = httpTargets[http++ % httpTargets.length]
      const index = target.count++
      await unlessHung(`${target.name} ${HOW[index % HOW.length]}`, () => runHttp(target, index))
    } else {
      const scenario = scenarios[i % scenarios.length]
      await unlessHung(scenario.label, () => scenario.run(Math.floor(i / scenarios.length)))
    }
    if (i + 1 === CHECKPOINT) {
      await eventually(() => resourcesAbove(resources).length === 0, 15_000)
      heapAtCheckpoint = await heapAfterGc()
    }
  }
  for (const [what, count] of failures) violations.push(`${count}× ${what}`)
  // Lingering connections are closed LINGER_MS after their answer; timers and sockets go, the loop is as it was.
  if (!(await eventually(() => resourcesAbove(resources).length === 0, 15_000))) violations.push(`active resources above the baseline: ${resourcesAbove(resources).join(', ')}`)
  // The same window as the resources': once, in a full run under load, 7 descriptors were still open after the default
  // 5 s (no resource above the baseline); which ones is unknown, and the message now names them if it happens again.
  if (!(await eventually(() => openFds() <= fds, 15_000))) violations.push(`descriptors: ${openFds()} open, ${fds} before; opened since: ${fdsOpenedSince(fdsAtStart).join(', ')}`)
  for (const folder of folders) if (listFolder(folder).length > 0) violations.push(`files left in ${folder}: ${listFolder(folder).length}`)
  const heapAtEnd = await heapAfterGc()
  const perRequest = (heapAtEnd - heapAtCheckpoint) / (TOTAL - CHECKPOINT)
  t.diagnostic(`${scenarios.length} in-process scenarios, ${http} requests over real HTTP; heap after gc: ${(heapAtCheckpoint / 1e6).toFixed(1)} MB at ${CHECKPOINT}, ${(heapAtEnd / 1e6).toFixed(1)} MB at ${TOTAL} (${perRequest.toFixed(1)} bytes per request)`)
  if (perRequest > BYTES_PER_REQUEST) violations.push(`heap grew ${perRequest.toFixed(0)} bytes per request between request ${CHECKPOINT} and ${TOTAL} (bound: ${BYTES_PER_REQUEST})`)
  await Promise.all(httpTargets.map((target) => target.served.close()))
  for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
  assertNone(violations, 'violations')
})
