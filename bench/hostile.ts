// Hostile-input section (issue 5): server CPU, RSS growth and bytes read per hostile request, in a fresh child per target and case.
import { fork } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import http, { IncomingMessage, ServerResponse } from 'node:http'
import net, { type AddressInfo, type Socket } from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { Duplex, Readable, Writable, type Transform } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import v8 from 'node:v8'
import vm from 'node:vm'
import zlib from 'node:zlib'
import type { Context, Row, SectionResult } from './report'
import { loadTarget } from './targets'

const MiB = 2 ** 20
const GiB = 2 ** 30
const LIMIT = 100 * 1024
const ABORTS = 10_000

type Framing = 'chunked' | 'declared'
interface HostileCase {
  name: string
  encoding?: string
  framing: Framing
  size: number
  body?: () => Buffer | Promise<Buffer>
  /** Keep sending after the response, until the server closes the connection (a hostile client ignores the 413). */
  persist?: boolean
  /** Send TRICKLE bytes every TRICKLE_MS instead of as fast as the server reads, for at most TRICKLE_FOR_MS. */
  trickle?: boolean
  /** Run against these targets only (a trickled case lasts TRICKLE_FOR_MS per target). */
  only?: string[]
}

const TRICKLE = 16 * 1024
const TRICKLE_MS = 50
const TRICKLE_FOR_MS = 35_000

/** 1 GiB of zeros compressed, streamed through the compressor once and cached in the temp directory. */
async function bomb (encoding: string): Promise<Buffer> {
  const dir = join(os.tmpdir(), 'bodykit-bench')
  const file = join(dir, `bomb-1GiB.${encoding}`)
  if (existsSync(file)) return readFileSync(file)
  const create = (zlib as unknown as Record<string, ((options?: object) => Transform) | undefined>)[{
    gzip: 'createGzip', deflate: 'createDeflate', br: 'createBrotliCompress', zstd: 'createZstdCompress'
  }[encoding] as string]
  if (!create) return Buffer.alloc(0)
  const options = encoding === 'br' ? { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } } : encoding === 'zstd' ? {} : { level: 9 }
  const zeros = Buffer.alloc(16 * MiB)
  const parts: Buffer[] = []
  await pipeline(
    Readable.from((function * () { for (let i = 0; i < GiB / zeros.length; i++) yield zeros })()),
    create(options),
    new Writable({ write (chunk: Buffer, _encoding, callback) { parts.push(chunk); callback() } })
  )
  const out = Buffer.concat(parts)
  mkdirSync(dir, { recursive: true })
  writeFileSync(file, out)
  return out
}

/** A gzip member of `size` bytes made of empty stored blocks: valid, and it inflates to nothing. */
function emptyGzip (size: number): Buffer {
  const blocks = Math.floor((size - 18) / 5)
  const out = Buffer.alloc(10 + blocks * 5 + 8)
  Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]).copy(out)
  for (let i = 0; i < blocks; i++) {
    out[10 + i * 5] = i === blocks - 1 ? 1 : 0
    out[10 + i * 5 + 3] = out[10 + i * 5 + 4] = 0xff
  }
  return out
}

const cases: HostileCase[] = [
  { name: 'gzip bomb (1 GiB of zeros)', encoding: 'gzip', framing: 'chunked', size: 0, body: () => bomb('gzip') },
  { name: 'deflate bomb (1 GiB of zeros)', encoding: 'deflate', framing: 'chunked', size: 0, body: () => bomb('deflate') },
  { name: 'br bomb (1 GiB of zeros)', encoding: 'br', framing: 'chunked', size: 0, body: () => bomb('br') },
  { name: 'zstd bomb (1 GiB of zeros)', encoding: 'zstd', framing: 'chunked', size: 0, body: () => bomb('zstd') },
  { name: '32 MiB gzip inflating to nothing', encoding: 'gzip', framing: 'chunked', size: 0, body: () => emptyGzip(32 * MiB) },
  { name: '1 GiB declared, streamed', framing: 'declared', size: GiB },
  { name: '1 GiB chunked, streamed', framing: 'chunked', size: GiB },
  { name: '1 GiB declared, blasted past the 413', framing: 'declared', size: GiB, persist: true },
  { name: '1 GiB chunked, blasted past the 413', framing: 'chunked', size: GiB, persist: true },
  { name: `1 GiB declared, trickled (${TRICKLE / 1024} KiB / ${TRICKLE_MS} ms)`, framing: 'declared', size: GiB, persist: true, trickle: true, only: ['body-parser 2', 'bodykit'] },
  { name: `1 GiB chunked, trickled (${TRICKLE / 1024} KiB / ${TRICKLE_MS} ms)`, framing: 'chunked', size: GiB, persist: true, trickle: true, only: ['body-parser 2', 'bodykit'] }
]

