// Over real HTTP, an app answers while the body is still arriving (503, Connection: close), or the client goes away with no answer: next (or the promise) settles once, the partial file is removed, the descriptors are closed.
import fs from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { after, before, describe, it } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import {
  SECOND_CALL_WINDOW_MS, assertNone, connect, eventually, fdsBackTo, fieldPart, filePart, keepSending, listFolder, makeFolder,
  multerMiddleware, MULTIPART_TYPE, openFds, requestHead, seededBytes, serve, settledWithin, sleep, summarize, watchProcess, within,
  type Middleware, type Next, type Served, type ServedRequest
} from './harness'

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

const DECLARED = 1024 * 1024
const SENT_FIRST = 64 * 1024

interface Target {
  name: string
  /** Whether files go to the upload folder (then the early answer waits for the partial file to exist). */
  disk: boolean
  make: (folder: string) => Middleware
  /** The request head and the first part of its body (of DECLARED bytes), and the rest. */
  body: () => { head: Buffer, first: Buffer, rest: Buffer }
}

function jsonBody (): { head: Buffer, first: Buffer, rest: Buffer } {
  const whole = Buffer.concat([Buffer.from('{"data":"'), Buffer.alloc(DECLARED - 11, 'a'), Buffer.from('"}')])
  return { head: requestHead({ 'Content-Type': 'application/json', 'Content-Length': String(DECLARED) }), first: whole.subarray(0, SENT_FIRST), rest: whole.subarray(SENT_FIRST) }
}

function formBody (): { head: Buffer, first: Buffer, rest: Buffer } {
  const start = Buffer.concat([fieldPart('name', 'early'), filePart('upload', 'big.bin', '')])
  // The file part's data runs to the declared end: the form is never complete, whatever arrives.
  const opening = start.subarray(0, start.length - 2)
  const whole = Buffer.concat([opening, seededBytes(DECLARED - opening.length, 9)])
  return { head: requestHead({ 'Content-Type': MULTIPART_TYPE, 'Content-Length': String(DECLARED) }), first: whole.subarray(0, SENT_FIRST), rest: whole.subarray(SENT_FIRST) }
}

/** A promise reader as a middleware: the promise's settlement is `next`'s. */
function asMiddleware (read: (req: IncomingMessage, res: ServerResponse) => Promise<unknown>): Middleware {
  return (req, res, next: Next) => {
    read(req, res).then(() => { next() }, (err: unknown) => { next(err ?? new Error('rejected')) })
  }
}

const targets: Target[] = [
  { name: 'default json()', disk: false, make: () => bodykit.json({ limit: '2mb' }) as unknown as Middleware, body: jsonBody },
  { name: 'legacy json()', disk: false, make: () => legacy.json({ limit: '2mb' }) as unknown as Middleware, body: jsonBody },
  { name: 'readJson(req, { res })', disk: false, make: () => asMiddleware((req, res) => bodykit.readJson(req, { limit: '2mb', res })), body: jsonBody },
  { name: 'default multipart() disk', disk: true, make: (directory) => bodykit.multipart({ files: { storage: 'disk', directory } }) as unknown as Middleware, body: formBody },
  { name: 'legacy multipart() disk', disk: true, make: (directory) => legacy.multipart({ files: { storage: 'disk', directory } }) as unknown as Middleware, body: formBody },
  { name: 'readMultipart(req, { res }) disk', disk: true, make: (directory) => asMiddleware((req, res) => bodykit.readMultipart(req, { files: { storage: 'disk', directory }, res })), body: formBody },
  { name: 'bodykit/multer diskStorage', disk: true, make: (folder) => multerMiddleware('disk', folder), body: formBody }
]

type Behaviour = 'answered, then the client stops sending' | 'answered, then the client keeps sending' | 'answered, then the client destroys the socket' |
  'no answer: the client destroys the socket mid-body'
const BEHAVIOURS: Behaviour[] = [
  'answered, then the client stops sending', 'answered, then the client keeps sending', 'answered, then the client destroys the socket',
  'no answer: the client destroys the socket mid-body'
]

