// Koa apps with bodykit/koa over real HTTP, under faults: the client leaves before the body, mid-body, mid-file and
// between parts; an earlier middleware answers while the body is still arriving (ctx.body set without awaiting next, or
// a timeout answering first); user hooks (onerror/onError, onFileBegin, a schema, detectJSON) throw, reject or are still
// pending when the client leaves. After each: at most one answer (exactly one while the client stays), the parser's
// promise settled once, no uncaught exception or unhandled rejection, no file left in uploadDir, no listener left on
// the request or its socket, and the descriptors back to their baseline (/proc/self/fd, as test/faults/ counts them).
// Then 12 rounds of every scenario on apps kept open (descriptors, active resources and uploadDir back to their
// baseline), and the two faults found, pinned: async hooks' rejections, and a form read after the response was sent.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type Koa from 'koa'
import bodykitKoa from '../../src/koa'
import {
  CLOSE_DELIMITER, BOUNDARY, MULTIPART_TYPE, SECOND_CALL_WINDOW_MS, activeResources, assertNone, connect, eventually, fdsBackTo, fieldPart, filePart,
  keepSending, listFolder, listenerCounts, listenersLeft, makeFolder, openFds, requestHead, resourcesAbove, seededBytes, sleep, summarize, watchProcess,
  within, type Client
} from '../faults/harness'
import { KOA_MAJORS, type KoaMiddleware, type MiddlewareFactory } from './apps'

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

const bodyParser = bodykitKoa as unknown as MiddlewareFactory
const koaBody = bodykitKoa.koaBody as unknown as MiddlewareFactory

// ---------------------------------------------------------------------------
// The bodies: JSON (one piece sent, the rest later), and a form of a field, a small file and a large one.
// ---------------------------------------------------------------------------

/** A request's head, its body, and where each fault point of it is. */
interface Body {
  head: Buffer
  whole: Buffer
  /** Bytes sent before an early answer or a client leaving mid-body. */
  midBody: number
  /** Multipart only: the end of the first file's part and the next delimiter (no header of the second part yet). */
  betweenParts?: number
  /** Multipart only: 64 KiB into the second file. */
  midFile?: number
}

const JSON_SIZE = 256 * 1024

function jsonBody (): Body {
  const whole = Buffer.concat([Buffer.from('{"data":"'), Buffer.alloc(JSON_SIZE - 11, 'a'), Buffer.from('"}')])
  return { head: requestHead({ 'Content-Type': 'application/json', 'Content-Length': String(whole.length) }), whole, midBody: 16 * 1024 }
}

function formBody (): Body {
  const field = fieldPart('name', 'koa faults')
  const first = filePart('first', 'first.txt', seededBytes(4096, 21))
  const second = filePart('second', 'second.bin', seededBytes(512 * 1024, 22))
  const whole = Buffer.concat([field, first, second, CLOSE_DELIMITER])
  const betweenParts = field.length + first.length + ('--' + BOUNDARY + '\r\n').length
  const secondHead = second.indexOf('\r\n\r\n') + 4
  return {
    head: requestHead({ 'Content-Type': MULTIPART_TYPE, 'Content-Length': String(whole.length) }),
    whole,
    midBody: field.length + first.length + secondHead + 16 * 1024,
    betweenParts,
    midFile: field.length + first.length + secondHead + 64 * 1024
  }
}

// ---------------------------------------------------------------------------
// The app: a recorder, the scenario's earlier middleware, the parser (its promise watched), and a handler.
// ---------------------------------------------------------------------------

/** What one request did on the server. */
interface Served {
  req: IncomingMessage
  res: ServerResponse
  /** Times the response's head was written (Node's implicit writeHead included). */
  heads: number
  /** The parser was called. */
  started: boolean
  /** Times the parser's promise settled, and how the first time. */
  settled: number
  error?: unknown
  readonly first: Promise<void>
  /** Resolves `first`. */
  readonly settle: () => void
  /** Listener counts of the request and its socket when the request reached the app. */
  baseline: { req: Record<string, number>, socket: Record<string, number> }
}

