// Multipart section: uploads over HTTP to a server in a child process, bodykit against multer (memory and disk),
// formidable, @fastify/busboy alone and the floor (the request piped straight to a file).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http, { type IncomingMessage } from 'node:http'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import autocannon from 'autocannon'
import { median, type Context, type Row, type SectionResult } from './report'
import { writeRepeated } from './upload-body'

const BOUNDARY = 'benchBoundaryX7MA4YWxkTrZu0gW'
const TYPE = 'multipart/form-data; boundary=' + BOUNDARY
const MiB = 1024 * 1024

interface Server { port: number, child: ChildProcess, stop: () => void }

/**
 * bench/multipart-server.ts with its types stripped, written to `directory` as plain CommonJS: the server runs
 * under plain `node`, as an application does. Under tsx's loader a server could make 19 to 31 full garbage
 * collections per 9 uploads of 64 MiB (bodykit's in every try, multer's in some) against 0 to 3 as plain JS, and
 * the 64 MiB row measured those.
 */
function writePlainServer (directory: string): string {
  const load = createRequire(__filename)
  const ts = load('typescript') as typeof import('typescript')
  const source = fs.readFileSync(path.join(__dirname, 'multipart-server.ts'), 'utf8')
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } })
  const file = path.join(directory, 'multipart-server.cjs')
  fs.writeFileSync(file, outputText)
  return file
}

/** Starts the plain server for one target, writing to `directory`; it loads bodykit and the others from this checkout. */
function startServer (serverFile: string, target: string, directory: string): Promise<Server> {
  // A target named "<target> (before)" runs BENCH_BEFORE's build (an earlier checkout with its dist/), paired in one sitting.
  const before = target.endsWith(BEFORE)
  const root = before ? process.env.BENCH_BEFORE as string : path.join(__dirname, '..')
  const child = spawn(process.execPath, [serverFile, before ? target.slice(0, -BEFORE.length) : target, directory, root], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.stdout?.once('data', (data: Buffer) => {
      const { port } = JSON.parse(data.toString()) as { port: number }
      resolve({ port, child, stop: () => { child.kill() } })
    })
  })
}

const BEFORE = ' (before)'
/** With BENCH_BEFORE set, these targets also run as the earlier build's. */
function withBefore (targets: string[]): string[] {
  return process.env.BENCH_BEFORE ? [...targets, ...targets.filter((t) => t.startsWith('bodykit')).map((t) => t + BEFORE)] : targets
}

/** The part headers before a file's bytes, and the closing delimiter after them. */
const filePreface = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="upload.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
const closing = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)

/** Streams a one-file form of `size` bytes (one 64 KiB piece reused: the client's memory stays flat); resolves with the seconds until the answer ended. */
function upload (port: number, size: number): Promise<number> {
  const piece = Buffer.alloc(64 * 1024, 'a')
  return new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': TYPE, 'content-length': filePreface.length + size + closing.length } }, (res) => {
      res.resume()
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error('status ' + res.statusCode))
        else resolve((performance.now() - started) / 1000)
      })
    })
    req.on('error', reject)
    writeRepeated(req, filePreface, piece, size, closing)
  })
}

/**
 * Milliseconds a part reader takes for a one-file form of 64 MiB, in process: 64 KiB pieces pushed one per turn of
 * the event loop (as a socket delivers them), the file's bytes dropped: bodykit's stage, or busboy alone.
 */
function readInProcess (reader: 'bodykit' | 'busboy'): Promise<number> {
  const load = createRequire(__filename)
  const pieces = Array.from({ length: 1024 }, () => Buffer.alloc(64 * 1024, 'a'))
  return new Promise((resolve, reject) => {
    let started = 0n
    const source = new Readable({ read () {} })
    const ended = (): void => { resolve(Number(process.hrtime.bigint() - started) / 1e6) }
    if (reader === 'busboy') {
      const parser = (load('busboy') as typeof import('busboy'))({ headers: { 'content-type': TYPE }, defParamCharset: 'utf8' })
      parser.on('file', (_name: string, stream: Readable) => { stream.resume() })
      parser.on('error', reject)
      parser.on('close', ended)
      source.pipe(parser)
    } else {
      const { createMultipartStage } = load(path.join(__dirname, '..', 'dist', 'multipart', 'part-reader.js')) as typeof import('../src/multipart/part-reader')
      const collector = {
        settled: false,
        field () {},
        file (_name: string | undefined, stream: Readable) { stream.resume() },
        countLimit () {},
        unreadableFileName: reject,
        parserError: reject,
        fault: reject,
        end: ended,
        abort (callback: () => void) { callback() },
        whenJudged (callback: () => void) { process.nextTick(callback) }
      }
      const config = { defParamCharset: 'utf8', limits: {} }
      const req = { headers: { 'content-type': TYPE } } as unknown as IncomingMessage
      const { LimitedInput } = load(path.join(__dirname, '..', 'dist', 'stage-input.js')) as typeof import('../src/stage-input')
      createMultipartStage({ check: () => null, begin: () => ({ config, collector }) }).start(new LimitedInput(source, Infinity, () => {}), req, undefined, () => {})
    }
    started = process.hrtime.bigint()
    source.push(filePreface)
    let index = 0
    const next = (): void => {
      if (index === pieces.length) {
        source.push(closing)
        source.push(null)
        return
      }
      source.push(pieces[index++])
      setImmediate(next)
    }
    next()
  })
}

