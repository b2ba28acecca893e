// HTTP/2 section: a hostile upload of up to 1 GiB to a 1 KiB raw route on an h2c session (bytes the server read, its CPU, the 413, how the stream ended), and a json stream's latency on the same session meanwhile.
import { fork, type ChildProcess } from 'node:child_process'
import type { IncomingMessage, ServerResponse } from 'node:http'
import http2, { type ClientHttp2Session, type ClientHttp2Stream, type Http2ServerRequest, type Http2ServerResponse, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { quantile, type Context, type Row, type SectionResult } from './report'
import { loadTarget } from './targets'

const MiB = 2 ** 20
const GiB = 2 ** 30
const CHUNK = 64 * 1024
/** The json stream sends its next request this long after the previous answer. */
const PACE_MS = 5
/** Fewer json round trips than this during an upload give no p99 (nor a ratio). */
const MIN_DURING = 20
const JSON_BODY = Buffer.from(JSON.stringify({ user: 'ada', id: 42, tags: ['a', 'b'], ok: true }))
const TARGETS = ['body-parser 2', 'bodykit']

type Framing = 'no content-length' | 'declared'

/** What the hostile client saw of its own upload. */
interface Upload {
  status: number | null
  /** From the request's start to the response headers; null when none came. */
  statusMs: number | null
  /** From the request's start to the stream's close. */
  endMs: number
  /** How the stream ended, from the client's side. */
  end: string
  rstCode: number | null
  /** Bytes the client got onto the stream (written, minus what was still buffered at close). */
  sentBytes: number
}

/** What the server saw of the hostile stream. */
interface ServerView {
  bytesRead: number
  cpuMicros: number
  serverRstCode: number
  heldMs: number
  sessionBytesRead: number
  /** 1 when Node emitted the server stream's 'close' by the time of the report. */
  closeEvent: number
  /** 1 when the server stream was destroyed by then, and the DATA bytes it still buffered (unread, held in memory). */
  destroyed: number
  bufferedBytes: number
}

interface Latency { p50: number, p99: number, count: number, stalled: number }

interface Outcome { upload: Upload, server: ServerView, idle: Latency, during: Latency, duringUpload: Upload }

const live = new Set<ChildProcess>()
let exitHook = false

function spawnServer (targetId: string): { port: () => Promise<number>, report: () => Promise<ServerView>, kill: () => void } {
  if (!exitHook) {
    exitHook = true
    process.on('exit', () => { for (const child of live) child.kill('SIGKILL') })
  }
  const child = fork(__filename, ['http2-child', targetId], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  live.add(child)
  child.once('exit', () => live.delete(child))
  const next = <T>(): Promise<T> => new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => reject(new Error(`http2 child exited (${code})`))
    child.once('message', (msg: T) => { child.off('exit', onExit); resolve(msg) })
    child.once('exit', onExit)
  })
  const ready = next<{ port: number }>()
  return {
    port: async () => (await ready).port,
    report: () => { const reply = next<ServerView>(); child.send({ cmd: 'report' }); return reply },
    kill: () => { child.kill('SIGKILL') }
  }
}

const codeNames = new Map<number, string>(Object.entries(http2.constants)
  .filter(([name]) => /^NGHTTP2_(NO_ERROR|PROTOCOL_ERROR|INTERNAL_ERROR|FLOW_CONTROL_ERROR|SETTINGS_TIMEOUT|STREAM_CLOSED|FRAME_SIZE_ERROR|REFUSED_STREAM|CANCEL|COMPRESSION_ERROR|CONNECT_ERROR|ENHANCE_YOUR_CALM|INADEQUATE_SECURITY|HTTP_1_1_REQUIRED)$/.test(name))
  .map(([name, value]) => [value as number, name.slice(8)]))

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The hostile client: 64 KiB writes with backpressure up to `size`, which it never stops for the response (a
 * 413 does not make it end early); it gives up, cancelling the stream, after `boundMs`.
 */