interface Measure { verdictMs: number, cpuMs: number, rssMiB: number, readMiB: number, heldS: number, status: number | null, ms: number }

/** Parent: runs every case against every target (body-parser 2, bodykit, body-parser 1, bodykit/legacy). */
export async function hostile (ctx: Context): Promise<SectionResult> {
  const targets = ctx.targets.filter((t) => t.id !== 'floor')
  const rows: Row[] = []
  const selected = ctx.quick ? cases.filter((c) => !c.name.startsWith('1 GiB')) : cases
  for (const c of selected) {
    const body = await c.body?.()
    if (c.encoding === 'zstd' && !body?.length) ctx.log('  zstd: this Node has no zstd, every target answers 415')
    const measures = new Map<string, Measure>()
    const caseTargets = targets.filter((t) => !c.only || c.only.includes(t.id))
    for (const target of caseTargets) {
      const measure = await runCase(target.id, c, body ?? Buffer.alloc(0))
      measures.set(target.id, measure)
      ctx.log(`  ${c.name} / ${target.id}: ${measure.status} in ${measure.ms.toFixed(0)} ms, CPU ${measure.verdictMs.toFixed(1)} ms to next(), ${measure.cpuMs.toFixed(1)} ms until closed, RSS +${measure.rssMiB.toFixed(1)} MiB, read ${measure.readMiB.toFixed(2)} MiB, connection held ${measure.heldS.toFixed(1)} s`)
    }
    for (const target of caseTargets) {
      const m = measures.get(target.id) as Measure
      const base = measures.get(target.baseline) as Measure
      const row = (metric: string, value: number, baseValue: number, unit: string): Row => ({
        case: `${c.name}: ${metric}`, target: target.id, baseline: target.baseline, ratio: baseValue > 0 ? value / baseValue : null, value, unit, note: baseValue > 0 ? undefined : `${value.toFixed(2)} ${unit}`
      })
      rows.push(
        { case: `${c.name}: status`, target: target.id, baseline: target.baseline, ratio: null, value: m.status, unit: '', note: String(m.status ?? 'none') },
        row('server CPU to next()', m.verdictMs, base.verdictMs, 'ms'),
        row('server CPU until closed', m.cpuMs, base.cpuMs, 'ms'),
        row('RSS growth', m.rssMiB, base.rssMiB, 'MiB'),
        row('bytes read', m.readMiB, base.readMiB, 'MiB'),
        row('connection held', m.heldS, base.heldS, 's')
      )
    }
  }
  const abortRuns = ctx.quick ? 1000 : ABORTS
  for (const target of targets) {
    const result = await runAborts(target.id, abortRuns)
    rows.push({ case: `${abortRuns} aborted uploads: heap growth`, target: target.id, baseline: target.baseline, ratio: null, value: result.heapMiB, unit: 'MiB', note: `${result.heapMiB.toFixed(2)} MiB` })
    rows.push({ case: `${abortRuns} aborted uploads: listeners left`, target: target.id, baseline: target.baseline, ratio: null, value: result.listeners, unit: '', note: String(result.listeners) })
    rows.push({ case: `${abortRuns} aborted uploads: next() calls`, target: target.id, baseline: target.baseline, ratio: null, value: result.nextCalls, unit: '', note: String(result.nextCalls) })
    ctx.log(`  aborts / ${target.id}: heap +${result.heapMiB.toFixed(2)} MiB, listeners left ${result.listeners}, next() ${result.nextCalls}`)
  }
  return {
    id: 'hostile',
    title: `Hostile inputs: json parser, limit 100 KiB, one request per fresh server process (ratio to baseline; lower is better)`,
    legend: `Server CPU (process-wide, so zlib and GC threads count) and RSS growth are measured in the server process from the request's arrival to next(), and until its socket closed; "bytes read" is what the server read off the socket; "connection held" runs from the request's arrival to the close of its socket. "Blasted past the 413": the client ignores the answer and keeps sending as fast as the server reads; "trickled": it sends ${TRICKLE / 1024} KiB every ${TRICKLE_MS} ms for ${TRICKLE_FOR_MS / 1000} s (its CPU figures include the bench's own RSS sampling every 10 ms, about 20 ms per second held). bodykit bounds: 413 at once, then at most 64 MiB discarded within 30 s (5 s without data), none of a body declared larger, then the connection closes.`,
    rows
  }
}

