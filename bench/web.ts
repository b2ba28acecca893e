// Web section: the promise readers given a Web Request against the runtime's request.json() / formData(), Hono and @remix-run/form-data-parser, on Node in process and on Bun and Deno in child processes.
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { median, medianSpread, quantile, type Context, type Row, type SectionResult } from './report'
import { writeRepeated } from './upload-body'

/** The runtimes besides Node, installed from the npm registry into `os.tmpdir()/bodykit-runtimes/<name>@<version>` (test/runtimes shares it). */
const RUNTIMES = [{ name: 'bun', version: '1.4.5' }, { name: 'deno', version: '2.9.6' }] as const
type RuntimeName = typeof RUNTIMES[number]['name']

const MiB = 2 ** 20
const CHUNK = 64 * 1024
const BOUNDARY = 'webBenchBoundary9fQ2xLmZ'
const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY
/** 100 bytes of JSON, as an API request carries. */
const SMALL_JSON = new TextEncoder().encode('{"id":12345,"name":"bodykit","tags":["a","b","c"],"active":true,"score":98.5,"nested":{"x":1,"y":22}}')
const SMALL_FORM_FIELDS = 4
const SMALL_FORM_FILE = 1024
const BIG_FILE_MIB = 64

interface Libraries {
  bodykit: typeof import('../src/index')
  hono: typeof import('hono')
  remix: RemixFormDataParser
}

/** What is used of @remix-run/form-data-parser (ESM only, with `exports` types that this repo's node10 resolution cannot read). */
interface RemixFormDataParser {
  parseFormData: (request: Request, options?: { maxFileSize?: number }) => Promise<FormData>
}

const REMIX = '@remix-run/form-data-parser'

/** What a contender's answer is reduced to, so that all of them can be checked against the baseline's before timing. */
type Summary = string

/** One way to read one kind of request: `prepare` builds its input before the clock starts; `run` reads it. */
interface Contender<T = unknown> {
  id: string
  prepare: () => T
  run: (input: T) => Promise<unknown>
  summarize: (result: unknown) => Summary
  /** Called after the clock stops, with each result (disk files to remove). */
  cleanup?: (result: unknown) => void
  /** For a contender that does not parse (a floor): checks its result instead of comparing it with the baseline's. */
  check?: (result: unknown) => void
}

const encoder = new TextEncoder()

function runtimeLabel (): string {
  const g = globalThis as { Bun?: { version: string }, Deno?: { version: { deno: string } } }
  if (g.Bun) return 'Bun ' + g.Bun.version
  if (g.Deno) return 'Deno ' + g.Deno.version.deno
  return 'Node ' + process.version.slice(1)
}

/** The runtime's full collection, where it exposes one (Node: `--expose-gc`; Bun: `Bun.gc`; Deno: `--v8-flags=--expose-gc`). */
function collectGarbage (): void {
  const g = globalThis as { Bun?: { gc: (force: boolean) => void }, gc?: () => void }
  if (g.Bun) g.Bun.gc(true)
  else if (typeof g.gc === 'function') g.gc()
}

async function loadLibraries (root: string): Promise<Libraries> {
  // Imported by URL: the same line loads the built CommonJS entry under Node (tsx), Bun and Deno.
  const bodykit = await import(pathToFileURL(path.join(root, 'dist', 'index.js')).href) as Libraries['bodykit']
  return { bodykit, hono: await import('hono'), remix: await import(REMIX) as RemixFormDataParser }
}

function jsonRequest (): Request {
  return new Request('http://localhost/api', { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(SMALL_JSON.length) }, body: SMALL_JSON })
}

/**
 * The same JSON with a ReadableStream for a body, as a server adapter hands it on (@hono/node-server makes one
 * of the socket's data): Bun's and Deno's own readers have a fast path for a body given as bytes, not for this.
 */
function streamedJsonRequest (): Request {
  const init = { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(SMALL_JSON.length) }, body: streamOf(SMALL_JSON), duplex: 'half' }
  return new Request('http://localhost/api', init as RequestInit)
}

/** A ReadableStream of one fresh copy of `bytes`, closed. */
function streamOf (bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    start (controller) {
      controller.enqueue(bytes.slice())
      controller.close()
    }
  })
}