function upload (session: ClientHttp2Session, size: number, framing: Framing, boundMs: number): Promise<Upload> {
  return new Promise((resolve) => {
    const headers: OutgoingHttpHeaders = { ':method': 'POST', ':path': '/raw', 'content-type': 'application/octet-stream', 'x-bench-hostile': '1' }
    if (framing === 'declared') headers['content-length'] = size
    const t0 = performance.now()
    const req: ClientHttp2Stream = session.request(headers)
    const chunk = Buffer.alloc(CHUNK, 0x61)
    let status: number | null = null
    let statusMs: number | null = null
    let written = 0
    let ended = false
    let cancelled = false
    let closed = false
    req.on('response', (h) => { status = Number(h[':status']); statusMs = performance.now() - t0 })
    req.on('error', () => {})
    req.resume()
    const timer = setTimeout(() => {
      if (closed) return
      cancelled = true
      req.close(http2.constants.NGHTTP2_CANCEL)
    }, boundMs)
    req.on('close', () => {
      closed = true
      clearTimeout(timer)
      const code = req.rstCode ?? null
      const name = code === null ? 'none' : codeNames.get(code) ?? String(code)
      const end = cancelled
        ? `none in ${boundMs / 1000} s (client cancelled)`
        : ended && req.writableFinished ? `complete (body all sent), ${name}` : `reset by server, ${name}`
      resolve({ status, statusMs, endMs: performance.now() - t0, end, rstCode: code, sentBytes: written - req.writableLength })
    })
    const write = (): void => {
      while (!closed && !req.destroyed) {
        if (written >= size) {
          ended = true
          req.end()
          return
        }
        written += chunk.length
        if (!req.write(chunk)) return void req.once('drain', write)
      }
    }
    write()
  })
}

/** One json request on the session: resolves with its round trip in ms once the answer is in, rejects if the stream fails first. */
function jsonOnce (session: ClientHttp2Session): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now()
    const req = session.request({ ':method': 'POST', ':path': '/json', 'content-type': 'application/json', 'content-length': JSON_BODY.length })
    let status = 0
    req.on('response', (h) => { status = Number(h[':status']) })
    req.on('error', reject)
    req.resume()
    const done = (): void => { if (status === 200) resolve(performance.now() - t0); else reject(new Error(`json answered ${status}`)) }
    req.once('end', done)
    req.once('close', done)
    req.end(JSON_BODY)
  })
}

/** Paced json requests until `stop()` says so (checked between requests), or `count` of them; each waits at most `timeoutMs`. */
async function jsonLoop (session: ClientHttp2Session, stop: () => boolean, count: number, timeoutMs: number): Promise<Array<{ at: number, ms: number, stalled: boolean }>> {
  const samples: Array<{ at: number, ms: number, stalled: boolean }> = []
  while (!stop() && samples.length < count) {
    const at = performance.now()
    let timer: NodeJS.Timeout | undefined
    const ms = await Promise.race([jsonOnce(session).catch(() => null), new Promise<null>((resolve) => { timer = setTimeout(() => resolve(null), timeoutMs) })])
    clearTimeout(timer)
    samples.push({ at, ms: ms ?? performance.now() - at, stalled: ms === null })
    if (ms === null) break
    await sleep(PACE_MS)
  }
  return samples
}

function summarize (samples: Array<{ ms: number, stalled: boolean }>): Latency {
  const ms = samples.map((s) => s.ms)
  return ms.length
    ? { p50: quantile(ms, 0.5), p99: quantile(ms, 0.99), count: ms.length, stalled: samples.filter((s) => s.stalled).length }
    : { p50: NaN, p99: NaN, count: 0, stalled: 0 }
}

async function connect (port: number): Promise<ClientHttp2Session> {
  const session = http2.connect(`http://127.0.0.1:${port}`)
  session.on('error', () => {})
  await new Promise<void>((resolve, reject) => { session.once('connect', () => resolve()); session.once('error', reject) })
  return session
}