function spawnChild (args: string[]): { send: (msg: unknown) => void, next: () => Promise<Record<string, number>>, kill: () => void } {
  const child = fork(__filename, ['hostile-child', ...args], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const queue: Record<string, number>[] = []
  const waiters: ((msg: Record<string, number>) => void)[] = []
  child.on('message', (msg: Record<string, number>) => { const w = waiters.shift(); if (w) w(msg); else queue.push(msg) })
  return {
    send: (msg) => { child.send(msg as object) },
    next: () => new Promise((resolve, reject) => {
      const m = queue.shift()
      if (m) return resolve(m)
      waiters.push(resolve)
      child.once('exit', (code) => reject(new Error(`hostile child exited (${code})`)))
    }),
    kill: () => { child.kill('SIGKILL') }
  }
}

async function runCase (targetId: string, c: HostileCase, body: Buffer): Promise<Measure> {
  const child = spawnChild(['server', targetId])
  try {
    const { port } = await child.next()
    await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', body: '{"warm":true}', headers: { 'content-type': 'application/json', connection: 'close' } }).then((res) => res.text())
    // Once to warm the error paths up (a trickled case is too long for it), then measured.
    if (!c.trickle) await sendHostile(port, c, body)
    child.send({ cmd: 'report' })
    await child.next()
    await new Promise((resolve) => setTimeout(resolve, 300))
    const started = Date.now()
    const status = await sendHostile(port, c, body)
    const ms = Date.now() - started
    child.send({ cmd: 'report' })
    const m = await child.next()
    return { verdictMs: m.verdictMicros / 1000, cpuMs: m.cpuMicros / 1000, rssMiB: m.rssBytes / MiB, readMiB: m.bytesRead / MiB, heldS: m.heldMs / 1000, status, ms }
  } finally {
    child.kill()
  }
}

/** Client: sends the case as fast as the server takes it; resolves with the status (null if none) once the exchange is over. */
function sendHostile (port: number, c: HostileCase, body: Buffer): Promise<number | null> {
  if (c.persist) return sendPersistently(port, c)
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json' }
    if (c.encoding) headers['content-encoding'] = c.encoding
    if (c.framing === 'declared') headers['content-length'] = c.size
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers, agent: false })
    let status: number | null = null
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      req.destroy()
      setTimeout(() => resolve(status), 100)
    }
    const timer = setTimeout(finish, 60_000)
    req.on('response', (res) => {
      status = res.statusCode ?? null
      res.resume()
      res.on('end', () => setTimeout(finish, 50))
    })
    req.on('error', finish)
    const chunk = body.length ? null : Buffer.alloc(64 * 1024, 0x20)
    let offset = 0
    const write = (): void => {
      while (!done && status === null) {
        const part = chunk ?? body.subarray(offset, offset + 64 * 1024)
        if (chunk ? offset >= c.size : part.length === 0) return void req.end()
        offset += part.length
        if (!req.write(part)) return void req.once('drain', write)
      }
    }
    write()
  })
}