/**
 * The floor of any reader that counts a body's bytes as they arrive (the only way to stop an understated or absent
 * length at the limit): the Request's stream read to its end with its own reader, the chunks joined. Bun's and
 * Deno's request.json() and formData() of a body given as bytes never make that stream.
 */
async function readThroughStream (request: Request): Promise<Uint8Array> {
  const reader = (request.body as ReadableStream<Uint8Array>).getReader()
  const chunks: Uint8Array[] = []
  let length = 0
  for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
    chunks.push(chunk.value)
    length += chunk.value.length
  }
  const bytes = new Uint8Array(length)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.length
  }
  return bytes
}

const decoder = new TextDecoder()

/** The part headers of `fields` short fields and of one file, and the closing delimiter. */
function formFrame (fields: number): { head: Uint8Array, tail: Uint8Array } {
  let head = ''
  for (let i = 0; i < fields; i++) head += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="field${i}"\r\n\r\nvalue of field ${i}\r\n`
  head += `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`
  return { head: encoder.encode(head), tail: encoder.encode(`\r\n--${BOUNDARY}--\r\n`) }
}

function smallForm (): Uint8Array {
  const { head, tail } = formFrame(SMALL_FORM_FIELDS)
  const body = new Uint8Array(head.length + SMALL_FORM_FILE + tail.length)
  body.set(head)
  body.fill(102, head.length, head.length + SMALL_FORM_FILE)
  body.set(tail, head.length + SMALL_FORM_FILE)
  return body
}

function formRequest (body: Uint8Array | ReadableStream<Uint8Array>, length: number): Request {
  // `duplex` is what Node asks of a stream body; Bun and Deno accept it.
  const init = { method: 'POST', headers: { 'content-type': FORM_TYPE, 'content-length': String(length) }, body, duplex: 'half' }
  return new Request('http://localhost/upload', init as RequestInit)
}

/**
 * A one-file form of `fileBytes` as a Request whose body is generated as it is read: each 64 KiB chunk is a new
 * array (as a socket delivers them), so the generator holds none of what it sent.
 */
function streamedFormRequest (fileBytes: number): Request {
  const { head, tail } = formFrame(1)
  let sent = -1
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      if (sent < 0) {
        controller.enqueue(head)
        sent = 0
      } else if (sent < fileBytes) {
        const size = Math.min(CHUNK, fileBytes - sent)
        controller.enqueue(new Uint8Array(size))
        sent += size
      } else {
        controller.enqueue(tail)
        controller.close()
      }
    }
  })
  return formRequest(body, head.length + fileBytes + tail.length)
}

/** A FormData's fields and file sizes in one line, as readMultipart's result is summarized. */
function summarizeFormData (result: unknown): Summary {
  const entries: string[] = []
  for (const [name, value] of (result as FormData).entries()) entries.push(typeof value === 'string' ? `${name}=${value}` : `${name}:${value.size}`)
  return entries.join('&')
}

function summarizeMultipart (result: unknown): Summary {
  const { fields, files } = result as { fields: Record<string, string>, files: { fieldName: string, size: number }[] }
  return [...Object.entries(fields).map(([name, value]) => `${name}=${value}`), ...files.map((f) => `${f.fieldName}:${f.size}`)].join('&')
}

function removeDiskFiles (result: unknown): void {
  for (const file of (result as { files: { path?: string }[] }).files) if (file.path) fs.rmSync(file.path, { force: true })
}

/** Mean milliseconds per read over `n` inputs built before the clock starts. */
async function batch<T> (c: Contender<T>, n: number): Promise<number> {
  const inputs = Array.from({ length: n }, c.prepare)
  const results: unknown[] = []
  const start = performance.now()
  if (c.cleanup) for (const input of inputs) results.push(await c.run(input))
  else for (const input of inputs) await c.run(input)
  const ms = (performance.now() - start) / n
  if (c.cleanup) results.forEach(c.cleanup)
  return ms
}

/** Every contender must answer as the first (the baseline) does before anything is timed. */
async function checkAnswers (contenders: Contender[]): Promise<void> {
  let expected: Summary | undefined
  for (const c of contenders) {
    const result = await c.run(c.prepare())
    if (c.check) {
      c.check(result)
      continue
    }
    const summary = c.summarize(result)
    c.cleanup?.(result)
    expected ??= summary
    if (summary !== expected) throw new Error(`${c.id} answered ${summary.slice(0, 120)}, the baseline ${expected.slice(0, 120)}`)
  }
}

/**
 * Milliseconds per read of each contender over rounds, as the in-process section times middleware: batches
 * sized to ~5 ms after a warm-up, each round running every contender once, starting with another each time.
 */
async function timeSmall (contenders: Contender[], quick: boolean): Promise<number[][]> {
  await checkAnswers(contenders)
  const sizes = []
  for (const c of contenders) {
    let count = 0
    const start = performance.now()
    while (performance.now() - start < (quick ? 60 : 150)) {
      await batch(c, Math.max(1, count))
      count = count * 2 || 1
    }
    sizes.push(Math.min(4000, Math.max(1, Math.round(5 / await batch(c, Math.max(1, count >> 1))))))
  }
  const times: number[][] = contenders.map(() => [])
  const budgetMs = quick ? 800 : 1700
  const start = performance.now()
  for (let round = 0; round < (quick ? 5 : 11) || (round < 400 && performance.now() - start < budgetMs); round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (round + k) % contenders.length
      times[i].push(await batch(contenders[i], sizes[i]))
    }
  }
  return times
}

/** One read per contender per round, with a full collection before each (so none pays for another's garbage). */
async function timeLarge (contenders: Contender[], rounds: number): Promise<number[][]> {
  await checkAnswers(contenders)
  const times: number[][] = contenders.map(() => [])
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < contenders.length; k++) {
      const i = (round + k) % contenders.length
      collectGarbage()
      times[i].push(await batch(contenders[i], 1))
    }
  }
  return times
}

/** Rows of one case: each contender's time ÷ the first's (the runtime's own reader), median of per-round ratios. */
function rowsOf (name: string, contenders: Contender[], times: number[][], value: (ms: number) => number, unit: string): Row[] {
  const base = times[0]
  return contenders.map((c, i) => {
    const ratios = times[i].map((ms, round) => ms / base[round])
    const row: Row = { case: name, target: c.id, baseline: contenders[0].id, ratio: i ? median(ratios) : 1, value: value(median(times[i])), unit }
    if (i) {
      row.spread = medianSpread(ratios)
      row.extra = { rounds: ratios.length, q25: quantile(ratios, 0.25), q75: quantile(ratios, 0.75) }
    }
    return row
  })
}

/** Rows 1 to 3 in this process: small JSON, a small form, one 64 MiB file. */
async function measureSpeed (libs: Libraries, quick: boolean, log: (msg: string) => void): Promise<Row[]> {
  const { bodykit, hono, remix } = libs
  const runtime = runtimeLabel()
  const rows: Row[] = []
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-bench-'))
  try {
    const json: Contender[] = [
      { id: 'native', prepare: jsonRequest, run: (r) => (r as Request).json(), summarize: JSON.stringify },
      { id: 'bodykit', prepare: jsonRequest, run: (r) => bodykit.readJson(r as Request), summarize: JSON.stringify },
      // The Context is built before the clock, as the app builds it for routing; c.req.json() is what is timed.
      { id: 'hono', prepare: () => new hono.Context(jsonRequest()), run: (c) => (c as InstanceType<typeof hono.Context>).req.json(), summarize: JSON.stringify },
      { id: 'stream floor', prepare: jsonRequest, run: async (r) => JSON.parse(decoder.decode(await readThroughStream(r as Request))), summarize: JSON.stringify }
    ]
    rows.push(...rowsOf(`${runtime}: json ${SMALL_JSON.length} B`, json, await timeSmall(json, quick), (ms) => 1000 / ms, 'op/s'))
    const streamedJson: Contender[] = [
      { id: 'native', prepare: streamedJsonRequest, run: (r) => (r as Request).json(), summarize: JSON.stringify },
      { id: 'bodykit', prepare: streamedJsonRequest, run: (r) => bodykit.readJson(r as Request), summarize: JSON.stringify },
      { id: 'hono', prepare: () => new hono.Context(streamedJsonRequest()), run: (c) => (c as InstanceType<typeof hono.Context>).req.json(), summarize: JSON.stringify },
      { id: 'stream floor', prepare: streamedJsonRequest, run: async (r) => JSON.parse(decoder.decode(await readThroughStream(r as Request))), summarize: JSON.stringify }
    ]
    rows.push(...rowsOf(`${runtime}: json ${SMALL_JSON.length} B, stream body`, streamedJson, await timeSmall(streamedJson, quick), (ms) => 1000 / ms, 'op/s'))
    log(`  ${runtime}: json done`)

    const form = smallForm()
    const memory = { files: { storage: 'memory' as const } }
    const formRequests = (): Request => formRequest(form, form.length)
    // The floor only reads the bytes: it is checked by their count.
    const checkFormBytes = (result: unknown): void => {
      if ((result as Uint8Array).length !== form.length) throw new Error(`stream floor read ${(result as Uint8Array).length} bytes, not ${form.length}`)
    }
    const smallForms = (prepare: () => Request): Contender[] => [
      { id: 'native', prepare, run: (r) => (r as Request).formData(), summarize: summarizeFormData },
      { id: 'bodykit', prepare, run: (r) => bodykit.readMultipart(r as Request, memory), summarize: summarizeMultipart },
      { id: 'remix', prepare, run: (r) => remix.parseFormData(r as Request), summarize: summarizeFormData },
      { id: 'stream floor', prepare, run: (r) => readThroughStream(r as Request), summarize: String, check: checkFormBytes }
    ]
    const small = smallForms(formRequests)
    rows.push(...rowsOf(`${runtime}: form, ${SMALL_FORM_FIELDS} fields + 1 KiB file`, small, await timeSmall(small, quick), (ms) => 1000 / ms, 'op/s'))
    // As a server hands it on: one chunk of a ReadableStream.
    const streamedSmall = smallForms(() => formRequest(streamOf(form), form.length))
    rows.push(...rowsOf(`${runtime}: form, ${SMALL_FORM_FIELDS} fields + 1 KiB file, stream body`, streamedSmall, await timeSmall(streamedSmall, quick), (ms) => 1000 / ms, 'op/s'))
    log(`  ${runtime}: small form done`)

    const size = BIG_FILE_MIB * MiB
    const large = { limit: size + MiB, files: { fileSizeLimit: size } }
    const inMemory = { ...large, files: { ...large.files, storage: 'memory' as const } }
    const onDisk = { ...large, files: { ...large.files, storage: 'disk' as const, directory } }
    const bigRequest = (): Request => streamedFormRequest(size)
    const big: Contender[] = [
      { id: 'native', prepare: bigRequest, run: (r) => (r as Request).formData(), summarize: summarizeFormData },
      { id: 'bodykit', prepare: bigRequest, run: (r) => bodykit.readMultipart(r as Request, inMemory), summarize: summarizeMultipart },
      { id: 'bodykit disk', prepare: bigRequest, run: (r) => bodykit.readMultipart(r as Request, onDisk), summarize: summarizeMultipart, cleanup: removeDiskFiles },
      { id: 'remix', prepare: bigRequest, run: (r) => remix.parseFormData(r as Request, { maxFileSize: size }), summarize: summarizeFormData }
    ]
    rows.push(...rowsOf(`${runtime}: one ${BIG_FILE_MIB} MiB file`, big, await timeLarge(big, quick ? 3 : 5), (ms) => BIG_FILE_MIB / (ms / 1000), 'MiB/s'))
    log(`  ${runtime}: ${BIG_FILE_MIB} MiB file done`)
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
  return rows
}

/**
 * Which reader a memory child runs, on how large a file, and where the upload comes from: `stream`, a
 * ReadableStream generated in the child itself; `http`, a client in another process over the runtime's own server.
 */
interface MemoryCase { target: 'bodykit disk' | 'native' | 'remix' | 'floor', mib: number, transport: 'stream' | 'http' }

/**
 * The memory cases, in run order: the 1 GiB upload through bodykit's disk storage and through the floor (the body
 * drained and dropped: what the chunks cost until collected); the others hold the whole file. The in-process
 * stream's chunks are made in the measured process, so its floor counts the generator too; over HTTP the process
 * measured is only the server, as it is when a large upload arrives.
 */
const MEMORY_CASES: MemoryCase[] = [
  { target: 'floor', mib: 1024, transport: 'stream' },
  { target: 'bodykit disk', mib: 1024, transport: 'stream' },
  { target: 'bodykit disk', mib: 256, transport: 'stream' },
  { target: 'native', mib: 256, transport: 'stream' },
  { target: 'remix', mib: 256, transport: 'stream' },
  { target: 'floor', mib: 1024, transport: 'http' },
  { target: 'bodykit disk', mib: 1024, transport: 'http' },
  { target: 'bodykit disk', mib: 256, transport: 'http' },
  { target: 'native', mib: 256, transport: 'http' }
]

/** The process's peak RSS as the kernel counts it (Linux), reset by writing 5 to clear_refs; null elsewhere. */
function kernelPeakRss (): number | null {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))
    return match ? Number(match[1]) * 1024 : null
  } catch {
    return null
  }
}

function resetKernelPeakRss (): void {
  try {
    fs.writeFileSync('/proc/self/clear_refs', '5')
  } catch {
    // Not Linux: the 10 ms sampler alone measures the peak.
  }
}

interface UploadServer { port: number, close: () => Promise<void> }

/** What is used of `Bun.serve` and `Deno.serve`. */
interface ServingRuntimes {
  Bun?: { serve: (options: object) => { port: number, stop: (closeActive: boolean) => void } }
  Deno?: { serve: (options: object, handler: (request: Request) => Promise<Response>) => { addr: { port: number }, shutdown: () => Promise<void> } }
}

/**
 * The runtime's own HTTP server on 127.0.0.1, a free port, calling `handle` with each request: Bun.serve,
 * Deno.serve, or on Node `http.createServer` with @hono/node-server's listener (which makes a Web Request of each
 * IncomingMessage, as a Hono app on Node gets it).
 */
async function serveUploads (handle: (request: Request) => Promise<Response>): Promise<UploadServer> {
  const g = globalThis as ServingRuntimes
  if (g.Bun) {
    // Bun's own cap (128 MiB by default) would refuse the uploads before the handler runs; idleTimeout 0: none.
    const server = g.Bun.serve({ hostname: '127.0.0.1', port: 0, maxRequestBodySize: Number.MAX_SAFE_INTEGER, idleTimeout: 0, fetch: handle })
    return { port: server.port, close: async () => { server.stop(true) } }
  }
  if (g.Deno) {
    const server = g.Deno.serve({ hostname: '127.0.0.1', port: 0, onListen: () => {} }, handle)
    return { port: server.addr.port, close: () => server.shutdown() }
  }
  const { getRequestListener } = await import('@hono/node-server')
  const server = http.createServer(getRequestListener(handle))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

/**
 * The over-HTTP rows' client, a Node process of its own (this file in `upload` mode), so that none of the upload's
 * making is counted in the server's RSS: resolves when it got a 200 answering the file's size.
 */
function runUploadClient (port: number, size: number): Promise<void> {
  const root = process.env.BODYKIT_WEB_ROOT ?? process.cwd()
  return new Promise((resolve, reject) => {
    const client = spawn(process.env.BODYKIT_WEB_NODE ?? 'node', ['--import', 'tsx', path.join(root, 'bench', 'web.ts')], {
      cwd: root,
      env: { ...process.env, BODYKIT_WEB_CHILD: 'upload', BODYKIT_WEB_INPUT: JSON.stringify({ port, size }) },
      stdio: ['ignore', 'ignore', 'inherit']
    })
    client.once('error', reject)
    client.once('exit', (code, signal) => code === 0 ? resolve() : reject(new Error(`the upload client exited with ${code ?? signal}`)))
  })
}

/**
 * The client's side: a one-file form of `size` bytes with a Content-Length, written in 64 KiB chunks that wait for
 * 'drain' when the socket's buffer is full (one zeroed chunk reused: the client's memory stays flat).
 */
async function sendUpload ({ port, size }: { port: number, size: number }): Promise<void> {
  const { head, tail } = formFrame(1)
  const chunk = new Uint8Array(CHUNK)
  const answer = await new Promise<string>((resolve, reject) => {
    const headers = { 'content-type': FORM_TYPE, 'content-length': head.length + size + tail.length }
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/upload', agent: false, headers }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (data: string) => { body += data })
      res.on('end', () => res.statusCode === 200 ? resolve(body) : reject(new Error(`status ${res.statusCode}: ${body.slice(0, 200)}`)))
    })
    req.on('error', reject)
    writeRepeated(req, head, chunk, size, tail)
  })
  if (answer !== String(size)) throw new Error(`the server answered ${answer}, not ${size}`)
}

/** In a fresh child: one upload of `mib` through `target`, RSS before it and at its peak. */
async function measureMemory (libs: Libraries, { target, mib, transport }: MemoryCase): Promise<{ before: number, peak: number, seconds: number }> {
  const { bodykit, remix } = libs
  const size = mib * MiB
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-memory-'))
  const read = async (request: Request): Promise<unknown> => {
    if (target === 'floor') {
      const reader = (request.body as ReadableStream<Uint8Array>).getReader()
      let bytes = 0
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) bytes += chunk.value.length
      return bytes
    }
    if (target === 'native') return request.formData()
    if (target === 'remix') return remix.parseFormData(request, { maxFileSize: size })
    return bodykit.readMultipart(request, { limit: size + MiB, files: { storage: 'disk', directory, fileSizeLimit: size } })
  }
  const fileSize = (result: unknown): number => {
    if (target === 'floor') {
      const { head, tail } = formFrame(1)
      return (result as number) - head.length - tail.length
    }
    if (target === 'bodykit disk') {
      // The file as written to disk, and the size bodykit reports, must both be the upload's.
      const file = (result as { files: { size: number, path: string }[] }).files[0]
      const written = fs.statSync(file.path).size
      return written === file.size ? written : -1
    }
    return ((result as FormData).get('file') as File).size
  }
  let server: UploadServer | undefined
  try {
    // One upload of `bytes`: the result and the seconds the reader took.
    let upload = async (bytes: number): Promise<{ result: unknown, seconds: number }> => {
      const started = performance.now()
      const result = await read(streamedFormRequest(bytes))
      return { result, seconds: (performance.now() - started) / 1000 }
    }
    if (transport === 'http') {
      let last: { result: unknown, seconds: number } | undefined
      server = await serveUploads(async (request) => {
        try {
          const started = performance.now()
          const result = await read(request)
          last = { result, seconds: (performance.now() - started) / 1000 }
          return new Response(String(fileSize(result)))
        } catch (err) {
          return new Response(String((err as Error).message), { status: 500 })
        }
      })
      const { port } = server
      upload = async (bytes) => {
        last = undefined
        await runUploadClient(port, bytes)
        if (!last) throw new Error('the client got its answer, the handler kept no result')
        return last
      }
    }
    // A small upload first, so that code loaded on first use is not counted as the upload's growth.
    const warm = await upload(CHUNK * 4)
    if (target === 'bodykit disk') removeDiskFiles(warm.result)
    collectGarbage()
    await new Promise((resolve) => setTimeout(resolve, 100))
    collectGarbage()
    const before = process.memoryUsage().rss
    resetKernelPeakRss()
    let peak = before
    const sampler = setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 10)
    const { result, seconds } = await upload(size)
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().rss, kernelPeakRss() ?? 0)
    if (fileSize(result) !== size) throw new Error(`${target} read a file of ${fileSize(result)} bytes, not ${size}`)
    return { before, peak, seconds }
  } finally {
    await server?.close()
    fs.rmSync(directory, { recursive: true, force: true })
  }
}

// ---- The parent: Node in process, children for memory and for the other runtimes ----

/** The checkout (only the parent asks: a child under Deno has no `__dirname`). */
const repositoryRoot = (): string => path.join(__dirname, '..')
const live = new Set<ChildProcess>()
process.on('exit', () => { for (const child of live) child.kill('SIGKILL') })

interface Runtime { label: string, command: string, args: string[], env: Record<string, string> }

const nodeRuntime = (): Runtime => ({ label: 'Node', command: process.execPath, args: ['--expose-gc', '--import', 'tsx', __filename], env: {} })

function run (command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 300_000, maxBuffer: 16 * MiB }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')}: ${String(stderr || err.message).trim().split('\n').slice(-3).join(' ')}`))
      else resolve(stdout)
    })
  })
}

