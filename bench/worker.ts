// Child process for one target: `server` (node:http, counts requests and CPU on IPC cue), `koa` (the same for a Koa app)
// or `memory` (50 concurrent 1 MiB reads).
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { chunksOf, fakeResponse, feed, form60, json1m, json69, makeRequest } from './cases'
import { KOA_TARGETS, startKoaServer, type KoaTarget } from './koa-server'
import { loadTarget, type Middleware } from './targets'

export type ParentMessage = { cmd: 'start' } | { cmd: 'stop' }
export type ChildMessage =
  | { type: 'listening', port: number }
  | { type: 'started' }
  | { type: 'stopped', cpuMicros: number, requests: number }
  | { type: 'memory', rssBytes: number, heapBytes: number }
  | { type: 'error', message: string }

const send = (msg: ChildMessage): void => { process.send?.(msg) }
type WithBody = IncomingMessage & { body?: unknown }

function server (targetId: string): void {
  const parsers = loadTarget(targetId).parsers
  const routes: Record<string, Middleware> = {
    '/json': parsers.json(json69.options),
    '/urlencoded': parsers.urlencoded(form60.options)
  }
  const srv = createServer((req: WithBody, res) => {
    const mw = routes[req.url ?? '']
    if (!mw) return void res.writeHead(404).end()
    mw(req, res, (err) => {
      countRequest()
      const body = req.body as Record<string, unknown> | undefined
      if (err || !body || typeof body !== 'object') return void res.writeHead(500).end()
      // The parent checks the parsed body once through this header; the load itself gets a constant reply.
      res.end(req.headers['x-echo'] ? JSON.stringify(body) : 'ok')
    })
  })
  srv.keepAliveTimeout = 60_000
  srv.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (srv.address() as AddressInfo).port }))
  answerCues()
}

/** A Koa app with the target's body parser in front of every route (bench/koa-server.ts). */
function koaServer (targetId: string): void {
  if (!(KOA_TARGETS as readonly string[]).includes(targetId)) throw new Error(`unknown Koa target ${targetId}: one of ${KOA_TARGETS.join(', ')}`)
  startKoaServer(targetId as KoaTarget, (srv) => send({ type: 'listening', port: (srv.address() as AddressInfo).port }), countRequest)
  answerCues()
}

let requests = 0
let cpu = process.cpuUsage()

function countRequest (): void {
  requests++
}

/** Starts and stops the count of requests and CPU time on the parent's cue. */
function answerCues (): void {
  process.on('message', (msg: ParentMessage) => {
    if (msg.cmd === 'start') {
      requests = 0
      cpu = process.cpuUsage()
      send({ type: 'started' })
    } else if (msg.cmd === 'stop') {
      const used = process.cpuUsage(cpu)
      send({ type: 'stopped', cpuMicros: used.user + used.system, requests })
    }
  })
  process.on('disconnect', () => process.exit(0))
}

/** `concurrency` requests read at once: every request gets chunk i before any gets chunk i + 1, with a turn of the event loop between. */
async function memory (targetId: string, concurrency: number): Promise<void> {
  const mw = loadTarget(targetId).parsers.json(json1m.options)
  const chunks = chunksOf(json1m.body)
  const reqs = Array.from({ length: concurrency }, () => makeRequest(json1m))
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const before = process.memoryUsage()
  const maxRssBefore = process.resourceUsage().maxRSS
  let rssPeak = before.rss
  let heapPeak = before.heapUsed
  const sample = (): void => {
    const now = process.memoryUsage()
    rssPeak = Math.max(rssPeak, now.rss)
    heapPeak = Math.max(heapPeak, now.heapUsed)
  }
  const timer = setInterval(sample, 1)
  const done = reqs.map((req) => new Promise<void>((resolve, reject) => {
    mw(req, fakeResponse, (err) => err ? reject(err) : resolve())
  }))
  for (let i = 0; i < chunks.length; i++) {
    for (const req of reqs) {
      // A fresh copy per request, as a socket read would allocate: a parser that holds chunks pays for them.
      const chunk = Buffer.from(chunks[i])
      if (i === chunks.length - 1) feed(req, [chunk])
      else req.push(chunk)
    }
    await new Promise((resolve) => setImmediate(resolve))
    sample()
  }
  await Promise.all(done)
  sample()
  clearInterval(timer)
  const parsed = reqs.filter((req: WithBody) => Array.isArray(req.body)).length
  if (parsed !== concurrency) throw new Error(`only ${parsed} of ${concurrency} bodies parsed`)
  // The kernel's high-water mark catches a peak between two samples, once it exceeds the start-up peak.
  const maxRss = process.resourceUsage().maxRSS
  if (maxRss > maxRssBefore) rssPeak = Math.max(rssPeak, maxRss * 1024)
  send({
    type: 'memory',
    rssBytes: rssPeak - before.rss,
    heapBytes: heapPeak - before.heapUsed
  })
}

const [mode, targetId, arg] = process.argv.slice(2)
try {
  if (mode === 'server') server(targetId)
  else if (mode === 'koa') koaServer(targetId)
  else if (mode === 'memory') memory(targetId, Number(arg)).then(() => process.exit(0), fail)
  else throw new Error('usage: worker.ts server|koa|memory TARGET [CONCURRENCY]')
} catch (err) {
  fail(err)
}

function fail (err: unknown): void {
  send({ type: 'error', message: String((err as Error)?.stack ?? err) })
  process.exit(1)
}