/** How an earlier middleware answers while the parser reads. */
type Early = 'none' | 'unawaited' | 'timeout-close' | 'timeout-keep-alive'

interface AppOptions {
  Koa: typeof Koa
  parser: KoaMiddleware
  early: Early
  /** When the earlier middleware answers. */
  ready?: (served: Served) => boolean
  /** What the handler after the parser does (default: answers with the body and the files' names). */
  handler?: (ctx: Koa.Context) => unknown
}

interface App {
  port: number
  requests: Served[]
  arrived: (index: number) => Promise<Served>
  close: () => Promise<void>
}

async function startApp (options: AppOptions): Promise<App> {
  const app = new options.Koa()
  app.silent = true
  const requests: Served[] = []
  const waiters = new Map<number, (served: Served) => void>()
  const byCtx = new WeakMap<object, Served>()
  app.use(async (ctx, next) => {
    let settle: () => void = () => {}
    const first = new Promise<void>((resolve) => { settle = resolve })
    const served: Served = {
      req: ctx.req,
      res: ctx.res,
      heads: 0,
      started: false,
      settled: 0,
      first,
      settle,
      baseline: { req: listenerCounts(ctx.req), socket: listenerCounts(ctx.req.socket) }
    }
    const writeHead = ctx.res.writeHead
    ctx.res.writeHead = function countedWriteHead (this: ServerResponse, ...args: Parameters<ServerResponse['writeHead']>) {
      served.heads++
      return writeHead.apply(this, args)
    } as ServerResponse['writeHead']
    byCtx.set(ctx, served)
    const index = requests.push(served) - 1
    waiters.get(index)?.(served)
    waiters.delete(index)
    await next()
  })
  if (options.early === 'unawaited') {
    app.use((ctx, next) => {
      // An app that answers at once and lets the rest run (a 202 for a queued job): next's rejection is the app's to catch.
      next().catch(() => {})
      ctx.status = 202
      ctx.body = 'accepted'
    })
  } else if (options.early !== 'none') {
    const ready = options.ready ?? (() => true)
    app.use(async (ctx, next) => {
      const served = byCtx.get(ctx) as Served
      const timedOut = eventually(() => ready(served) || served.settled > 0).then(() => 'timeout' as const)
      const winner = await Promise.race([next().then(() => 'done' as const), timedOut])
      if (winner === 'timeout' && served.settled === 0) {
        ctx.status = 503
        ctx.body = 'timeout'
        if (options.early === 'timeout-close') ctx.set('Connection', 'close')
      }
    })
  }
  app.use(async (ctx, next) => {
    const served = byCtx.get(ctx) as Served
    served.started = true
    try {
      await options.parser(ctx, next)
    } catch (err) {
      served.settled++
      if (served.settled === 1) served.error = err
      served.settle()
      throw err
    }
    served.settled++
    served.settle()
  })
  app.use(async (ctx) => {
    if (options.handler !== undefined) return await options.handler(ctx)
    const request = ctx.request as Koa.Request & { body?: unknown, files?: Record<string, unknown> }
    ctx.body = { body: typeof request.body, files: Object.keys(request.files ?? {}) }
  })
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    arrived: (index) => requests[index] !== undefined ? Promise.resolve(requests[index]) : new Promise((resolve) => waiters.set(index, resolve)),
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/** The responses a client received (status lines at the start of a message). */
function answersIn (text: string): number {
  return (text.match(/(^|\r\n)HTTP\/1\.1 \d{3} /g) ?? []).length
}

/** Whether the parser's promise settled within the guard. */
async function settled (served: Served): Promise<boolean> {
  return await within(served.first.then(() => true)) === true
}

/** What a request left behind once it is over: listeners on the request and its socket, an answer too many. */
async function leftovers (served: Served, client: Client, expectAnswer: boolean | null): Promise<string[]> {
  const out: string[] = []
  await sleep(SECOND_CALL_WINDOW_MS)
  if (served.settled > 1) out.push(`the parser settled ${served.settled} times`)
  if (served.heads > 1) out.push(`${served.heads} response heads written`)
  const answers = answersIn(client.received())
  if (answers > 1) out.push(`the client got ${answers} answers`)
  if (expectAnswer === true && answers !== 1) out.push(`the client got ${answers} answers, not 1`)
  if (expectAnswer === false && answers !== 0) out.push(`the client got ${answers} answers, after it left`)
  // Listeners are compared once the exchange is over: the response sent (or the connection gone).
  await eventually(() => served.res.writableFinished || served.res.destroyed || served.req.socket.destroyed)
  await eventually(() => listenersLeft(served.baseline.req, listenerCounts(served.req)).length === 0 && listenersLeft(served.baseline.socket, listenerCounts(served.req.socket)).length === 0, 1000)
  const onReq = listenersLeft(served.baseline.req, listenerCounts(served.req))
  const onSocket = listenersLeft(served.baseline.socket, listenerCounts(served.req.socket))
  if (onReq.length > 0) out.push(`listeners left on the request: ${onReq.join(', ')}`)
  if (onSocket.length > 0) out.push(`listeners left on the socket: ${onSocket.join(', ')}`)
  return out
}

// ---------------------------------------------------------------------------
// The parsers under test.
// ---------------------------------------------------------------------------

interface Target {
  name: string
  multipart: boolean
  make: (folder: string) => KoaMiddleware
  /** The app's handler: by default, for multipart, one that removes the files it is handed. */
  handler?: (ctx: Koa.Context) => void
}

const TARGETS: Target[] = [
  { name: 'bodyParser() (koa-bodyparser 4)', multipart: false, make: () => bodyParser() },
  { name: 'bodyParser({ parsedMethods }) (@koa/bodyparser 6)', multipart: false, make: () => bodyParser({ parsedMethods: ['POST', 'PUT', 'PATCH'] }) },
  { name: 'koaBody()', multipart: false, make: () => koaBody() },
  { name: 'koaBody({ multipart: true, formidable: { uploadDir } })', multipart: true, make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir } }) },
  {
    name: 'koaBody({ multipart: true, formidable: { uploadDir, keepExtensions, onFileBegin } })',
    multipart: true,
    make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir, keepExtensions: true, onFileBegin: (name: string, file: { filepath: string }) => { if (name === 'first') file.filepath = path.join(uploadDir, 'moved-' + path.basename(file.filepath)) } } })
  },
  {
    name: 'koaBody({ multipart: true, removeFilesAfterResponse: true, formidable: { uploadDir, onPart, filter, filename, hashAlgorithm } })',
    multipart: true,
    make: (uploadDir) => koaBody({
      multipart: true,
      removeFilesAfterResponse: true,
      formidable: { uploadDir, hashAlgorithm: 'sha1', onPart: (part: unknown, handle: (part: unknown) => void) => { handle(part) }, filter: () => true, filename: (name: string, ext: string, part: { name: string }) => part.name + '-' + name + ext }
    }),
    handler: leavingFiles
  }
]