/** The runtime's binary from the cache folder, installed from the npm registry on first use (the binary comes in an optional platform package). */
async function installRuntime (name: RuntimeName, version: string, log: (msg: string) => void): Promise<Runtime> {
  const directory = path.join(os.tmpdir(), 'bodykit-runtimes', `${name}@${version}`)
  const bin = path.join(directory, 'node_modules', '.bin', name)
  let installed = await run(bin, ['--version']).catch(() => null)
  if (installed === null) {
    log(`  installing ${name}@${version} into ${directory}`)
    fs.mkdirSync(directory, { recursive: true })
    await run('npm', ['install', '--prefix', directory, '--no-save', '--no-audit', '--no-fund', `${name}@${version}`])
    installed = await run(bin, ['--version'])
  }
  const script = path.join(__dirname, 'web.ts')
  if (name === 'bun') return { label: 'Bun', command: bin, args: [script], env: {} }
  // --sloppy-imports: the bench's imports have no extensions, as tsx and Bun take them.
  return { label: 'Deno', command: bin, args: ['run', '-A', '--sloppy-imports', '--v8-flags=--expose-gc', script], env: { DENO_DIR: path.join(directory, 'deno-dir'), NO_COLOR: '1' } }
}

/** Runs this file as a child under `runtime` in `mode`; its last line of output is the JSON answer. */
function runChild<T> (runtime: Runtime, mode: 'speed' | 'memory', input: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(runtime.command, runtime.args, {
      cwd: repositoryRoot(),
      // BODYKIT_WEB_NODE: the Node that runs the over-HTTP rows' client, whichever runtime the child is.
      env: { ...process.env, ...runtime.env, BODYKIT_WEB_CHILD: mode, BODYKIT_WEB_INPUT: JSON.stringify(input), BODYKIT_WEB_ROOT: repositoryRoot(), BODYKIT_WEB_NODE: process.execPath },
      stdio: ['ignore', 'pipe', 'inherit']
    })
    live.add(child)
    const timer = setTimeout(() => child.kill('SIGKILL'), 180_000)
    let output = ''
    child.stdout?.on('data', (data: Buffer) => { output += data.toString() })
    child.once('error', reject)
    child.once('exit', (code, signal) => {
      clearTimeout(timer)
      live.delete(child)
      const last = output.trim().split('\n').pop() ?? ''
      try {
        if (code !== 0) throw new Error(`exited with ${code ?? signal}`)
        resolve(JSON.parse(last) as T)
      } catch (err) {
        reject(new Error(`${runtime.label} ${mode} child: ${(err as Error).message}; output: ${output.slice(-300)}`))
      }
    })
  })
}