/** Writes the machine's dirty pages to disk (`sync`), where the platform has the command. */
function flushPageCache (): void {
  try {
    execFileSync('sync')
  } catch {
    // No `sync` (Windows): uploads then share the disk's write-back, as they did before.
  }
}

async function getJson (port: number, url: string): Promise<{ rss: number, peak: number, cpu: number }> {
  const res = await fetch(`http://127.0.0.1:${port}${url}`)
  return await res.json() as { rss: number, peak: number, cpu: number }
}

/** A form of `fields` short fields and, optionally, one file of `fileSize` bytes. */
function form (fields: number, fileSize: number | null): Buffer {
  const parts: Buffer[] = []
  for (let i = 0; i < fields; i++) parts.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="field${i}"\r\n\r\nvalue of field ${i}\r\n`))
  if (fileSize !== null) parts.push(filePreface, Buffer.alloc(fileSize, 'f'), Buffer.from('\r\n'))
  parts.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(parts)
}

/** req/s of autocannon's 10 connections against one target. */
async function requestsPerSecond (port: number, body: Buffer, contentType: string, duration: number): Promise<number> {
  const result = await autocannon({ url: `http://127.0.0.1:${port}/`, method: 'POST', headers: { 'content-type': contentType }, body, connections: 10, duration })
  if (result.non2xx + result.errors > 0) throw new Error(`${result.non2xx} non-2xx and ${result.errors} errors`)
  return result['2xx'] / result.duration
}