/**
 * The handler of a koaBody() app: the files it is handed are the app's (koaBody() keeps them after a successful
 * response, as koa-body does), so it removes them, as an app that owns them does. A file left is then one bodykit
 * did not hand on and did not remove.
 */
function removingTheirs (ctx: Koa.Context): void {
  const files = (ctx.request as { files?: Record<string, { filepath: string } | Array<{ filepath: string }>> }).files ?? {}
  for (const value of Object.values(files)) {
    for (const file of Array.isArray(value) ? value : [value]) fs.rmSync(file.filepath, { force: true })
  }
  ctx.body = { files: Object.keys(files) }
}

/** The handler of an app with `removeFilesAfterResponse`: it leaves the files to bodykit. */
function leavingFiles (ctx: Koa.Context): void {
  ctx.body = { files: Object.keys((ctx.request as { files?: object }).files ?? {}) }
}

// ---------------------------------------------------------------------------
// The scenarios.
// ---------------------------------------------------------------------------

interface Scenario {
  name: string
  early: Early
  multipartOnly?: boolean
  /** Bytes of the body sent first. */
  sent: (body: Body) => number
  /** Once the server has those (and the parser has them where it matters): what the client does. */
  then: 'leave' | 'send-rest' | 'wait'
  /** Whether the client must get one answer (true), none (false) or either (null). */
  answer: boolean | null
  /** Whether the parser must settle without an error (true), with one (false), or either (null). */
  succeeds: boolean | null
}

