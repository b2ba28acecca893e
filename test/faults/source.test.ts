// A source that fails at step k, for every k a reference run counts, over every parser and both entries: next (or the promise) settles once, and no file, descriptor or listener is left.
import { after, before, describe, it, type TestContext } from 'node:test'
import fs from 'node:fs'
import {
  ENCODINGS, FRAMINGS, NODE_FAULTS, NODE_SOURCES, SECOND_CALL_WINDOW_MS, SIZES, WEB_FAULTS, assertNone, buildBody, eventually,
  faultPoint, fdsBackTo, isAnswerable, listFolder, listenerCounts, listenersLeft, makeFolder, middlewareTargets, openFds, playNode,
  readerTargets, removeStored, settleReader, settledWithin, sleep, summarize, watchProcess, webSource,
  type Encoding, type Middleware, type ParserKind, type Played, type WebFault, type WireBody
} from './harness'

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

/** Every reference body of a parser kind over these encodings. */
function bodiesOf (kind: ParserKind, encodings: readonly Encoding[]): WireBody[] {
  const out: WireBody[] = []
  for (const encoding of encodings) for (const size of SIZES) for (const framing of FRAMINGS) out.push(buildBody(kind, encoding, size, framing))
  return out
}

/** Reads a Web Request whose stream fails at pull `fault.k`. */
async function playWeb (read: (request: Request) => Promise<unknown>, body: WireBody, fault: { k: number, mode: WebFault } | null): Promise<Played> {
  const { request, steps } = webSource(body, fault)
  const state = settleReader(read(request))
  const played: Played = { state, settled: false, steps: 0, listeners: [], handedOn: () => state.value }
  played.settled = await settledWithin(state)
  played.steps = steps()
  return played
}

interface Faulted { body: WireBody, k: number, mode: string, expectError: boolean, played: Promise<Played> }

/**
 * Runs a group: each body's reference run (it must succeed; it counts the steps K), then every fault at every
 * k = 1..K, all at once (a hung read costs the guard once per group, not once per run). Then the checks.
 */
async function runGroup (t: TestContext, folder: string | null, reference: (body: WireBody) => Promise<Played>,
  faulted: (body: WireBody, k: number) => Array<Omit<Faulted, 'body' | 'k'>>, bodies: WireBody[]): Promise<void> {
  const mark = watch.mark()
  const fds = openFds()
  const violations: string[] = []
  const runs: Faulted[] = []
  const points = new Map<string, number>()
  for (const body of bodies) {
    const ref = await reference(body)
    if (!ref.settled || ref.state.err !== undefined) {
      violations.push(`${body.label}, no fault: ${ref.settled ? summarize(ref.state.err) : 'never settled'}`)
      continue
    }
    removeStored(ref.handedOn())
    // SQLite's "fail the Nth step": K is what the reference run counted.
    for (let k = 1; k <= ref.steps; k++) {
      const point = faultPoint(body, k)
      points.set(point, (points.get(point) ?? 0) + 1)
      for (const run of faulted(body, k)) runs.push({ ...run, body, k })
    }
  }
  const results = await Promise.all(runs.map(async (run) => ({ run, played: await run.played })))
  await sleep(SECOND_CALL_WINDOW_MS)
  for (const { run, played } of results) {
    const where = `${run.body.label}, ${run.mode} at step ${run.k}/${run.body.chunks.length + 1} (${faultPoint(run.body, run.k)})`
    if (played.thrown !== undefined) violations.push(`${where}: the middleware threw ${summarize(played.thrown)}`)
    if (!played.settled) {
      violations.push(`${where}: never settled`)
      continue
    }
    if (played.state.calls !== 1) violations.push(`${where}: settled ${played.state.calls} times`)
    const err = played.state.err
    if (run.expectError && err === undefined) violations.push(`${where}: no error after the fault`)
    if (err !== undefined && !isAnswerable(err)) violations.push(`${where}: not an http error: ${summarize(err)}`)
    if (err === undefined) removeStored(played.handedOn())
    for (const { name, emitter, before } of played.listeners) {
      const left = listenersLeft(before, listenerCounts(emitter))
      if (left.length > 0) violations.push(`${where}: listeners left on the ${name}: ${left.join(', ')}`)
    }
  }
  if (folder !== null && !(await eventually(() => listFolder(folder).length === 0))) {
    violations.push(`files left in the upload folder: ${listFolder(folder).length}`)
  }
  const fdsNow = await fdsBackTo(fds)
  if (fdsNow > fds) violations.push(`descriptors: ${fdsNow} open, ${fds} before`)
  for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
  t.diagnostic(`${bodies.length} reference requests, ${[...points.values()].reduce((a, b) => a + b, 0)} fault points (${[...points].map(([p, c]) => `${p}: ${c}`).join('; ')}), ${runs.length} faulted runs`)
  assertNone(violations, 'violations')
}

describe('a Node request source failing at step k (middlewares, both entries and bodykit/multer)', () => {
  for (const target of middlewareTargets()) {
    for (const kind of NODE_SOURCES) {
      it(`${target.name} over ${kind === 'incoming' ? 'an IncomingMessage' : 'a PassThrough with headers'}: error, aborted, destroyed at every step`, async (t) => {
        const folder = makeFolder(target.name.replace(/ /g, '-'))
        folders.push(folder)
        const mw = target.make(folder)
        await runGroup(t, target.usesFolder ? folder : null,
          (body) => playNode(mw, body, kind, null),
          (body, k) => NODE_FAULTS.map((mode) => ({ mode, expectError: true, played: playNode(mw, body, kind, { k, mode }) })),
          bodiesOf(target.kind, target.encodings))
      })
    }
  }
})

describe('the promise readers over a failing source', () => {
  for (const target of readerTargets()) {
    it(`${target.name} over a Web Request whose stream errors or ends early at every step`, async (t) => {
      const folder = makeFolder(target.name.replace(/ /g, '-'))
      folders.push(folder)
      const read = (request: Request): Promise<unknown> => target.read(request, folder)
      await runGroup(t, target.usesFolder ? folder : null,
        (body) => playWeb(read, body, null),
        // A stream that ends early is a short body: an error or a shorter value, either way settled once.
        (body, k) => WEB_FAULTS.map((mode) => ({ mode, expectError: mode === 'error', played: playWeb(read, body, { k, mode }) })),
        bodiesOf(target.kind, ENCODINGS))
    })

    it(`${target.name} over an IncomingMessage: error, aborted, destroyed at every step`, async (t) => {
      const folder = makeFolder(target.name.replace(/ /g, '-'))
      folders.push(folder)
      const start: Middleware = (req, _res, next) => {
        target.read(req, folder).then((value) => {
          (req as { value?: unknown }).value = value
          next()
        }, (err: unknown) => { next(err ?? new Error('rejected with ' + String(err))) })
      }
      await runGroup(t, target.usesFolder ? folder : null,
        (body) => playNode(start, body, 'incoming', null),
        (body, k) => NODE_FAULTS.map((mode) => ({ mode, expectError: true, played: playNode(start, body, 'incoming', { k, mode }) })),
        bodiesOf(target.kind, ENCODINGS))
    })
  }
})
