// h3 section: bodykit/h3 against h3's own body readers, in h3 apps on node:http (bench/h3-server.ts, a fresh process per
// app and case, under plain node): (1) readBody of a ~100-byte JSON body under autocannon, req/s and server CPU per
// request, h3 1 (toNodeListener) and h3 2 (toNodeHandler); (2) readMultipartFormData of a 64 MiB upload, peak RSS
// growth and the answer, h3 1's own reader against bodykit/h3 with its defaults (10 MiB a file: 413) and with limits
// raised to fit; (3) hostile delivery, a multipart part header and a JSON body in 1-byte chunks, CPU per request.
import { fork, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { builtinModules, createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import autocannon from 'autocannon'
import * as esbuild from 'esbuild'
import type { H3Message, H3ServerKind } from './h3-server'
import { median, textTable, type Context, type Row, type SectionResult } from './report'

const KiB = 1024
const MiB = KiB * KiB
const root = path.join(__dirname, '..')
const load = createRequire(__filename)
const h3v1Id = 'h3 ' + (load('h3/package.json') as { version: string }).version
const h3v2Id = 'h3 ' + (load('h3-2/package.json') as { version: string }).version
const BOUNDARY = 'h3BenchBoundary7MA4YWxkTrZu0gW'

/** The small JSON body of the throughput case: 100 bytes. */
const SMALL_JSON = (() => {
  const text = JSON.stringify({ id: 1029, name: 'Ada Lovelace', email: 'ada@example.com', tags: ['a', 'b'], active: true, n: 1.5 })
  return Buffer.from(text.padEnd(100, ' '))
})()

interface Server { kind: H3ServerKind, child: ChildProcess, port: number }

/** bench/h3-server.ts with its types stripped, as plain CommonJS in `directory` (as bench/chunking.ts runs its server). */
function writePlainServer (directory: string): string {
  const ts = load('typescript') as typeof import('typescript')
  const source = fs.readFileSync(path.join(__dirname, 'h3-server.ts'), 'utf8')
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } })
  const file = path.join(directory, 'h3-server.cjs')
  fs.writeFileSync(file, outputText)
  return file
}