interface Scenario {
  behaviour: Behaviour
  folder: string
  served: Served
  ready: (served: ServedRequest) => boolean
  body: { head: Buffer, first: Buffer, rest: Buffer }
}

/** A server for one behaviour, with its own upload folder; it answers 503 once the partial body is in, unless the behaviour has no answer. */
async function setUp (target: Target, behaviour: Behaviour): Promise<Scenario> {
  const folder = makeFolder('early')
  folders.push(folder)
  const body = target.body()
  /** The partial body is in: on disk for a file, read by the server for JSON. */
  const ready = (served: ServedRequest): boolean => target.disk ? listFolder(folder).length > 0 : served.req.socket.bytesRead >= body.head.length + body.first.length
  const answers = !behaviour.startsWith('no answer')
  const served = await serve(target.make(folder), {
    folder,
    answer: false,
    afterStart: (s) => {
      if (!answers) return
      // A load shedder or timeout answers while the upload goes on.
      void eventually(() => ready(s)).then(() => {
        if (s.res.headersSent) return
        s.res.writeHead(503, { 'content-type': 'text/plain', connection: 'close' })
        s.res.end('busy')
      })
    }
  })
  return { behaviour, folder, served, ready, body }
}

/** One connection of one behaviour: the violations it shows. */
async function play ({ behaviour, folder, served, ready, body }: Scenario, disk: boolean): Promise<string[]> {
  const violations: string[] = []
  const client = await connect(served.port, Buffer.concat([body.head, body.first]))
  const request = await served.arrived(0)
  if (!(await eventually(() => ready(request)))) violations.push('the partial body never arrived (test setup)')
  if (!behaviour.startsWith('no answer')) {
    const answered = await within(client.responded) ?? ''
    if (!answered.startsWith('HTTP/1.1 503')) violations.push(`no 503 reached the client: ${JSON.stringify(answered.slice(0, 40))}`)
    if (behaviour === 'answered, then the client keeps sending') await keepSending(client.socket, body.rest)
    if (behaviour === 'answered, then the client destroys the socket') client.socket.destroy()
  } else {
    client.socket.destroy()
  }
  if (request.thrown !== undefined) violations.push(`the middleware threw ${summarize(request.thrown)}`)
  if (!(await settledWithin(request.state))) violations.push('next was never called (the read never settled)')
  await sleep(SECOND_CALL_WINDOW_MS)
  if (request.state.calls > 1) violations.push(`next called ${request.state.calls} times`)
  if (request.state.calls === 1 && request.state.err === undefined) violations.push('next called without an error for a body that never ended')
  if (disk && !(await eventually(() => listFolder(folder).length === 0))) violations.push(`partial file left in the upload folder: ${listFolder(folder).join(', ')}`)
  // The server closes its side after a `Connection: close` answer; a client that stops sending still holds its own.
  if (!(await within(client.closed.then(() => true)))) {
    violations.push('the server never closed the connection')
    client.socket.destroy()
  }
  return violations.map((v) => `${behaviour}: ${v}`)
}

describe('an answer sent while the body is still arriving, and a client that goes away', () => {
  for (const target of targets) {
    it(`${target.name}: next once, the partial file removed, descriptors closed`, async () => {
      const mark = watch.mark()
      const scenarios = await Promise.all(BEHAVIOURS.map((behaviour) => setUp(target, behaviour)))
      const fds = openFds()
      try {
        // The four behaviours run side by side, each on its own server, connection and folder: a read that never settles costs the guard once.
        const violations = (await Promise.all(scenarios.map((scenario) => play(scenario, target.disk)))).flat()
        const now = await fdsBackTo(fds)
        if (now > fds) violations.push(`descriptors: ${now} open, ${fds} before (a file or socket left open)`)
        for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
        assertNone(violations, 'violations')
      } finally {
        await Promise.all(scenarios.map((scenario) => scenario.served.close()))
      }
    })
  }
})