/** One fresh server process for one target and framing: warm-up, the upload alone, then the json stream idle and during a second upload. */
async function runCase (targetId: string, framing: Framing, size: number, boundMs: number, idleCount: number): Promise<Outcome> {
  const server = spawnServer(targetId)
  let session: ClientHttp2Session | null = null
  try {
    session = await connect(await server.port())
    // Warm-up: the json route, and a small over-limit upload that every target reads off and answers.
    for (let i = 0; i < 50; i++) await jsonOnce(session)
    await upload(session, 256 * 1024, 'no content-length', 5000)
    await upload(session, 256 * 1024, 'declared', 5000)
    await server.report()
    await sleep(200)

    // The upload alone: its server CPU, bytes read and ending, with nothing else on the session.
    const alone = await upload(session, size, framing, boundMs)
    const view = await server.report()
    await sleep(200)

    // The json stream on the same session: idle first, then next to the same upload again.
    const idle = summarize(await jsonLoop(session, () => false, idleCount, boundMs))
    let finished = false
    let start = 0
    const loop = jsonLoop(session, () => finished, Infinity, boundMs + 5000)
    await sleep(20)
    start = performance.now()
    const duringUpload = await upload(session, size, framing, boundMs)
    finished = true
    const samples = await loop
    const end = start + duringUpload.endMs
    const during = summarize(samples.filter((s) => s.at >= start && s.at <= end))
    await server.report()
    return { upload: alone, server: view, idle, during, duringUpload }
  } finally {
    session?.destroy()
    server.kill()
  }
}