async function memoryRows (runtime: Runtime, label: string, log: (msg: string) => void): Promise<Row[]> {
  const rows: Row[] = []
  for (const memoryCase of MEMORY_CASES) {
    const size = memoryCase.mib >= 1024 ? memoryCase.mib / 1024 + ' GiB' : memoryCase.mib + ' MiB'
    const name = `${label}: ${size} file ${memoryCase.transport === 'http' ? 'over HTTP' : 'from an in-process stream'}, peak RSS growth ÷ file size`
    const row: Row = { case: name, target: memoryCase.target, baseline: 'native', ratio: null, value: null, unit: 'MiB' }
    try {
      const { before, peak, seconds } = await runChild<{ before: number, peak: number, seconds: number }>(runtime, 'memory', memoryCase)
      const growth = (peak - before) / MiB
      row.ratio = growth / memoryCase.mib
      row.value = growth
      row.extra = { beforeMiB: before / MiB, peakMiB: peak / MiB, seconds }
      log(`  ${label}, ${memoryCase.mib} MiB ${memoryCase.transport === 'http' ? 'over HTTP' : 'in-process stream'} through ${memoryCase.target}: peak RSS growth ${growth.toFixed(1)} MiB (${(memoryCase.mib / seconds).toFixed(0)} MiB/s)`)
    } catch (err) {
      row.note = 'error: ' + String((err as Error).message).slice(0, 60)
      log(`  ${label}, ${memoryCase.mib} MiB ${memoryCase.transport} through ${memoryCase.target} failed: ${(err as Error).message}`)
    }
    rows.push(row)
  }
  return rows
}