function next<T extends H3Message['type']> (child: ChildProcess, type: T): Promise<Extract<H3Message, { type: T }>> {
  return new Promise((resolve, reject) => {
    const onMessage = (msg: H3Message): void => {
      if (msg.type !== type) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(msg as Extract<H3Message, { type: T }>)
    }
    const onExit = (code: number | null): void => {
      child.off('message', onMessage)
      reject(new Error(`h3 bench server exited (${code})`))
    }
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

/** The copy of dist/ the servers load, taken when the section starts (a build meanwhile empties dist/ for a while). */
let distCopy = path.join(root, 'dist')

async function start (serverFile: string, kind: H3ServerKind): Promise<Server> {
  const child = fork(serverFile, [kind, root, distCopy], { execArgv: ['--expose-gc'], env: { ...process.env, NODE_PATH: path.join(root, 'node_modules') }, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const { port } = await next(child, 'listening')
  return { kind, child, port }
}

interface Answer { status: number | null, text: string, ms: number, error?: string }

/** One request on a fresh connection, written as given (`wire`: head and body, framing included); the answer once it closed. */
function exchange (port: number, wire: Buffer | Buffer[], timeoutMs = 120_000): Promise<Answer> {
  return new Promise((resolve) => {
    const started = Date.now()
    const socket = net.connect({ port, host: '127.0.0.1' })
    const received: Buffer[] = []
    let done = false
    let error: string | undefined
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(received).toString('utf8')
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)
      resolve({ status: status ? Number(status[1]) : null, text: text.slice(text.indexOf('\r\n\r\n') + 4), ms: Date.now() - started, error })
    }
    const timer = setTimeout(finish, timeoutMs)
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', (err) => {
      // A server that answered early and closed: the rest of the upload is refused (EPIPE, ECONNRESET).
      error = (err as NodeJS.ErrnoException).code
      if (received.length > 0) finish()
    })
    const pieces = Array.isArray(wire) ? wire : [wire]
    const write = (i: number): void => {
      if (i >= pieces.length || socket.destroyed) return
      if (socket.write(pieces[i])) setImmediate(() => write(i + 1))
      else socket.once('drain', () => write(i + 1))
    }
    write(0)
  })
}

/** A request in chunked framing, each `chunk` bytes of the body its own chunk on the wire, `Connection: close`. */
function chunkedRequest (contentType: string, body: Buffer, chunk: number): Buffer {
  const pieces: Buffer[] = [Buffer.from(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n`, 'latin1')]
  for (let at = 0; at < body.length; at += chunk) {
    const piece = body.subarray(at, at + chunk)
    pieces.push(Buffer.from(piece.length.toString(16) + '\r\n', 'latin1'), piece, Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(pieces)
}

const stop = (servers: Server[]): void => { for (const s of servers) s.child.kill('SIGKILL') }

// ---------------------------------------------------------------------------
// (1) readBody of a small JSON body under load.
// ---------------------------------------------------------------------------

interface Run { rps: number, cpu: number, failed: number }

async function loadRun (server: Server, duration: number): Promise<Run> {
  server.child.send({ cmd: 'start' })
  await next(server.child, 'started')
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}/`, method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON, connections: 10, duration
  })
  server.child.send({ cmd: 'stop' })
  const { cpuMicros, requests } = await next(server.child, 'stopped')
  return { rps: result['2xx'] / result.duration, cpu: cpuMicros / requests, failed: result.non2xx + result.errors + result.timeouts }
}

async function throughput (ctx: Context, serverFile: string, rows: Row[]): Promise<void> {
  const duration = ctx.quick ? 1 : 2
  const passes = ctx.quick ? 1 : 5
  const pairs: Array<[H3ServerKind, H3ServerKind, string]> = [['v1-own', 'v1-bodykit', h3v1Id], ['v2-own', 'v2-bodykit', h3v2Id]]
  for (const [own, bodykit, id] of pairs) {
    const servers = [await start(serverFile, own), await start(serverFile, bodykit)]
    try {
      for (const s of servers) {
        const answer = await exchange(s.port, Buffer.concat([Buffer.from(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${SMALL_JSON.length}\r\nConnection: close\r\n\r\n`), SMALL_JSON]))
        ctx.log(`  ${s.kind}: check ${answer.status} ${answer.text}`)
        await autocannon({ url: `http://127.0.0.1:${s.port}/`, method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON, connections: 10, duration: ctx.quick ? 1 : 3 })
      }
      const runs = new Map<H3ServerKind, Run[]>(servers.map((s) => [s.kind, []]))
      for (let pass = 0; pass < passes; pass++) {
        for (const s of pass % 2 ? [...servers].reverse() : servers) {
          const run = await loadRun(s, duration)
          runs.get(s.kind)?.push(run)
          ctx.log(`  small JSON pass ${pass + 1}: ${s.kind} ${Math.round(run.rps)} req/s, ${run.cpu.toFixed(1)} µs CPU/req${run.failed ? `, ${run.failed} failed` : ''}`)
        }
      }
      const base = runs.get(own) as Run[]
      for (const s of servers) {
        const mine = runs.get(s.kind) as Run[]
        const target = s.kind === own ? `${id} readBody` : `bodykit/h3 readBody (${id})`
        const baseline = `${id} readBody`
        const failed = mine.reduce((n, r) => n + r.failed, 0)
        rows.push({ case: `${id} app, readBody of ${SMALL_JSON.length} B JSON: req/s`, target, baseline, unit: 'req/s', ratio: median(mine.map((r, i) => r.rps / base[i].rps)), value: median(mine.map((r) => r.rps)), note: failed ? `${failed} failed` : undefined })
        rows.push({ case: `${id} app, readBody of ${SMALL_JSON.length} B JSON: server CPU/req`, target, baseline, unit: 'µs', ratio: median(mine.map((r, i) => r.cpu / base[i].cpu)), value: median(mine.map((r) => r.cpu)) })
      }
    } finally {
      stop(servers)
    }
  }
}

// ---------------------------------------------------------------------------
// (2) A 64 MiB upload.
// ---------------------------------------------------------------------------

/** A form with one 64 MiB file, sent with its Content-Length in 64 KiB writes. */
function bigUpload (size: number): Buffer[] {
  const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nholiday\r\n--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
  const block = Buffer.alloc(64 * KiB, 0x61)
  const length = head.length + size + tail.length
  const pieces = [Buffer.from(`POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`), head]
  for (let at = 0; at < size; at += block.length) pieces.push(block.subarray(0, Math.min(block.length, size - at)))
  pieces.push(tail)
  return pieces
}

async function upload (ctx: Context, serverFile: string, rows: Row[]): Promise<void> {
  const size = 64 * MiB
  const wire = bigUpload(size)
  const sent = wire.reduce((n, piece) => n + piece.length, 0)
  const kinds: Array<[H3ServerKind, string]> = [
    ['v1-own-multipart', `${h3v1Id} readMultipartFormData`],
    ['v1-bodykit-multipart', `bodykit/h3 (${h3v1Id}), defaults`],
    ['v1-bodykit-multipart-raised', `bodykit/h3 (${h3v1Id}), limit '100mb', fileSizeLimit '100mb'`],
    ['v2-own-multipart', `${h3v2Id} readMultipartFormData`],
    ['v2-bodykit-multipart-raised', `bodykit/h3 (${h3v2Id}), limit '100mb', fileSizeLimit '100mb'`]
  ]
  const reps = ctx.quick ? 1 : 2
  const figures = new Map<H3ServerKind, { growth: number[], answers: Answer[] }>()
  for (let rep = 0; rep < reps; rep++) {
    for (const [kind] of kinds) {
      const server = await start(serverFile, kind)
      try {
        const answer = await exchange(server.port, wire)
        server.child.send({ cmd: 'memory' })
        const memory = await next(server.child, 'memory')
        const entry = figures.get(kind) ?? { growth: [], answers: [] }
        entry.growth.push((memory.maxRss - memory.rssBefore) / MiB)
        entry.answers.push(answer)
        figures.set(kind, entry)
        ctx.log(`  64 MiB upload, ${kind}: ${answer.status ?? 'no answer'} ${answer.text.slice(0, 90).replace(/\s+/g, ' ')} in ${answer.ms} ms${answer.error ? ` (client: ${answer.error})` : ''}; RSS ${(memory.rssBefore / MiB).toFixed(0)} MiB idle, peak ${(memory.maxRss / MiB).toFixed(0)} MiB`)
      } finally {
        stop([server])
      }
    }
  }
  for (const [kind, label] of kinds) {
    const entry = figures.get(kind) as { growth: number[], answers: Answer[] }
    const base = figures.get(kind.startsWith('v1') ? 'v1-own-multipart' : 'v2-own-multipart') as { growth: number[] }
    const answer = entry.answers[0]
    const type = /"type":\s*"([^"]+)"/.exec(answer.text)?.[1]
    const note = `${answer.status ?? 'no answer'}: ${type === undefined ? answer.text.replace(/\s+/g, ' ').slice(0, 40) : `data.type ${type}`}; ${median(entry.answers.map((a) => a.ms))} ms to the answer, ${(sent / MiB).toFixed(1)} MiB sent`
    rows.push({
      case: '64 MiB upload (readMultipartFormData): peak RSS growth', target: label, baseline: kind.startsWith('v1') ? `${h3v1Id} readMultipartFormData` : `${h3v2Id} readMultipartFormData`,
      unit: 'MiB', ratio: median(entry.growth) / median(base.growth), value: median(entry.growth), note, extra: { ms: median(entry.answers.map((a) => a.ms)) }
    })
  }
}

// ---------------------------------------------------------------------------
// (3) Hostile delivery: 1-byte chunks.
// ---------------------------------------------------------------------------

async function hostileChunks (ctx: Context, serverFile: string, rows: Row[]): Promise<void> {
  const small = Buffer.from('the file content, 33 bytes long.\n')
  const partHead = (filename: string, extra: string[]): Buffer => Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n${extra.map((line) => line + '\r\n').join('')}\r\n`),
    small, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
  ])
  // A JSON object of 16 KiB at most: every 'data' event one byte of it.
  const entries: Array<[string, string]> = []
  while (JSON.stringify(Object.fromEntries([...entries, [`key${entries.length}`, `value number ${entries.length}`]])).length <= 16 * KiB) entries.push([`key${entries.length}`, `value number ${entries.length}`])
  const jsonBody = Buffer.from(JSON.stringify(Object.fromEntries(entries)))
  const cases: Array<{ name: string, contentType: string, body: Buffer, kinds: Array<[H3ServerKind, string]> }> = [
    {
      name: 'multipart part header (8 KiB filename, 60 header lines)', contentType: `multipart/form-data; boundary=${BOUNDARY}`,
      body: partHead('f'.repeat(8 * KiB), Array.from({ length: 60 }, (_, i) => `X-Extra-${i}: ${'v'.repeat(24)}`)),
      kinds: [['v1-own-multipart', `${h3v1Id} readMultipartFormData`], ['v1-bodykit-multipart', `bodykit/h3 readMultipartFormData (${h3v1Id})`]]
    },
    {
      name: `JSON ${(jsonBody.length / KiB).toFixed(0)} KiB`, contentType: 'application/json', body: jsonBody,
      kinds: [['v1-own', `${h3v1Id} readBody`], ['v1-bodykit', `bodykit/h3 readBody (${h3v1Id})`]]
    }
  ]
  for (const c of cases) {
    for (const chunk of [1, 64 * KiB]) {
      const wire = chunkedRequest(c.contentType, c.body, chunk)
      const servers: Server[] = []
      try {
        for (const [kind] of c.kinds) servers.push(await start(serverFile, kind))
        const answers = new Map<H3ServerKind, Answer[]>(servers.map((s) => [s.kind, []]))
        const count = chunk === 1 ? (ctx.quick ? 3 : 6) : (ctx.quick ? 6 : 21)
        for (let i = 0; i < count; i++) {
          for (const s of i % 2 ? [...servers].reverse() : servers) answers.get(s.kind)?.push(await exchange(s.port, wire))
        }
        const cpu = new Map<H3ServerKind, number[]>()
        for (const s of servers) {
          s.child.send({ cmd: 'report' })
          // The first request warms the server up.
          cpu.set(s.kind, (await next(s.child, 'samples')).cpuMicros.slice(1).map((us) => us / 1000))
        }
        const base = median(cpu.get(c.kinds[0][0]) as number[])
        for (const [kind, label] of c.kinds) {
          const mine = cpu.get(kind) as number[]
          const all = answers.get(kind) as Answer[]
          const bad = all.find((a) => a.status !== 200)
          const value = mine.length ? median(mine) : null
          ctx.log(`  ${c.name}, ${chunk === 1 ? '1-byte' : '64 KiB'} chunks (${wire.length} B on the wire): ${kind} ${value?.toFixed(2) ?? '-'} ms CPU/req (min ${Math.min(...mine).toFixed(2)}, max ${Math.max(...mine).toFixed(2)}, ${mine.length} requests), answer ${all[0].status} ${all[0].text.slice(0, 60)}`)
          rows.push({
            case: `${c.name} in ${chunk === 1 ? '1-byte' : '64 KiB'} chunks: server CPU/req`, target: label, baseline: c.kinds[0][1], unit: 'ms',
            ratio: value === null ? null : value / base, value, note: bad ? `answered ${bad.status}: ${bad.text.slice(0, 60)}` : undefined,
            extra: { wireBytes: wire.length, requests: mine.length }
          })
        }
      } finally {
        stop(servers)
      }
    }
  }
}

// ---------------------------------------------------------------------------
// (4) Bun and Deno: an h3 2 app with bodykit/h3's Web build, where test/runtimes/ has installed them.
// ---------------------------------------------------------------------------

/** The runtimes the repository's runtime tests install (test/runtimes/runtime-servers.ts), from their cache. */
const RUNTIME_BINARIES = [
  { name: 'bun', bin: path.join(os.tmpdir(), 'bodykit-runtimes', 'bun@1.4.5', 'node_modules', '.bin', 'bun'), args: (file: string) => [file] },
  { name: 'deno', bin: path.join(os.tmpdir(), 'bodykit-runtimes', 'deno@2.9.6', 'node_modules', '.bin', 'deno'), args: (file: string) => ['run', '--allow-net', '--allow-env', '--allow-sys', file] }
]

async function cpuOf (port: number): Promise<{ cpuMicros: number, requests: number }> {
  const res = await fetch(`http://127.0.0.1:${port}/cpu`)
  return await res.json() as { cpuMicros: number, requests: number }
}

async function runtimes (ctx: Context, directory: string, rows: Row[]): Promise<void> {
  const duration = ctx.quick ? 1 : 2
  const passes = ctx.quick ? 1 : 5
  for (const runtime of RUNTIME_BINARIES) {
    if (!fs.existsSync(runtime.bin)) {
      ctx.log(`  ${runtime.name}: not installed at ${runtime.bin} (npm test's runtime tests install it): skipped`)
      continue
    }
    const file = path.join(directory, `h3-runtime-server-${runtime.name}.mjs`)
    await esbuild.build({
      entryPoints: [path.join(__dirname, 'h3-runtime-server.mjs')],
      // As scripts/web-bundle.mjs bundles the Web build: for a browser platform (packages' `browser` fields), Node's built-ins
      // left to the runtime; h3 2's own entry for the runtime (its exports list `bun` and `deno` before `browser`).
      bundle: true, format: 'esm', platform: 'browser', target: 'es2022', outfile: file, logLevel: 'warning',
      conditions: [runtime.name], external: ['node:*', ...builtinModules],
      alias: { h3: 'h3-2', 'bodykit-h3-web': path.join(root, 'src', 'h3-web.mts') },
      nodePaths: [path.join(root, 'node_modules')]
    })
    const child = spawn(runtime.bin, runtime.args(file), { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const port = await new Promise<number>((resolve, reject) => {
        let out = ''
        child.stdout?.on('data', (chunk: Buffer) => {
          out += chunk.toString()
          const match = /listening (\d+)/.exec(out)
          if (match) resolve(Number(match[1]))
        })
        child.once('exit', (code) => reject(new Error(`${runtime.name} server exited (${code}): ${out}`)))
      })
      const version = await new Promise<string>((resolve) => {
        const probe = spawn(runtime.bin, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] })
        let text = ''
        probe.stdout?.on('data', (chunk: Buffer) => { text += chunk.toString() })
        probe.on('close', () => resolve(`${runtime.name} ${text.split('\n')[0].replace(/^deno /, '').split(' ')[0].trim()}`))
      })
      const routes = ['/own', '/bodykit']
      const runs = new Map<string, Run[]>(routes.map((route) => [route, []]))
      for (const route of routes) {
        const res = await fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON })
        ctx.log(`  ${runtime.name} ${version} ${route}: check ${res.status} ${await res.text()}`)
        await autocannon({ url: `http://127.0.0.1:${port}${route}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON, connections: 10, duration: ctx.quick ? 1 : 3 })
      }
      for (let pass = 0; pass < passes; pass++) {
        for (const route of pass % 2 ? [...routes].reverse() : routes) {
          const before = await cpuOf(port)
          const result = await autocannon({ url: `http://127.0.0.1:${port}${route}`, method: 'POST', headers: { 'content-type': 'application/json' }, body: SMALL_JSON, connections: 10, duration })
          const after = await cpuOf(port)
          const run = { rps: result['2xx'] / result.duration, cpu: (after.cpuMicros - before.cpuMicros) / (after.requests - before.requests), failed: result.non2xx + result.errors + result.timeouts }
          runs.get(route)?.push(run)
          ctx.log(`  ${runtime.name} pass ${pass + 1}: ${route} ${Math.round(run.rps)} req/s, ${run.cpu.toFixed(1)} µs CPU/req${run.failed ? `, ${run.failed} failed` : ''}`)
        }
      }
      const base = runs.get('/own') as Run[]
      for (const route of routes) {
        const mine = runs.get(route) as Run[]
        const target = route === '/own' ? `${h3v2Id} readBody (${version})` : `bodykit/h3 web build (${h3v2Id}, ${version})`
        const baseline = `${h3v2Id} readBody (${version})`
        rows.push({ case: `${runtime.name}: h3 2 app, readBody of ${SMALL_JSON.length} B JSON: req/s`, target, baseline, unit: 'req/s', ratio: median(mine.map((r, i) => r.rps / base[i].rps)), value: median(mine.map((r) => r.rps)) })
        rows.push({ case: `${runtime.name}: h3 2 app, readBody of ${SMALL_JSON.length} B JSON: server CPU/req`, target, baseline, unit: 'µs', ratio: median(mine.map((r, i) => r.cpu / base[i].cpu)), value: median(mine.map((r) => r.cpu)) })
      }
    } catch (err) {
      ctx.log(`  ${runtime.name}: ${(err as Error).message}`)
    } finally {
      child.kill('SIGKILL')
    }
  }
}

export async function h3Section (ctx: Context): Promise<SectionResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-bench-h3-'))
  const serverFile = writePlainServer(directory)
  distCopy = path.join(directory, 'dist')
  fs.cpSync(path.join(root, 'dist'), distCopy, { recursive: true })
  const rows: Row[] = []
  try {
    const parts = (process.env.BENCH_H3_PARTS ?? 'throughput,upload,hostile,runtimes').split(',')
    if (parts.includes('throughput')) await throughput(ctx, serverFile, rows)
    if (parts.includes('upload')) await upload(ctx, serverFile, rows)
    if (parts.includes('hostile')) await hostileChunks(ctx, serverFile, rows)
    if (parts.includes('runtimes')) await runtimes(ctx, directory, rows)
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
  ctx.log('\n' + textTable([['case', 'target', 'value', 'ratio', 'note'], ...rows.map((r) => [r.case, r.target, r.value === null ? '-' : `${r.value.toFixed(2)} ${r.unit}`, r.ratio === null ? '-' : r.ratio.toFixed(2), r.note ?? ''])]))
  return {
    id: 'h3',
    title: 'bodykit/h3 against h3\'s own body readers in h3 apps on node:http (ratio ÷ h3\'s own reader; lower is better for CPU and memory, higher for req/s)',
    legend: 'A fresh server process per app (bench/h3-server.ts under plain node, bodykit from a copy of dist/ taken at the start): readBody of a 100-byte JSON body under autocannon (10 connections, interleaved passes); readMultipartFormData of a 64 MiB upload (peak RSS over the idle process, the answer); a multipart part header and a JSON body in 1-byte chunks (CPU from the request\'s arrival to the read\'s end, median, first request a warm-up).',
    rows
  }
}