const SCENARIOS: Scenario[] = [
  { name: 'the client leaves before the body', early: 'none', sent: () => 0, then: 'leave', answer: false, succeeds: null },
  { name: 'the client leaves mid-body', early: 'none', sent: (b) => b.midBody, then: 'leave', answer: false, succeeds: false },
  { name: 'the client leaves between parts', early: 'none', multipartOnly: true, sent: (b) => b.betweenParts as number, then: 'leave', answer: false, succeeds: false },
  { name: 'the client leaves mid-file', early: 'none', multipartOnly: true, sent: (b) => b.midFile as number, then: 'leave', answer: false, succeeds: false },
  { name: 'an earlier middleware answers without awaiting next; the client sends the rest', early: 'unawaited', sent: (b) => b.midBody, then: 'send-rest', answer: true, succeeds: true },
  { name: 'an earlier middleware answers without awaiting next; the client leaves', early: 'unawaited', sent: (b) => b.midBody, then: 'leave', answer: true, succeeds: false },
  { name: 'a timeout middleware answers 503 first with Connection: close; the client keeps sending', early: 'timeout-close', sent: (b) => b.midBody, then: 'send-rest', answer: true, succeeds: false },
  { name: 'a timeout middleware answers 503 first (keep-alive); the client sends the rest', early: 'timeout-keep-alive', sent: (b) => b.midBody, then: 'send-rest', answer: true, succeeds: true },
  { name: 'a timeout middleware answers 503 first (keep-alive); the client leaves', early: 'timeout-keep-alive', sent: (b) => b.midBody, then: 'leave', answer: true, succeeds: false }
]

/** The server has read `bytes` of the body (and, for a form, the parser has started storing the files it should have). */
function hasRead (served: Served, head: number, bytes: number, folder: string, files: number): boolean {
  return served.started && served.req.socket.bytesRead >= head + bytes && listFolder(folder).length >= files
}

/** Files the parser must have started storing once `sent` bytes of the form are in. */
function filesBy (body: Body, sent: number): number {
  if (body.betweenParts === undefined || sent < body.betweenParts) return 0
  return sent >= (body.midFile as number) ? 2 : 1
}

/** A target's apps on one Koa, one per kind of early answer, kept across requests, and their upload folder. */
interface Bench {
  KoaClass: typeof Koa
  target: Target
  folder: string
  body: Body
  apps: Map<Early, App>
  /** When the app's earlier middleware answers, for the request being played. */
  ready: (served: Served) => boolean
}

function bench (KoaClass: typeof Koa, target: Target): Bench {
  const folder = makeFolder('koa')
  folders.push(folder)
  return { KoaClass, target, folder, body: target.multipart ? formBody() : jsonBody(), apps: new Map(), ready: () => true }
}

async function appOf (b: Bench, early: Early): Promise<App> {
  let app = b.apps.get(early)
  if (app === undefined) {
    app = await startApp({ Koa: b.KoaClass, parser: b.target.make(b.folder), early, ready: (served) => b.ready(served), handler: b.target.multipart ? b.target.handler ?? removingTheirs : undefined })
    b.apps.set(early, app)
  }
  return app
}

async function closeBench (b: Bench): Promise<void> {
  await Promise.all([...b.apps.values()].map((app) => app.close()))
}