/**
 * A hostile client on a raw socket: it never stops for the response and sends the case's bytes (as fast as
 * the server reads them, or trickled) until they are all sent, the server closes, or TRICKLE_FOR_MS passed.
 */
function sendPersistently (port: number, c: HostileCase): Promise<number | null> {
  return new Promise((resolve) => {
    // allowHalfOpen: the server's half-close does not stop it; only the server's destroy does.
    const socket = net.connect({ port, host: '127.0.0.1', allowHalfOpen: true })
    const framing = c.framing === 'declared' ? `content-length: ${c.size}` : 'transfer-encoding: chunked'
    socket.write(`POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`)
    const data = Buffer.alloc(c.trickle ? TRICKLE : 64 * 1024, 0x20)
    const frame = c.framing === 'chunked' ? Buffer.concat([Buffer.from(data.length.toString(16) + '\r\n'), data, Buffer.from('\r\n')]) : data
    let sent = 0
    let head = ''
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      clearInterval(ticker)
      socket.destroy()
      const match = /^HTTP\/1\.1 (\d{3})/.exec(head)
      setTimeout(() => resolve(match ? Number(match[1]) : null), 100)
    }
    const timer = setTimeout(finish, c.trickle ? TRICKLE_FOR_MS : 60_000)
    socket.on('data', (chunk: Buffer) => { if (head.length < 64) head += chunk.toString('latin1') })
    socket.on('error', finish)
    socket.on('close', finish)
    const writeOne = (): boolean => {
      sent += data.length
      if (sent >= c.size) {
        socket.end(c.framing === 'chunked' ? Buffer.concat([frame, Buffer.from('0\r\n\r\n')]) : frame)
        return false
      }
      return socket.write(frame)
    }
    const ticker = c.trickle ? setInterval(() => { if (!done && socket.writable) writeOne() }, TRICKLE_MS) : undefined
    const blast = (): void => {
      while (!done && sent < c.size && socket.writable) {
        if (!writeOne()) return void socket.once('drain', blast)
      }
    }
    if (!c.trickle) blast()
  })
}

async function runAborts (targetId: string, count: number): Promise<{ heapMiB: number, listeners: number, nextCalls: number }> {
  const child = spawnChild(['aborts', targetId, String(count)])
  try {
    const m = await child.next()
    return { heapMiB: m.heapBytes / MiB, listeners: m.listeners, nextCalls: m.nextCalls }
  } finally {
    child.kill()
  }
}