export async function multipartSection (ctx: Context): Promise<SectionResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-bench-'))
  // The server file lives apart from the uploads, so that no target counts or removes it.
  const serverDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-bench-server-'))
  const serverFile = writePlainServer(serverDirectory)
  const rows: Row[] = []
  const servers = new Map<string, Server>()
  const serverFor = async (target: string): Promise<Server> => {
    let server = servers.get(target)
    if (server === undefined) servers.set(target, server = await startServer(serverFile, target, directory))
    return server
  }
  try {
    // 1. A 64 MiB file to disk: throughput, rounds alternating between targets, median per target. The disk's
    // write-back makes single uploads vary, so each starts after a `sync`, the rounds are many, and the server's
    // user CPU time per upload (which the disk blurs less) is reported beside it.
    const bigTargets = withBefore(['floor-disk', 'floor-disk-1mib', 'bodykit-disk', 'multer-disk', 'bodykit-multer-disk', 'formidable-disk', 'fastify-busboy-disk'])
    const seconds = new Map<string, number[]>(bigTargets.map((target) => [target, []]))
    const cpu = new Map<string, number[]>(bigTargets.map((target) => [target, []]))
    for (let round = 0; round < (ctx.quick ? 3 : 9); round++) {
      // Each round starts with another target, so none always follows the same one.
      for (const target of [...bigTargets.slice(round % bigTargets.length), ...bigTargets.slice(0, round % bigTargets.length)]) {
        const { port } = await serverFor(target)
        // The previous upload's dirty pages are written out first: their write-back would otherwise fall on this one.
        flushPageCache()
        const before = await getJson(port, '/cpu')
        ;(seconds.get(target) as number[]).push(await upload(port, 64 * MiB))
        ;(cpu.get(target) as number[]).push(((await getJson(port, '/cpu')).cpu - before.cpu) / 1000)
      }
    }
    const floorRate = 64 / median(seconds.get('floor-disk') as number[])
    for (const target of bigTargets) {
      const rate = 64 / median(seconds.get(target) as number[])
      rows.push({ case: '64 MiB file to disk: MiB/s', target, baseline: 'floor-disk', ratio: rate / floorRate, value: rate, unit: 'MiB/s' })
      ctx.log(`  64 MiB to disk, ${target}: ${rate.toFixed(0)} MiB/s (${(rate / floorRate).toFixed(2)} of the floor)`)
    }
    const floorCpu = median(cpu.get('floor-disk') as number[])
    for (const target of bigTargets) {
      const ms = median(cpu.get(target) as number[])
      // Ratio: the floor's CPU time ÷ the target's (higher is better, as the other rows).
      rows.push({ case: '64 MiB file to disk: server user CPU ms', target, baseline: 'floor-disk', ratio: floorCpu / ms, value: ms, unit: 'ms' })
      ctx.log(`  64 MiB to disk, ${target}: ${ms.toFixed(0)} ms of server user CPU (the floor's ÷ this: ${(floorCpu / ms).toFixed(2)})`)
    }

    // 1b. The same 64 MiB through the part reader alone, in process: what the parser costs, without the disk.
    const readerMs = new Map<string, number[]>([['busboy', []], ['bodykit', []]])
    for (let round = 0; round < (ctx.quick ? 3 : 7); round++) {
      ;(readerMs.get('busboy') as number[]).push(await readInProcess('busboy'))
      ;(readerMs.get('bodykit') as number[]).push(await readInProcess('bodykit'))
    }
    const busboyMs = median(readerMs.get('busboy') as number[])
    for (const [reader, values] of readerMs) {
      const ms = median(values)
      rows.push({ case: '64 MiB through the part reader, in process: ms', target: reader === 'busboy' ? 'busboy' : 'bodykit-reader', baseline: 'busboy', ratio: busboyMs / ms, value: ms, unit: 'ms' })
      ctx.log(`  64 MiB through the part reader in process, ${reader}: ${ms.toFixed(1)} ms (busboy's ÷ this: ${(busboyMs / ms).toFixed(2)})`)
    }

    // 2. A small form (5 fields and one 10 KiB file, memory) over HTTP: req/s, two alternating passes, best of each.
    const small = form(5, 10 * 1024)
    const duration = ctx.quick ? 3 : 5
    const rps = new Map<string, number[]>(withBefore(['bodykit-memory', 'multer-memory', 'bodykit-multer-memory']).map((target) => [target, []]))
    for (let pass = 0; pass < 2; pass++) {
      for (const target of rps.keys()) (rps.get(target) as number[]).push(await requestsPerSecond((await serverFor(target)).port, small, TYPE, duration))
    }
    const multerRps = Math.max(...(rps.get('multer-memory') as number[]))
    for (const [target, values] of rps) {
      const best = Math.max(...values)
      rows.push({ case: 'small form (5 fields, 10 KiB file): req/s', target, baseline: 'multer-memory', ratio: best / multerRps, value: best, unit: 'req/s' })
      ctx.log(`  small form, ${target}: ${best.toFixed(0)} req/s (${(best / multerRps).toFixed(2)}× multer)`)
    }

    // 3. Fields only: 20 fields as multipart against the same fields as urlencoded, both bodykit.
    const fields = form(20, null)
    const urlencoded = Buffer.from(Array.from({ length: 20 }, (_, i) => `field${i}=value+of+field+${i}`).join('&'))
    const fieldsRps = await requestsPerSecond((await serverFor('bodykit-fields')).port, fields, TYPE, duration)
    const urlencodedRps = await requestsPerSecond((await serverFor('bodykit-urlencoded')).port, urlencoded, 'application/x-www-form-urlencoded', duration)
    rows.push({ case: '20 fields: req/s, multipart ÷ urlencoded', target: 'bodykit-fields', baseline: 'bodykit-urlencoded', ratio: fieldsRps / urlencodedRps, value: fieldsRps, unit: 'req/s' })
    ctx.log(`  20 fields: multipart ${fieldsRps.toFixed(0)} req/s, urlencoded ${urlencodedRps.toFixed(0)} req/s (${(urlencodedRps / fieldsRps).toFixed(2)}× the time)`)

    // 3b. The same 20 fields through multer's .none(): bodykit/multer against multer.
    const multerFields = new Map<string, number[]>(withBefore(['multer-fields', 'bodykit-multer-fields']).map((target) => [target, []]))
    for (let pass = 0; pass < 2; pass++) {
      for (const target of multerFields.keys()) (multerFields.get(target) as number[]).push(await requestsPerSecond((await serverFor(target)).port, fields, TYPE, duration))
    }
    const multerFieldsRps = Math.max(...(multerFields.get('multer-fields') as number[]))
    for (const [target, values] of multerFields) {
      const best = Math.max(...values)
      rows.push({ case: '20 fields, multer .none(): req/s', target, baseline: 'multer-fields', ratio: best / multerFieldsRps, value: best, unit: 'req/s' })
      ctx.log(`  20 fields through .none(), ${target}: ${best.toFixed(0)} req/s (${(best / multerFieldsRps).toFixed(2)}× multer)`)
    }

    // 4. A 1 GiB upload to disk: the server's peak RSS growth.
    for (const target of ctx.quick ? ['bodykit-disk', 'bodykit-multer-disk'] : ['bodykit-disk', 'multer-disk', 'bodykit-multer-disk']) {
      const server = await serverFor(target)
      const before = await getJson(server.port, '/rss/reset')
      await upload(server.port, 1024 * MiB)
      const after = await getJson(server.port, '/rss')
      const growth = (after.peak - before.rss) / MiB
      rows.push({ case: '1 GiB file to disk: peak RSS growth (MiB)', target, baseline: target, ratio: null, value: growth, unit: 'MiB', note: 'absolute figure' })
      ctx.log(`  1 GiB to disk, ${target}: peak RSS growth ${growth.toFixed(1)} MiB`)
    }
  } finally {
    for (const server of servers.values()) server.stop()
    fs.rmSync(directory, { recursive: true, force: true })
    fs.rmSync(serverDirectory, { recursive: true, force: true })
  }
  return {
    id: 'multipart',
    title: 'Multipart uploads over HTTP (server in a child process): throughput and req/s against the floor and multer',
    legend: 'Ratios: MiB/s ÷ the floor (the request piped to a file), req/s ÷ multer 2 with memory storage, req/s ÷ the same fields as urlencoded (higher is better).',
    rows
  }
}