export async function http2Section (ctx: Context): Promise<SectionResult> {
  const size = ctx.quick ? 256 * MiB : GiB
  const boundMs = ctx.quick ? 15_000 : 40_000
  const idleCount = ctx.quick ? 100 : 400
  const sizeLabel = size >= GiB ? `${size / GiB} GiB` : `${size / MiB} MiB`
  const targets = ctx.targets.filter((t) => TARGETS.includes(t.id))
  const rows: Row[] = []
  for (const framing of ['no content-length', 'declared'] as Framing[]) {
    const label = framing === 'declared' ? `${sizeLabel} declared` : `${sizeLabel}, no content-length`
    const outcomes = new Map<string, Outcome>()
    for (const target of targets) {
      const o = await runCase(target.id, framing, size, boundMs, idleCount)
      outcomes.set(target.id, o)
      const u = o.upload
      ctx.log(`  ${label} / ${target.id}: ${u.status ?? 'no answer'}${u.statusMs === null ? '' : ` at ${u.statusMs.toFixed(0)} ms`}, ${u.end} at ${(u.endMs / 1000).toFixed(2)} s, ` +
        `server read ${(o.server.bytesRead / MiB).toFixed(2)} MiB (session ${(o.server.sessionBytesRead / MiB).toFixed(2)} MiB), CPU ${(o.server.cpuMicros / 1000).toFixed(1)} ms, server stream ${o.server.closeEvent ? 'closed' : `not destroyed, ${o.server.bufferedBytes} B held`}, client sent ${(u.sentBytes / MiB).toFixed(2)} MiB; ` +
        `json p50/p99 ${o.idle.p50.toFixed(2)}/${o.idle.p99.toFixed(2)} ms idle, ${o.during.p50.toFixed(2)}/${o.during.p99.toFixed(2)} ms during (${o.during.count} requests, ${o.during.stalled} stalled; that upload: ${o.duringUpload.status ?? 'no answer'}, ${o.duringUpload.end})`)
    }
    for (const target of targets) {
      const o = outcomes.get(target.id) as Outcome
      const base = outcomes.get(target.baseline) ?? o
      const row = (metric: string, value: number | null, baseValue: number | null, unit: string, note?: string, extra?: Record<string, number>): Row => {
        const ok = note === undefined && value !== null && Number.isFinite(value) && baseValue !== null && Number.isFinite(baseValue) && baseValue > 0
        return {
          case: `${label}: ${metric}`, target: target.id, baseline: target.baseline, ratio: ok ? (value as number) / (baseValue as number) : null, value, unit,
          note: ok ? undefined : note ?? (value === null || !Number.isFinite(value) ? 'n/a' : `${value.toFixed(2)} ${unit}`),
          ...(extra ? { extra } : {})
        }
      }
      const u = o.upload
      const answered = u.status === 413 && u.statusMs !== null
      // A baseline that did not read the body (body-parser leaves an HTTP/2 body without content-length unread) is no yardstick.
      const comparable = base.upload.status === 413
      const absolute = (value: number, unit: string): string => `${value.toFixed(value < 10 ? 2 : 1)} ${unit}`
      const bytes = o.server.bytesRead / MiB
      const cpu = o.server.cpuMicros / 1000
      const srv = o.server
      // An upload over within a few json round trips (body-parser answering 200 unread) has no latency to speak of.
      const few = (value: number): string | undefined => o.during.count >= MIN_DURING && base.during.count >= MIN_DURING
        ? undefined
        : o.during.count ? `${absolute(value, 'ms')} (${o.during.count} request${o.during.count > 1 ? 's' : ''})` : 'no request'
      const serverStream = srv.closeEvent ? 'closed (\'close\' emitted)' : `closed on the wire, never destroyed (${(srv.bufferedBytes / 1024).toFixed(0)} KiB unread DATA held)`
      rows.push(
        row('bytes read by the server', bytes, base.server.bytesRead / MiB, 'MiB', comparable ? undefined : absolute(bytes, 'MiB'), { sessionBytesRead: srv.sessionBytesRead, clientSentBytes: u.sentBytes }),
        row('server CPU', cpu, base.server.cpuMicros / 1000, 'ms', comparable ? undefined : absolute(cpu, 'ms'), { heldMs: srv.heldMs }),
        row('time to 413', answered ? u.statusMs : null, comparable ? base.upload.statusMs : null, 'ms',
          answered ? (comparable ? undefined : `${(u.statusMs as number).toFixed(0)} ms`) : u.status === null ? 'none' : `none (${u.status} at ${(u.statusMs as number).toFixed(0)} ms)`),
        { case: `${label}: stream end (client)`, target: target.id, baseline: target.baseline, ratio: null, value: u.endMs, unit: 'ms', note: `${u.end} at ${(u.endMs / 1000).toFixed(1)} s`, extra: { rstCode: u.rstCode ?? -1, serverRstCode: srv.serverRstCode } },
        { case: `${label}: server stream after it`, target: target.id, baseline: target.baseline, ratio: null, value: null, unit: '', note: serverStream, extra: { closeEvent: srv.closeEvent, destroyed: srv.destroyed, bufferedBytes: srv.bufferedBytes } },
        row('json p50, no upload', o.idle.p50, base.idle.p50, 'ms', undefined, { requests: o.idle.count }),
        row('json p50, during upload', o.during.p50, base.during.p50, 'ms', few(o.during.p50), { requests: o.during.count, stalled: o.during.stalled }),
        row('json p99, no upload', o.idle.p99, base.idle.p99, 'ms'),
        row('json p99, during upload', o.during.p99, base.during.p99, 'ms', few(o.during.p99))
      )
    }
  }
  return {
    id: 'http2',
    title: `HTTP/2 (h2c, node:http2 compat): raw limit 1 KiB, a hostile upload of up to ${sizeLabel} on one session, a paced json stream beside it (ratio to body-parser 2; lower is better)`,
    legend: `One fresh server process per target and framing, one client session. The client writes 64 KiB at a time with backpressure and ignores the answer: it stops only when the stream closes, when the body is all sent, or after ${boundMs / 1000} s (then it cancels). "Bytes read" is what reached the server's JS for that stream; "server CPU" is the server process's, from the stream's arrival until it closed on the wire, with nothing else on the session; "server stream after it" says whether Node then emitted the server stream's 'close' (a stream reset by bodykit while paused with unread DATA is closed on the wire but was never destroyed during the run, holding that DATA); "time to 413" is when the client got the response headers. The json stream posts ${JSON_BODY.length} B to a json() route on the same session, ${PACE_MS} ms after each answer: its round trips with no upload, and during a second, identical upload (from its start to its stream's close). bodykit: at most 64 MiB read off (none of a body declared larger), the 413 after that, then RST_STREAM NO_ERROR on that stream alone 2 s after the response.`,
    rows
  }
}