/** One request of a scenario on the bench's app for its kind of early answer: the violations. */
async function play (b: Bench, scenario: Scenario): Promise<string[]> {
  const { body, folder } = b
  const sent = scenario.sent(body)
  const files = filesBy(body, sent)
  const ready = b.ready = (served: Served): boolean => hasRead(served, body.head.length, sent, folder, files)
  const app = await appOf(b, scenario.early)
  const violations: string[] = []
  const client = await connect(app.port, Buffer.concat([body.head, body.whole.subarray(0, sent)]))
  const served = await app.arrived(app.requests.length)
  if (!(await eventually(() => ready(served)))) violations.push('the body sent never reached the parser (test setup)')
  // The parser gets its turn at what arrived before the client acts.
  await sleep(10)
  if (scenario.answer === true && !(await within(client.responded))) violations.push('no answer reached the client')
  if (scenario.then === 'leave') client.socket.destroy()
  else if (scenario.then === 'send-rest') {
    await keepSending(client.socket, body.whole.subarray(sent))
    if (scenario.early !== 'timeout-close') await within(client.responded)
  }
  if (!(await settled(served))) violations.push('the parser never settled')
  else if (scenario.succeeds === true && served.error !== undefined) violations.push(`the parser failed: ${summarize(served.error)}`)
  else if (scenario.succeeds === false && served.error === undefined) violations.push('the parser succeeded on a body that never ended')
  violations.push(...await leftovers(served, client, scenario.answer))
  client.socket.destroy()
  await within(client.closed)
  if (!(await eventually(() => listFolder(folder).length === 0))) violations.push(`files left in uploadDir: ${listFolder(folder).join(', ')}`)
  return violations.map((v) => `${scenario.name}: ${v}`)
}

/** The scenarios a target meets. */
function scenariosOf (target: Target): Scenario[] {
  return SCENARIOS.filter((scenario) => scenario.multipartOnly !== true || target.multipart)
}

describe('bodykit/koa under client aborts and early answers', () => {
  for (const { name: major, Koa: KoaClass } of KOA_MAJORS) {
    for (const target of TARGETS) {
      it(`${major}, ${target.name}: one answer at most, the parser settled once, no file, listener or descriptor left`, async () => {
        const mark = watch.mark()
        const fds = openFds()
        const violations: string[] = []
        const b = bench(KoaClass, target)
        try {
          for (const scenario of scenariosOf(target)) violations.push(...await play(b, scenario))
        } finally {
          await closeBench(b)
        }
        const now = await fdsBackTo(fds)
        if (now > fds) violations.push(`descriptors: ${now} open, ${fds} before`)
        for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
        assertNone(violations, 'violations')
      })
    }
  }
})

const LEAK_ROUNDS = Number(process.env.KOA_FAULT_ROUNDS ?? 12)

describe('bodykit/koa: nothing piles up over many faulted requests', () => {
  const { name: major, Koa: KoaClass } = KOA_MAJORS[1]
  it(`${major}: ${LEAK_ROUNDS} rounds of every scenario on each target, on apps kept open: descriptors, active resources and uploadDir back to their baseline`, async (t) => {
    const mark = watch.mark()
    const benches = TARGETS.map((target) => bench(KoaClass, target))
    // The apps are started first: their listening sockets are the baseline.
    for (const b of benches) for (const scenario of scenariosOf(b.target)) await appOf(b, scenario.early)
    const fds = openFds()
    const resources = activeResources()
    const failures = new Map<string, number>()
    let requests = 0
    try {
      for (let round = 0; round < LEAK_ROUNDS; round++) {
        for (const b of benches) {
          for (const scenario of scenariosOf(b.target)) {
            requests++
            for (const violation of await play(b, scenario)) failures.set(`${b.target.name}, ${violation}`, (failures.get(`${b.target.name}, ${violation}`) ?? 0) + 1)
          }
        }
      }
      const violations = [...failures].map(([what, count]) => `${count}× ${what}`)
      if (!(await eventually(() => resourcesAbove(resources).length === 0))) violations.push(`active resources above the baseline: ${resourcesAbove(resources).join(', ')}`)
      const now = await fdsBackTo(fds)
      if (now > fds) violations.push(`descriptors: ${now} open, ${fds} before`)
      for (const b of benches) if (listFolder(b.folder).length > 0) violations.push(`files left in ${b.folder}: ${listFolder(b.folder).length}`)
      for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
      t.diagnostic(`${requests} faulted requests over ${benches.length} targets`)
      assertNone(violations, 'violations')
    } finally {
      await Promise.all(benches.map(closeBench))
    }
  })
})

