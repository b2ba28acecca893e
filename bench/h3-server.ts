// The server side of the h3 bench: one h3 app (h3 1 with toNodeListener, or h3 2 with toNodeHandler) on node:http in a
// fresh process, reading POST / with h3's own reader or bodykit/h3's, answering what it read. Run as plain CommonJS
// (bench/h3.ts strips the types), bodykit loaded from a copy of dist/ (`dist`), the packages from `root`. On IPC: 'start' / 'stop' count requests and CPU time
// (autocannon passes), 'report' sends each request's CPU time from its arrival to the read's end, 'memory' the peak RSS.
import http from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'

/** Which app and reader: `v1-own`, `v1-bodykit`, `v2-own`, `v2-bodykit`, and the form readers' variants. */
export type H3ServerKind =
  | 'v1-own' | 'v1-bodykit' | 'v2-own' | 'v2-bodykit'
  | 'v1-own-multipart' | 'v1-bodykit-multipart' | 'v1-bodykit-multipart-raised' | 'v2-own-multipart' | 'v2-bodykit-multipart-raised'

export type H3Message =
  | { type: 'listening', port: number }
  | { type: 'started' }
  | { type: 'stopped', cpuMicros: number, requests: number }
  | { type: 'samples', cpuMicros: number[] }
  | { type: 'memory', rssBefore: number, maxRss: number, rssNow: number }

type Read = (event: unknown) => Promise<unknown>

/** What the handler answers for what it read: a few numbers the parent checks (a 200 that read nothing is no result). */
function summarize (value: unknown): string {
  if (Array.isArray(value)) {
    const parts = value as Array<{ name?: string, filename?: string, data: Uint8Array }>
    return `${parts.length} parts, ${parts.reduce((sum, part) => sum + part.data.length, 0)} B`
  }
  if (value !== null && typeof value === 'object') return `${Object.keys(value).length} keys`
  return typeof value
}

function serve (kind: H3ServerKind, root: string, dist: string): void {
  const load = createRequire(path.join(root, 'package.json'))
  const major = kind.startsWith('v1') ? 1 : 2
  const h3 = load(major === 1 ? 'h3' : 'h3-2')
  let read: Read
  if (kind.includes('own')) {
    read = kind.endsWith('multipart') ? h3.readMultipartFormData : h3.readBody
  } else {
    const readers = major === 1
      ? load(path.join(dist, 'h3.js'))
      : load(path.join(dist, 'h3', 'adapter.js')).createH3Readers(load(path.join(dist, 'h3', 'node-build.js')).nodeBuild, h3)
    const raised = { limit: '100mb', files: { fileSizeLimit: '100mb' } }
    if (kind === 'v1-bodykit' || kind === 'v2-bodykit') read = (event) => readers.readBody(event)
    else if (kind === 'v1-bodykit-multipart') read = (event) => readers.readMultipartFormData(event)
    else read = (event) => readers.readMultipartFormData(event, raised)
  }
  const samples: number[] = []
  const arrivals = new WeakMap<object, NodeJS.CpuUsage>()
  type Runtime = { runtime?: { node?: { req: object } } }
  const handler = async (event: { node?: { req: object }, req?: Runtime } & Runtime): Promise<string> => {
    const body = await read(event)
    const req = event.node?.req ?? event.runtime?.node?.req ?? event.req?.runtime?.node?.req
    const cpu0 = req === undefined ? undefined : arrivals.get(req)
    if (cpu0 !== undefined) {
      const cpu = process.cpuUsage(cpu0)
      samples.push(cpu.user + cpu.system)
    }
    requests++
    return JSON.stringify({ read: summarize(body) })
  }
  let listener: http.RequestListener
  if (major === 1) {
    const app = h3.createApp()
    app.use('/', h3.eventHandler(handler))
    listener = h3.toNodeListener(app)
  } else {
    const app = new h3.H3().post('/', handler)
    listener = h3.toNodeHandler(app)
  }
  const server = http.createServer((req, res) => {
    // The request event comes as soon as the head is parsed, before the body's first chunk is handed on.
    arrivals.set(req, process.cpuUsage())
    listener(req, res)
  })
  server.keepAliveTimeout = 60_000
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  const rssBefore = process.memoryUsage().rss
  server.listen(0, '127.0.0.1', () => send({ type: 'listening', port: (server.address() as { port: number }).port }))
  let requests = 0
  let cpu = process.cpuUsage()
  process.on('message', (msg: { cmd: string }) => {
    if (msg.cmd === 'start') {
      requests = 0
      cpu = process.cpuUsage()
      send({ type: 'started' })
    } else if (msg.cmd === 'stop') {
      const used = process.cpuUsage(cpu)
      send({ type: 'stopped', cpuMicros: used.user + used.system, requests })
    } else if (msg.cmd === 'report') {
      send({ type: 'samples', cpuMicros: samples.splice(0) })
    } else if (msg.cmd === 'memory') {
      send({ type: 'memory', rssBefore, maxRss: process.resourceUsage().maxRSS * 1024, rssNow: process.memoryUsage().rss })
    } else if (msg.cmd === 'gc') {
      gc?.()
    }
  })
  process.on('disconnect', () => process.exit(0))
}

function send (msg: H3Message): void {
  process.send?.(msg)
}

// Run as bench/h3.ts starts it; the parent imports only this file's types.
if (require.main === module) {
  const [kind, root, dist] = process.argv.slice(2)
  serve(kind as H3ServerKind, root, dist)
}