/** Child: an h2c server with the target's raw (1 KiB) and json parsers; counts the hostile stream's bytes and CPU. */
function childServer (targetId: string): void {
  const parsers = loadTarget(targetId).parsers
  const raw = parsers.raw({ type: () => true, limit: '1kb' })
  const json = parsers.json()
  const view: ServerView = { bytesRead: 0, cpuMicros: 0, serverRstCode: -1, heldMs: 0, sessionBytesRead: 0, closeEvent: 0, destroyed: 0, bufferedBytes: 0 }
  let settleOpen: (() => void) | null = null
  let hostileStream: ServerHttp2Stream | null = null
  const server = http2.createServer()
  server.on('request', (req: Http2ServerRequest, res: Http2ServerResponse) => {
    if (req.url === '/raw' && req.headers['x-bench-hostile'] === '1') {
      const stream = req.stream as ServerHttp2Stream & { push: (chunk: Buffer | null, encoding?: BufferEncoding) => boolean }
      hostileStream = stream
      const socket = stream.session?.socket
      const session0 = socket?.bytesRead ?? 0
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      Object.assign(view, { bytesRead: 0, cpuMicros: 0, serverRstCode: -1, heldMs: 0, sessionBytesRead: 0, closeEvent: 0, destroyed: 0, bufferedBytes: 0 })
      // What nghttp2 hands to the stream's readable side: the DATA bytes the server took in for it.
      const push = stream.push
      stream.push = function (chunk, encoding) {
        if (chunk) view.bytesRead += chunk.length
        return push.call(this, chunk, encoding)
      }
      const settle = (): void => {
        const cpu = process.cpuUsage(cpu0)
        view.cpuMicros = cpu.user + cpu.system
        view.heldMs = performance.now() - t0
        view.sessionBytesRead = (socket?.bytesRead ?? 0) - session0
        settleOpen = null
      }
      settleOpen = settle
      stream.once('close', () => {
        view.closeEvent = 1
        if (settleOpen === settle) settle()
      })
    }
    const mw = req.url === '/raw' ? raw : json
    mw(req as unknown as IncomingMessage, res as unknown as ServerResponse, (err?: unknown) => {
      const e = err as { status?: number, type?: string } | undefined
      res.statusCode = e?.status ?? 200
      res.end(e ? String(e.type) : 'ok')
    })
  })
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }))
  process.on('message', async () => {
    // The parent asks once its client saw the stream end. A stream closed on the wire (reset sent or received)
    // is done with, whether or not Node emitted its 'close'; one still open gets a moment to close.
    for (let i = 0; i < 300 && settleOpen && hostileStream && !hostileStream.closed; i++) await sleep(10)
    settleOpen?.()
    const stream = hostileStream as ServerHttp2Stream | null
    if (stream) {
      view.serverRstCode = stream.rstCode ?? -1
      view.destroyed = stream.destroyed ? 1 : 0
      view.bufferedBytes = stream.readableLength
    }
    process.send?.({ ...view })
  })
  process.on('disconnect', () => process.exit(0))
}

if (process.argv[2] === 'http2-child') childServer(process.argv[3])