// ---------------------------------------------------------------------------
// User hooks that throw, reject, or are still pending when the client leaves.
// ---------------------------------------------------------------------------

/** A Standard Schema whose validate misbehaves. */
function schemaThat (validate: () => unknown): object {
  return { '~standard': { version: 1, vendor: 'koa-faults', validate } }
}

/** A form of a field and two small files, whole. */
function smallForm (): { head: Buffer, whole: Buffer } {
  const whole = Buffer.concat([fieldPart('name', 'hooks'), filePart('first', 'first.txt', seededBytes(3000, 31)), filePart('second', 'second.bin', seededBytes(3000, 32)), CLOSE_DELIMITER])
  return { head: requestHead({ 'Content-Type': MULTIPART_TYPE, 'Content-Length': String(whole.length) }), whole }
}

function wholeJson (text: string, type = 'application/json'): { head: Buffer, whole: Buffer } {
  const whole = Buffer.from(text)
  return { head: requestHead({ 'Content-Type': type, 'Content-Length': String(whole.length) }), whole }
}

interface HookCase {
  name: string
  /** The parser, given the upload folder and a `left` promise that resolves once the client has gone. */
  make: (folder: string, left: Promise<void>) => KoaMiddleware
  request: () => { head: Buffer, whole: Buffer }
  /** The status the client must get; null: the client leaves once `leaveWhen` holds, and gets none. */
  status: number | null
  leaveWhen?: () => boolean
  /** What the parser's promise must settle with: the error thrown (the same object), or none (NO_ERROR). */
  settles: unknown
}

const NO_ERROR = Symbol('no error')
/** The read ended by the client leaving: 400 `request.aborted`. */
const ABORTED = Symbol('request aborted')

const onErrorThat = (how: 'throws' | 'rejects', thrown: Error) => how === 'throws'
  ? () => { throw thrown }
  : async () => { await sleep(1); throw thrown }