/** Child: a server with the target's json parser; reports CPU, RSS growth and bytes read for the one request. */
function childServer (targetId: string): void {
  const mw = loadTarget(targetId).parsers.json({ limit: LIMIT })
  const gc = (globalThis as { gc?: () => void }).gc
  let rss0 = 0
  let maxRss0 = 0
  let rssPeak = 0
  let cpu0: NodeJS.CpuUsage | null = null
  let cpuUsed: NodeJS.CpuUsage | null = null
  let cpuAtNext: NodeJS.CpuUsage | null = null
  let bytesRead = 0
  let arrivedAt = 0
  let heldMs = 0
  let socket: Socket | null = null
  let sampler: NodeJS.Timeout | undefined
  let warm = false
  const server = http.createServer((req: IncomingMessage, res) => {
    if (!warm) {
      // The first request of a process pays for lazy compilation; it is not the one measured.
      warm = true
      mw(req, res, () => res.end('warm'))
      return
    }
    clearInterval(sampler)
    cpuUsed = cpuAtNext = null
    bytesRead = 0
    heldMs = 0
    arrivedAt = Date.now()
    rss0 = rssPeak = process.memoryUsage.rss()
    maxRss0 = process.resourceUsage().maxRSS * 1024
    sampler = setInterval(() => { rssPeak = Math.max(rssPeak, process.memoryUsage.rss()) }, 10)
    cpu0 = process.cpuUsage()
    const current = socket = req.socket
    current.once('close', () => {
      if (socket !== current) return
      bytesRead = current.bytesRead
      heldMs = Date.now() - arrivedAt
      if (cpu0) cpuUsed = process.cpuUsage(cpu0)
    })
    mw(req, res, (err?: unknown) => {
      if (cpu0) cpuAtNext = process.cpuUsage(cpu0)
      const e = err as { status?: number, type?: string } | undefined
      res.statusCode = e?.status ?? 200
      res.end(e ? String(e.type) : 'ok')
    })
  })
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as AddressInfo).port }))
  process.on('message', async () => {
    // Give a lingering close its grace period, then stop counting.
    for (let i = 0; i < 400 && socket && !socket.destroyed; i++) await new Promise((resolve) => setTimeout(resolve, 10))
    const used = cpuUsed ?? (cpu0 ? process.cpuUsage(cpu0) : { user: 0, system: 0 })
    clearInterval(sampler)
    const read = bytesRead || (socket as Socket | null)?.bytesRead || 0
    const held = heldMs || (arrivedAt ? Date.now() - arrivedAt : 0)
    socket = null
    const maxRss = process.resourceUsage().maxRSS * 1024
    if (maxRss > maxRss0) rssPeak = Math.max(rssPeak, maxRss)
    const verdict = cpuAtNext ?? used
    process.send?.({ verdictMicros: verdict.user + verdict.system, cpuMicros: used.user + used.system, rssBytes: rssPeak - rss0, bytesRead: read, heldMs: held })
    // Collected between requests, so that no GC work (process CPU counts its threads) falls in a measurement.
    gc?.()
  })
  process.on('disconnect', () => process.exit(0))
}

/** Child: `count` aborted uploads on in-process requests (half a body, then the client goes); heap after GC. */
async function childAborts (targetId: string, count: number): Promise<void> {
  const mw = loadTarget(targetId).parsers.json({ limit: LIMIT })
  const gc = (globalThis as { gc?: () => void }).gc ?? (v8.setFlagsFromString('--expose-gc'), vm.runInNewContext('gc') as () => void)
  const gzipped = zlib.gzipSync(JSON.stringify({ data: 'x'.repeat(4000) }))
  let nextCalls = 0
  let listeners = 0
  const once = async (i: number): Promise<void> => {
    const compressed = i % 2 === 1
    const body = compressed ? gzipped : Buffer.alloc(4000, 0x20)
    const req = new IncomingMessage(new Duplex({ read () {}, write (_chunk, _encoding, callback) { callback() } }) as unknown as Socket)
    req.headers = { 'content-type': 'application/json', 'content-length': String(body.length), ...(compressed ? { 'content-encoding': 'gzip' } : {}) }
    mw(req, new ServerResponse(req), () => { nextCalls++ })
    req.push(body.subarray(0, body.length >> 1))
    await new Promise((resolve) => setImmediate(resolve))
    req.destroy(Object.assign(new Error('aborted'), { code: 'ECONNRESET' }))
    await new Promise((resolve) => setImmediate(resolve))
    for (const event of ['data', 'end', 'error', 'aborted', 'close']) listeners += req.listenerCount(event)
  }
  for (let i = 0; i < 200; i++) await once(i)
  gc()
  const heap0 = process.memoryUsage().heapUsed
  nextCalls = 0
  listeners = 0
  for (let i = 0; i < count; i++) await once(i)
  await new Promise((resolve) => setTimeout(resolve, 50))
  gc()
  process.send?.({ heapBytes: process.memoryUsage().heapUsed - heap0, listeners, nextCalls })
}

if (process.argv[2] === 'hostile-child') {
  const [mode, targetId, arg] = process.argv.slice(3)
  if (mode === 'server') childServer(targetId)
  else childAborts(targetId, Number(arg)).then(() => process.exit(0), (err: unknown) => { console.error(err); process.exit(1) })
}