/** The aims of the section, checked on each runtime's rows. */
function logAims (rows: Row[], log: (msg: string) => void): void {
  const find = (prefix: string, target: string, suffix: string): Row | undefined => rows.find((r) => r.case.startsWith(prefix) && r.case.includes(suffix) && r.target === target)
  for (const label of new Set(rows.map((r) => r.case.split(':')[0]))) {
    const json = find(label, 'bodykit', 'json')?.ratio
    const form = find(label, 'bodykit', 'form,')?.ratio
    // The 1 GiB aim is about a server receiving an upload: judged over HTTP; the in-process stream is for comparison.
    const gib = find(label, 'bodykit disk', '1 GiB file over HTTP')?.value
    const gibStream = find(label, 'bodykit disk', '1 GiB file from an in-process stream')?.value
    const verdict = (ok: boolean | undefined): string => ok === undefined ? 'n/a' : ok ? 'met' : 'NOT met'
    // What the runtime's stream alone costs (the floor) and the same with a stream body, beside each aim.
    const also = (suffix: string): string => ['bodykit', 'stream floor'].map((target) => `${target} ${find(label, target, suffix)?.ratio?.toFixed(2)}`).join(', ')
    log(`  ${label} aims: readJson ≤ 1.1× request.json() ${verdict(json == null ? undefined : json <= 1.1)} (${json?.toFixed(2)}; ` +
      `floor ${find(label, 'stream floor', 'json')?.ratio?.toFixed(2)}; stream body: ${also('B, stream body')}); ` +
      `readMultipart < request.formData() ${verdict(form == null ? undefined : form < 1)} (${form?.toFixed(2)}; ` +
      `floor ${find(label, 'stream floor', 'form,')?.ratio?.toFixed(2)}; stream body: ${also('file, stream body')}); ` +
      `1 GiB over HTTP growth < 64 MiB ${verdict(gib == null ? undefined : gib < 64)} (${gib?.toFixed(1)} MiB; in-process stream ${gibStream?.toFixed(1)} MiB)`)
  }
}