function hookCases (): HookCase[] {
  const cases: HookCase[] = []
  for (const how of ['throws', 'rejects'] as const) {
    const thrown = new Error(`the handler ${how}`)
    cases.push(
      { name: `koa-bodyparser 4's onerror ${how}`, make: () => bodyParser({ onerror: onErrorThat(how, thrown) }), request: () => wholeJson('{bad'), status: 500, settles: thrown },
      { name: `@koa/bodyparser 6's onError ${how}`, make: () => bodyParser({ onError: onErrorThat(how, thrown) }), request: () => wholeJson('{bad'), status: 500, settles: thrown },
      { name: `koaBody's onError ${how} (JSON)`, make: () => koaBody({ onError: onErrorThat(how, thrown) }), request: () => wholeJson('{bad'), status: 500, settles: thrown },
      {
        name: `koaBody's onError ${how} (a form over maxFiles)`,
        make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir, maxFiles: 1 }, onError: onErrorThat(how, thrown) }),
        request: smallForm,
        status: 500,
        settles: thrown
      },
      {
        name: `koaBody's onFileBegin ${how}`,
        make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir, onFileBegin: onErrorThat(how, thrown) } }),
        request: smallForm,
        status: 500,
        settles: thrown
      },
      {
        name: `koaBody's onPart ${how}`,
        make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir, onPart: onErrorThat(how, thrown) } }),
        request: smallForm,
        status: 500,
        settles: thrown
      },
      {
        name: `koaBody's onPart ${how} after handing the part back`,
        make: (uploadDir) => koaBody({ multipart: true, formidable: { uploadDir, onPart: how === 'throws' ? (part: unknown, handle: (part: unknown) => void) => { handle(part); throw thrown } : async (part: unknown, handle: (part: unknown) => void) => { handle(part); await sleep(1); throw thrown } } }),
        request: smallForm,
        status: 500,
        settles: thrown
      },
      ...(how === 'throws'
        ? [
            { name: 'koaBody\'s filter throws', make: (uploadDir: string) => koaBody({ multipart: true, formidable: { uploadDir, filter: onErrorThat(how, thrown) } }), request: smallForm, status: 500, settles: thrown },
            { name: 'koaBody\'s filename throws', make: (uploadDir: string) => koaBody({ multipart: true, formidable: { uploadDir, filename: onErrorThat(how, thrown) } }), request: smallForm, status: 500, settles: thrown }
          ]
        : []),
      { name: `a schema that ${how} (bodyParser)`, make: () => bodyParser({ schema: schemaThat(how === 'throws' ? () => { throw thrown } : () => Promise.reject(thrown)) }), request: () => wholeJson('{"a":1}'), status: 500, settles: thrown },
      { name: `a schema that ${how}, with onerror (bodyParser)`, make: () => bodyParser({ schema: schemaThat(how === 'throws' ? () => { throw thrown } : () => Promise.reject(thrown)), onerror: (_err: unknown, ctx: Koa.Context) => { ctx.status = 422 } }), request: () => wholeJson('{"a":1}'), status: 422, settles: NO_ERROR }
    )
  }
  const detected = new Error('detectJSON threw')
  cases.push({ name: 'detectJSON throws', make: () => bodyParser({ detectJSON: () => { throw detected } }), request: () => wholeJson('{"a":1}', 'text/plain'), status: 500, settles: detected })
  // onFileBegin still pending when the client goes: the file is not written yet, so the form is not whole; the read ends
  // with request.aborted, and nothing is written once the hook settles.
  let leftSeen = false
  cases.push({
    name: 'koaBody\'s onFileBegin still pending when the client leaves, then moving the file',
    make: (uploadDir, left) => koaBody({
      multipart: true,
      formidable: {
        uploadDir,
        onFileBegin: async (_name: string, file: { filepath: string }) => {
          leftSeen = true
          await left
          file.filepath = path.join(uploadDir, 'moved-' + path.basename(file.filepath))
        }
      }
    }),
    request: smallForm,
    status: null,
    leaveWhen: () => leftSeen,
    settles: ABORTED
  })
  let rejectSeen = false
  const late = new Error('onFileBegin rejected after the client left')
  cases.push({
    name: 'koaBody\'s onFileBegin still pending when the client leaves, then rejecting',
    make: (uploadDir, left) => koaBody({ multipart: true, formidable: { uploadDir, onFileBegin: async () => { rejectSeen = true; await left; throw late } } }),
    request: smallForm,
    status: null,
    leaveWhen: () => rejectSeen,
    settles: late
  })
  return cases
}