export async function web (ctx: Context): Promise<SectionResult> {
  const rows: Row[] = []
  const notes: string[] = []
  rows.push(...await measureSpeed(await loadLibraries(repositoryRoot()), ctx.quick, ctx.log))
  rows.push(...await memoryRows(nodeRuntime(), runtimeLabel(), ctx.log))
  for (const { name, version } of RUNTIMES) {
    let runtime: Runtime
    try {
      runtime = await installRuntime(name, version, ctx.log)
    } catch (err) {
      notes.push(`${name}@${version} skipped: ${(err as Error).message}`)
      ctx.log(`  ${name}@${version} skipped: ${(err as Error).message}`)
      continue
    }
    try {
      rows.push(...await runChild<Row[]>(runtime, 'speed', { quick: ctx.quick }))
    } catch (err) {
      notes.push(`${runtime.label} speed rows failed`)
      ctx.log(`  ${(err as Error).message}`)
    }
    rows.push(...await memoryRows(runtime, `${runtime.label} ${version}`, ctx.log))
  }
  logAims(rows, ctx.log)
  return {
    id: 'web',
    title: 'Web Request bodies: time per read ÷ the runtime\'s own request.json() / request.formData() (lower is faster; median of per-round ratios ±95% interval, op/s or MiB/s in brackets); memory rows: peak RSS growth ÷ file size (MiB in brackets)',
    legend: 'Requests built before the clock (Hono: its Context too); small bodies in batches of ~5 ms, rounds rotating the order; the 64 MiB and in-process memory bodies are ReadableStreams of fresh 64 KiB chunks. ' +
      'Over-HTTP memory rows: the runtime\'s own server (Node: http.createServer with @hono/node-server\'s listener; Bun.serve; Deno.serve) in the measured child, a Node client process writing 64 KiB chunks with backpressure and a Content-Length. ' +
      'bodykit: readJson / readMultipart (memory storage); bodykit disk: readMultipart to a temp dir; hono: c.req.json(); remix: @remix-run/form-data-parser parseFormData (keeps files in memory). ' +
      'Node in the bench process; Bun and Deno in a child each; each memory row in a fresh child. ' + notes.join('; '),
    rows
  }
}

// ---- A child: this file run by Node, Bun or Deno with BODYKIT_WEB_CHILD set ----

async function child (mode: string): Promise<void> {
  if (mode === 'upload') return sendUpload(JSON.parse(process.env.BODYKIT_WEB_INPUT ?? '{}') as { port: number, size: number })
  const libs = await loadLibraries(process.env.BODYKIT_WEB_ROOT ?? process.cwd())
  const input = JSON.parse(process.env.BODYKIT_WEB_INPUT ?? '{}') as { quick?: boolean } & MemoryCase
  const log = (msg: string): void => { console.error(msg) }
  const answer = mode === 'speed' ? await measureSpeed(libs, input.quick === true, log) : await measureMemory(libs, input)
  console.log(JSON.stringify(answer))
}

if (process.env.BODYKIT_WEB_CHILD) {
  child(process.env.BODYKIT_WEB_CHILD).then(() => process.exit(0), (err: unknown) => {
    console.error(err)
    process.exit(1)
  })
}