async function runHook (KoaClass: typeof Koa, c: HookCase): Promise<string[]> {
  const folder = makeFolder('koa-hooks')
  folders.push(folder)
  let leave: () => void = () => {}
  const left = new Promise<void>((resolve) => { leave = resolve })
  const app = await startApp({ Koa: KoaClass, parser: c.make(folder, left), early: 'none', handler: removingTheirs })
  const violations: string[] = []
  try {
    const { head, whole } = c.request()
    const client = await connect(app.port, Buffer.concat([head, whole]))
    const served = await app.arrived(0)
    if (c.leaveWhen !== undefined) {
      if (!(await eventually(c.leaveWhen))) violations.push('the hook was never called (test setup)')
      client.socket.destroy()
      await eventually(() => served.req.socket.destroyed)
      leave()
    }
    if (!(await settled(served))) violations.push('the parser never settled')
    else if (c.settles === NO_ERROR && served.error !== undefined) violations.push(`the parser failed: ${summarize(served.error)}`)
    else if (c.settles === ABORTED && (served.error as { type?: unknown } | undefined)?.type !== 'request.aborted') violations.push(`the parser settled with ${summarize(served.error)}, not request.aborted`)
    else if (c.settles !== NO_ERROR && c.settles !== ABORTED && served.error !== c.settles) violations.push(`the parser settled with ${summarize(served.error)}, not the error thrown`)
    if (c.status !== null) {
      const answer = await within(client.responded) ?? ''
      if (!answer.startsWith(`HTTP/1.1 ${c.status} `)) violations.push(`answered ${JSON.stringify(answer.slice(0, 20))}, not ${c.status}`)
    }
    violations.push(...await leftovers(served, client, c.status !== null ? true : null))
    client.socket.destroy()
    if (!(await eventually(() => listFolder(folder).length === 0))) violations.push(`files left in uploadDir: ${listFolder(folder).join(', ')}`)
  } finally {
    await app.close()
  }
  return violations
}

describe('bodykit/koa with user hooks that throw, reject, or are pending when the client leaves', () => {
  for (const { name: major, Koa: KoaClass } of KOA_MAJORS) {
    for (const c of hookCases()) {
      it(`${major}, ${c.name}: one answer, the parser settled once, no unhandled rejection, no file or descriptor left`, async () => {
        const mark = watch.mark()
        const fds = openFds()
        const violations = await runHook(KoaClass, c)
        const now = await fdsBackTo(fds)
        if (now > fds) violations.push(`descriptors: ${now} open, ${fds} before`)
        for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
        assertNone(violations, 'violations')
      })
    }
  }

})

describe('koaBody(): a response sent before the form was read', () => {
  for (const { name: major, Koa: KoaClass } of KOA_MAJORS) {
    it(`${major}: keepExtensions names and onFileBegin places the files as ever (they failed with 500 multipart.storage.failed: the stage had removed the files); after the early 202, every file is the app's`, async () => {
      const folder = makeFolder('koa-early')
      folders.push(folder)
      const kept = makeFolder('koa-kept')
      folders.push(kept)
      let seen: { error?: unknown, files?: Record<string, { filepath: string, newFilename: string }> } = {}
      const parser = koaBody({
        multipart: true,
        formidable: { uploadDir: folder, keepExtensions: true, onFileBegin: (name: string, file: { filepath: string, newFilename: string }) => { if (name === 'first') file.filepath = path.join(kept, file.newFilename) } }
      })
      const app = await startApp({
        Koa: KoaClass,
        parser: async (ctx, next) => {
          try {
            await parser(ctx, next)
          } catch (err) {
            seen = { error: err }
            throw err
          }
        },
        early: 'unawaited',
        handler: (ctx) => { seen = { files: (ctx.request as { files?: typeof seen.files }).files } }
      })
      try {
        const { head, whole } = smallForm()
        const client = await connect(app.port, head)
        assert.match(await within(client.responded) ?? '', /^HTTP\/1\.1 202 /)
        await keepSending(client.socket, whole)
        const served = await app.arrived(0)
        assert.ok(await settled(served))
        assert.equal(seen.error, undefined, summarize(seen.error))
        const files = seen.files as NonNullable<typeof seen.files>
        assert.deepEqual(Object.keys(files), ['first', 'second'])
        assert.equal(path.extname(files.first.filepath), '.txt')
        assert.equal(path.extname(files.second.filepath), '.bin')
        assert.deepEqual(fs.readdirSync(kept), [files.first.newFilename])
        // The response (202) succeeded: the files are kept, as koa-body keeps them.
        await sleep(50)
        assert.deepEqual(listFolder(folder), [files.second.newFilename])
        client.socket.destroy()
      } finally {
        await app.close()
      }
    })
  }
})
