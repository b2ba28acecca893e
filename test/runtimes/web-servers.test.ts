// Real servers on other runtimes (Bun.serve, Deno.serve, workerd with nodejs_compat) run bodykit's built `dist/` readers
// on the Web Request each hands over; raw HTTP from Node gets the same answers as the same handler on Node in-process,
// and the hostile bodies (a 1 GiB declared length, an endless chunked body, compression bombs) are refused early.
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { builtinModules } from 'node:module'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import zlib from 'node:zlib'
import { after, before, describe, it, type TestContext } from 'node:test'
import * as esbuild from 'esbuild'
import { createHandler, ROUTE_OPTIONS, type Readers } from './web-routes'

const run = promisify(execFile)
const ROOT = path.resolve(__dirname, '../..')
const DIST = path.join(ROOT, 'dist/index.js')
/** Runtimes are installed from the npm registry once, outside the repo, and reused. */
const CACHE = path.join(os.tmpdir(), 'bodykit-runtimes')
/** A server stops by itself after this, whatever happens to the test. */
const SERVER_LIFETIME_MS = 120_000

interface Runtime { name: 'bun' | 'deno' | 'workerd', version: string }
const RUNTIMES: readonly Runtime[] = [
  { name: 'bun', version: '1.4.5' },
  { name: 'deno', version: '2.9.6' },
  { name: 'workerd', version: '1.20261117.1' }
]
// workerd's Node modules (node:stream, node:zlib, node:fs, node:querystring, …) are all there at this date.
const WORKERD_COMPATIBILITY_DATE = '2026-08-01'

interface Installed { bin: string, version: string, installMs: number, cached: boolean }

/** The runtime's binary from its npm package (the binary ships in an optional platform package: no postinstall). */
async function install (runtime: Runtime): Promise<Installed | { skip: string }> {
  const dir = path.join(CACHE, `${runtime.name}@${runtime.version}`)
  const bin = path.join(dir, 'node_modules/.bin', runtime.name)
  const started = Date.now()
  const versionOf = async (): Promise<string> => (await run(bin, ['--version'], { timeout: 30_000 })).stdout.trim().split('\n')[0]
  try {
    return { bin, version: await versionOf(), installMs: Date.now() - started, cached: true }
  } catch {
    // Not in the cache yet (or broken): installed below.
  }
  try {
    fs.mkdirSync(dir, { recursive: true })
    await run('npm', ['install', '--prefix', dir, '--no-save', '--no-audit', '--no-fund', `${runtime.name}@${runtime.version}`], { timeout: 300_000 })
    return { bin, version: await versionOf(), installMs: Date.now() - started, cached: false }
  } catch (err) {
    const detail = String((err as { stderr?: unknown }).stderr ?? '').trim().split('\n').slice(0, 2).join(' | ') || String(err)
    return { skip: `${runtime.name}@${runtime.version} could not be installed from the npm registry into ${dir}: ${detail}` }
  }
}

// All three install at once, while the first runtime's cases run.
const installs = new Map(RUNTIMES.map((runtime) => [runtime.name, install(runtime)]))

interface Server { port: number, child: ChildProcess, output: () => string }

function spawnServer (bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): { child: ChildProcess, output: () => string } {
  const child = spawn(bin, args, { cwd, env: { ...process.env, ...env, BODYKIT_SERVER_LIFETIME_MS: String(SERVER_LIFETIME_MS) }, stdio: ['pipe', 'pipe', 'pipe'], timeout: SERVER_LIFETIME_MS + 5000 })
  let log = ''
  child.stdout?.on('data', (chunk: Buffer) => { log += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { log += chunk.toString() })
  return { child, output: () => log }
}

/** Bun and Deno print `{"port":N}` once listening. */
function portFromOutput (child: ChildProcess, output: () => string): Promise<number> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error('the server did not listen within 30 s:\n' + output())) }, 30_000)
    const check = (): void => {
      const match = /\{"port":(\d+)\}/.exec(output())
      if (match) { clearTimeout(timer); resolve(Number(match[1])) }
    }
    child.stdout?.on('data', check)
    child.once('exit', (code) => { clearTimeout(timer); reject(new Error(`the server exited (${code}) before listening:\n` + output())) })
  })
}

async function freePort (): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** workerd says nothing when it listens: asked until it answers. */
async function waitForAnswer (port: number, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`workerd exited (${child.exitCode}):\n` + output())
    try {
      if ((await fetch(`http://127.0.0.1:${port}/runtime`)).ok) return
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error('workerd did not answer within 30 s:\n' + output())
}

/** Node builtins that bundled CommonJS `require()`s become ESM imports of `node:` modules, as wrangler does for nodejs_compat. */
const nodeBuiltins: esbuild.Plugin = {
  name: 'node-builtins',
  setup (build) {
    const builtins = new Set(builtinModules)
    build.onResolve({ filter: /^(node:)?[a-z0-9_/]+$/ }, (args) => {
      const name = args.path.replace(/^node:/, '')
      if (!builtins.has(name)) return undefined
      if (args.kind === 'require-call') return { path: name, namespace: 'node-builtin' }
      return { path: 'node:' + name, external: true }
    })
    build.onLoad({ filter: /.*/, namespace: 'node-builtin' }, (args) => ({ contents: `import m from 'node:${args.path}'; module.exports = m`, resolveDir: ROOT }))
  }
}

async function startServer (runtime: Runtime, bin: string, folder: string): Promise<Server> {
  const here = path.join(ROOT, 'test/runtimes')
  if (runtime.name === 'bun') {
    const { child, output } = spawnServer(bin, ['run', path.join(here, 'bun-server.mjs')], {}, ROOT)
    return { port: await portFromOutput(child, output), child, output }
  }
  if (runtime.name === 'deno') {
    const args = ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', '--allow-sys', path.join(here, 'deno-server.mjs')]
    const { child, output } = spawnServer(bin, args, { DENO_DIR: path.join(folder, 'deno-dir'), NO_COLOR: '1' }, ROOT)
    return { port: await portFromOutput(child, output), child, output }
  }
  await esbuild.build({
    entryPoints: [path.join(here, 'workerd-worker.mjs')],
    outfile: path.join(folder, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    plugins: [nodeBuiltins],
    logLevel: 'error'
  })
  const port = await freePort()
  fs.writeFileSync(path.join(folder, 'config.capnp'), [
    'using Workerd = import "/workerd/workerd.capnp";',
    'const config :Workerd.Config = (',
    '  services = [ (name = "main", worker = .worker) ],',
    `  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],`,
    ');',
    'const worker :Workerd.Worker = (',
    '  modules = [ (name = "worker.js", esModule = embed "worker.js") ],',
    `  compatibilityDate = "${WORKERD_COMPATIBILITY_DATE}",`,
    '  compatibilityFlags = ["nodejs_compat"],',
    ');',
    ''
  ].join('\n'))
  const { child, output } = spawnServer(bin, ['serve', '--verbose', path.join(folder, 'config.capnp')], {}, folder)
  await waitForAnswer(port, child, output)
  return { port, child, output }
}

// ---------------------------------------------------------------------------------------------------------------
// The requests, as bytes on the wire.

interface Answer {
  status: number | null
  json: unknown
  text: string
  ms: number
  /** Body bytes the kernel took from the client before the answer was complete. */
  written: number
  /** An endless body: what the client could write in the half second after the answer, and whether the server closed. */
  after: { written: number, closed: boolean } | null
  /** An endless body whose connection broke before the answer was read: the error's code (see workerd below). */
  reset?: string
}

/** How long an endless body goes on being written after the answer. */
const AFTER_ANSWER_MS = 500

/** One exchange over a raw socket: the head, then a body (whole, or chunked without end), until the answer is complete. */
function exchange (port: number, head: string, body: Buffer | 'endless' | null, timeoutMs = 15_000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    const started = Date.now()
    let received = Buffer.alloc(0)
    let written = 0
    let answer: Answer | null = null
    let settled = false
    const timer = setTimeout(() => { settle(new Error(`no answer within ${timeoutMs} ms (${written} body bytes written): ${received.toString('latin1').slice(0, 300)}`)) }, timeoutMs)
    const settle = (err: Error | null): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      if (answer !== null) {
        if (answer.after !== null) answer.after.written = written - answer.written
        resolve(answer)
      } else if (body === 'endless' && err !== null && typeof (err as NodeJS.ErrnoException).code === 'string') {
        resolve({ status: null, json: null, text: '', ms: Date.now() - started, written, after: null, reset: (err as NodeJS.ErrnoException).code })
      } else {
        reject(err ?? new Error(`the connection ended without an answer (${written} body bytes written): ${received.toString('latin1').slice(0, 300)}`))
      }
    }
    const tryParse = (atEnd: boolean): void => {
      if (answer !== null) return
      const parsed = parseResponse(received, atEnd)
      if (parsed === null) return
      let json: unknown = null
      try { json = JSON.parse(parsed.body) } catch { /* the runtime's own answer, not the handler's JSON */ }
      answer = { status: parsed.status, json, text: parsed.body, ms: Date.now() - started, written, after: body === 'endless' ? { written: 0, closed: false } : null }
      if (body === 'endless') setTimeout(() => { settle(null) }, AFTER_ANSWER_MS)
      else settle(null)
    }
    const onClosed = (err: Error | null): void => {
      tryParse(true)
      if (answer?.after) answer.after.closed = true
      settle(err)
    }
    socket.on('data', (chunk: Buffer) => { received = Buffer.concat([received, chunk]); tryParse(false) })
    socket.on('end', () => { onClosed(null) })
    // A server that refuses the rest of an upload closes while the client writes (EPIPE, ECONNRESET): the answer is already in.
    socket.on('error', onClosed)
    socket.write(head)
    if (body === 'endless') {
      const frame = Buffer.concat([Buffer.from(ENDLESS_CHUNK.length.toString(16) + '\r\n'), ENDLESS_CHUNK, Buffer.from('\r\n')])
      const pump = (): void => {
        // One frame a turn of the event loop, so that an answer that came in is read before the next write (a server
        // closing at its 413 makes that write fail, and the socket is destroyed with the answer unread); bounded, so
        // that a server reading without a limit fails the test instead of filling the machine.
        if (settled || socket.destroyed || written >= ENDLESS_CAP) return
        if (socket.write(frame, (err) => { if (!err) written += ENDLESS_CHUNK.length })) setImmediate(pump)
        else socket.once('drain', () => { setImmediate(pump) })
      }
      pump()
    } else if (body !== null) {
      socket.write(body, (err) => { if (!err) written += body.length })
    }
  })
}

const ENDLESS_CHUNK = Buffer.alloc(16 * 1024, 'a')
const ENDLESS_CAP = 256 * 1024 * 1024

/** Status and body of a response once complete (Content-Length, chunked, or until the close). */
function parseResponse (data: Buffer, atEnd: boolean): { status: number, body: string } | null {
  const end = data.indexOf('\r\n\r\n')
  if (end === -1) return null
  const lines = data.subarray(0, end).toString('latin1').split('\r\n')
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0])?.[1])
  const headers = new Map(lines.slice(1).map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  let rest = data.subarray(end + 4)
  const length = headers.get('content-length')
  if (length !== undefined) return rest.length >= Number(length) ? { status, body: rest.subarray(0, Number(length)).toString() } : null
  if (headers.get('transfer-encoding')?.toLowerCase() === 'chunked') {
    const parts: Buffer[] = []
    for (;;) {
      const lineEnd = rest.indexOf('\r\n')
      if (lineEnd === -1) return null
      const size = parseInt(rest.subarray(0, lineEnd).toString(), 16)
      if (size === 0) return { status, body: Buffer.concat(parts).toString() }
      if (rest.length < lineEnd + 2 + size + 2) return null
      parts.push(rest.subarray(lineEnd + 2, lineEnd + 2 + size))
      rest = rest.subarray(lineEnd + 2 + size + 2)
    }
  }
  return atEnd ? { status, body: rest.toString() } : null
}

interface Case {
  name: string
  path: keyof typeof ROUTE_OPTIONS
  headers: Record<string, string>
  /** Sent whole with its Content-Length (unless `headers` sets one), or chunked without end. */
  body: Buffer | 'endless' | { declared: number }
  /** The JSON the handler answers, as the in-process Node run gives it; checked against it besides. */
  expect: { status: number, type?: string }
}

/**
 * What a runtime does that bodykit's refusal cannot change yet, measured on the pinned versions (see the endless body):
 * the test is a todo there, reported with its reason instead of failing the run.
 */
const KNOWN: Partial<Record<Runtime['name'], { beforeAnswer?: string, afterAnswer?: string }>> = {
  bun: {
    beforeAnswer: "Bun 1.4.5 reads a cancelled Request body on and discards it at wire speed until the response is sent (tens of MiB); left uncancelled it keeps backpressure, and `Connection: close` on the response then closes",
    afterAnswer: 'Bun 1.4.5 keeps the connection after the 413 and reads the rest of a cancelled body without end'
  },
  deno: {
    afterAnswer: 'Deno 2.9.6 keeps the connection after the 413 and reads the rest of a cancelled body without end (it ignores `Connection: close`; an uncancelled body keeps backpressure)'
  }
}

const MIB = 1024 * 1024
const seeded = (length: number, seed: number): Buffer => Buffer.from(Array.from({ length }, (_, i) => (i * 131 + seed * 17 + (i >> 7)) & 255))

function multipartBody (boundary: string, parts: Array<{ name: string, filename?: string, type?: string, data: Buffer | string }>): Buffer {
  const pieces: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"` + (part.filename === undefined ? '' : `; filename="${part.filename}"`)
    pieces.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n` + (part.type ? `Content-Type: ${part.type}\r\n` : '') + '\r\n'))
    pieces.push(Buffer.from(part.data), Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from(`--${boundary}--\r\n`))
  return Buffer.concat(pieces)
}

const BOUNDARY = '----bodykit-runtimes-7d3f'
const form = multipartBody(BOUNDARY, [
  { name: 'name', data: 'bodykit' },
  { name: 'tags[]', data: 'a' },
  { name: 'note', data: 'h\u00e9llo w\u00f6rld' },
  { name: 'f', filename: 'h.txt', type: 'text/plain', data: 'hello' },
  { name: 'photo', filename: 'photo.png', type: 'image/png', data: seeded(20_000, 3) }
])
const multipartType = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }
// Single-layer deflate inflates at most ~1,000 times: 60 MB of zeros is ~58 KB of gzip (under the 64kb wire limit, so the
// inflated count is what refuses it), and brotli packs 100 MB into a few dozen bytes.
const gzipBomb = zlib.gzipSync(Buffer.alloc(60 * MIB), { level: 9 })
const brotliBomb = zlib.brotliCompressSync(Buffer.alloc(100 * MIB), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
const octets = { 'content-type': 'application/octet-stream' }
const jsonType = { 'content-type': 'application/json' }

const CASES: Case[] = [
  { name: 'json', path: '/json', headers: jsonType, body: Buffer.from('{"user":{"name":"bodykit","tags":["a","b"]},"n":1.5}'), expect: { status: 200 } },
  { name: 'json, gzip', path: '/json', headers: { ...jsonType, 'content-encoding': 'gzip' }, body: zlib.gzipSync('{"packed":true}'), expect: { status: 200 } },
  { name: 'json over 1kb with its length declared', path: '/json', headers: jsonType, body: Buffer.from(JSON.stringify({ pad: 'x'.repeat(2000) })), expect: { status: 413, type: 'entity.too.large' } },
  { name: 'text, utf-8', path: '/text', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: Buffer.from('h\u00e9llo w\u00f6rld \u2713'), expect: { status: 200 } },
  { name: 'text, latin1, deflate', path: '/text', headers: { 'content-type': 'text/plain; charset=iso-8859-1', 'content-encoding': 'deflate' }, body: zlib.deflateSync(Buffer.from('caf\u00e9', 'latin1')), expect: { status: 200 } },
  { name: 'raw, 20 KB', path: '/raw', headers: octets, body: seeded(20_000, 1), expect: { status: 200 } },
  { name: 'raw, br', path: '/raw', headers: { ...octets, 'content-encoding': 'br' }, body: zlib.brotliCompressSync(seeded(30_000, 2)), expect: { status: 200 } },
  { name: 'urlencoded, extended', path: '/urlencoded', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: Buffer.from('a[b]=1&c=2&c=3&name=%C3%A9t%C3%A9&sp=a+b'), expect: { status: 200 } },
  { name: 'multipart with two files (memory storage)', path: '/multipart', headers: multipartType, body: form, expect: { status: 200 } },
  {
    name: 'multipart with a file over files.fileSizeLimit',
    path: '/multipart',
    headers: multipartType,
    body: multipartBody(BOUNDARY, [{ name: 'big', filename: 'big.bin', data: seeded(70_000, 4) }]),
    expect: { status: 413, type: 'multipart.file.too.large' }
  },
  { name: 'a declared 1 GiB Content-Length, only the headers sent', path: '/json', headers: jsonType, body: { declared: 1024 * MIB }, expect: { status: 413, type: 'entity.too.large' } },
  { name: 'an endless chunked body', path: '/raw', headers: { ...octets, 'transfer-encoding': 'chunked' }, body: 'endless', expect: { status: 413, type: 'entity.too.large' } },
  { name: `a gzip bomb (${gzipBomb.length} bytes inflating to 60 MiB)`, path: '/raw', headers: { ...octets, 'content-encoding': 'gzip' }, body: gzipBomb, expect: { status: 413, type: 'entity.too.large' } },
  { name: `a brotli bomb (${brotliBomb.length} bytes inflating to 100 MiB)`, path: '/raw', headers: { ...octets, 'content-encoding': 'br' }, body: brotliBomb, expect: { status: 413, type: 'entity.too.large' } },
  { name: 'json that does not parse', path: '/json', headers: jsonType, body: Buffer.from('{"a":'), expect: { status: 400, type: 'entity.parse.failed' } },
  // Node's parser refuses such a head before any handler runs; a runtime may too (then the answer is not JSON).
  { name: 'a Content-Length that is not a number', path: '/json', headers: { ...jsonType, 'content-length': '12abc' }, body: Buffer.from('{"a":1}'), expect: { status: 400, type: 'request.length.invalid' } },
  { name: 'json again: the server stayed up', path: '/json', headers: jsonType, body: Buffer.from('[1,2,3]'), expect: { status: 200 } }
]

function headOf (c: Case, port: number): string {
  const headers: Record<string, string> = { host: `127.0.0.1:${port}`, ...c.headers }
  if (Buffer.isBuffer(c.body)) headers['content-length'] ??= String(c.body.length)
  else if (c.body !== 'endless') headers['content-length'] = String(c.body.declared)
  return `POST ${c.path} HTTP/1.1\r\n` + Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n'
}

// ---------------------------------------------------------------------------------------------------------------
// The same requests on Node, in-process: the same handler and readers on a `new Request` with the same bytes and headers.

// eslint-disable-next-line @typescript-eslint/no-require-imports
const loadDist = (): Readers => require(DIST) as Readers

async function answerOnNode (c: Case): Promise<{ status: number, json: unknown }> {
  const handle = createHandler(loadDist(), 'Node ' + process.version)
  let body: Uint8Array | ReadableStream<Uint8Array>
  if (Buffer.isBuffer(c.body)) body = new Uint8Array(c.body)
  else if (c.body === 'endless') body = new ReadableStream({ pull (controller) { controller.enqueue(new Uint8Array(ENDLESS_CHUNK)) } })
  else body = new ReadableStream({ pull: () => new Promise(() => {}) })
  const length = Buffer.isBuffer(c.body) ? String(c.body.length) : c.body === 'endless' ? undefined : String(c.body.declared)
  const headers = { ...(length === undefined ? {} : { 'content-length': length }), ...c.headers }
  const response = await handle(new Request(`http://127.0.0.1${c.path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit))
  return { status: response.status, json: await response.json() }
}

// ---------------------------------------------------------------------------------------------------------------

/** What an answer says, for a failure message. */
const show = (answer: Answer): string => `${answer.status} ${answer.text.slice(0, 400)}`

for (const runtime of RUNTIMES) {
  describe(`${runtime.name}@${runtime.version}: a real server runs the promise readers on its Web Request`, () => {
    let skip: string | null = null
    let server: Server | null = null
    let folder = ''
    const notes: string[] = []
    let endlessAnswer: Answer | null = null

    before(async () => {
      assert.ok(fs.existsSync(DIST), 'dist/index.js is missing: run `npm run build` first (npm test does)')
      const installed = await installs.get(runtime.name)
      assert.ok(installed)
      if ('skip' in installed) {
        skip = installed.skip
        console.log(`# skipped: ${skip}`)
        return
      }
      notes.push(`${installed.version}: ${installed.cached ? 'cached' : 'installed'} in ${(installed.installMs / 1000).toFixed(1)} s`)
      folder = fs.mkdtempSync(path.join(os.tmpdir(), `bodykit-${runtime.name}-`))
      const started = Date.now()
      server = await startServer(runtime, installed.bin, folder)
      notes.push(`server up in ${((Date.now() - started) / 1000).toFixed(1)} s on port ${server.port}`)
    })

    after(() => {
      server?.child.stdin?.end()
      server?.child.kill('SIGKILL')
      if (folder !== '') fs.rmSync(folder, { recursive: true, force: true })
    })

    const ready = (t: TestContext): Server | null => {
      if (skip !== null) {
        t.diagnostic(skip)
        t.skip(skip)
        return null
      }
      for (const note of notes.splice(0)) t.diagnostic(note)
      return server
    }

    it('answers /runtime', async (t) => {
      const s = ready(t)
      if (s === null) return
      const answer = await exchange(s.port, `GET /runtime HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`, null)
      assert.equal(answer.status, 200, show(answer))
      t.diagnostic(`runtime: ${(answer.json as { value: string }).value}`)
    })

    for (const c of CASES) {
      const endless = c.body === 'endless'
      it(endless ? `${c.name}: 413, with at most limit + 16 MiB written before it` : c.name, { todo: endless ? KNOWN[runtime.name]?.beforeAnswer : undefined }, async (t) => {
        const s = ready(t)
        if (s === null) return
        const node = await answerOnNode(c)
        assert.equal(node.status, c.expect.status, 'on Node: ' + JSON.stringify(node.json))
        if (c.expect.type !== undefined) assert.equal((node.json as { type?: string }).type, c.expect.type)

        const body = Buffer.isBuffer(c.body) || c.body === 'endless' ? c.body : null
        let answer = await exchange(s.port, headOf(c, s.port), body)
        // workerd answers its 413 and closes at once, with the upload unread: the reset it sends may discard the answer
        // before the client reads it (RFC 9112 §9.6). A refusal all the same, within the bound; tried again for the answer.
        for (let attempt = 2; answer.reset !== undefined && attempt <= 5; attempt++) {
          t.diagnostic(`the connection broke (${answer.reset}) before the answer was read, after ${(answer.written / MIB).toFixed(1)} MiB written`)
          assert.ok(answer.written < 64 * 1024 + 16 * MIB, `${(answer.written / MIB).toFixed(1)} MiB written before the connection broke`)
          answer = await exchange(s.port, headOf(c, s.port), body)
        }
        if (endless) endlessAnswer = answer
        if (answer.reset !== undefined) {
          assert.equal(runtime.name, 'workerd', `the connection broke (${answer.reset}) before the answer was read`)
          t.diagnostic('every attempt: the connection broke before the answer was read (a refusal, compared with Node no further)')
          return
        }
        t.diagnostic(`answered in ${answer.ms} ms; ${answer.written} body bytes written before the answer`)
        assert.equal(answer.status, c.expect.status, show(answer) + '\n' + s.output().slice(-2000))
        const json = answer.json as { message?: string } | null
        if (c.expect.type === 'request.length.invalid' && json === null) {
          // The runtime's HTTP parser refused the head itself, as Node's does: bodykit never saw the request.
          t.diagnostic(`refused by ${runtime.name} itself: ${show(answer)}`)
        } else if (c.expect.type === 'entity.parse.failed' && runtime.name === 'bun') {
          // The message is the engine's SyntaxError's (JavaScriptCore's on Bun, V8's elsewhere): all else must agree.
          assert.deepEqual({ ...json, message: null }, { ...(node.json as object), message: null })
          t.diagnostic(`message on Bun: ${json?.message} | on Node: ${(node.json as { message: string }).message}`)
        } else {
          assert.deepEqual(json, node.json)
        }

        if (!Buffer.isBuffer(c.body) && !endless) {
          // Nothing was sent after the headers: the answer came from the declared length alone, at once.
          assert.equal(answer.written, 0)
          assert.ok(answer.ms < 3000, `answered after ${answer.ms} ms`)
        }
        // The limit is 64kb: what the client got to write is the limit plus the socket and runtime buffers in between.
        if (endless) assert.ok(answer.written < 64 * 1024 + 16 * MIB, `${(answer.written / MIB).toFixed(1)} MiB written before the answer`)
        if (c.body === gzipBomb || c.body === brotliBomb) assert.ok(answer.ms < 5000, `answered after ${answer.ms} ms`)
      })
      if (endless) {
        it(`${c.name}: after the 413 the client's writes stop (refused, or held by backpressure)`, { todo: KNOWN[runtime.name]?.afterAnswer }, (t) => {
          const s = ready(t)
          if (s === null) return
          assert.ok(endlessAnswer, 'the endless body was not sent')
          if (endlessAnswer.reset !== undefined) return t.diagnostic(`the server broke the connection (${endlessAnswer.reset})`)
          assert.ok(endlessAnswer.after, 'the endless body got no answer')
          const { written, closed } = endlessAnswer.after
          t.diagnostic(`${(written / MIB).toFixed(1)} MiB more written in the ${AFTER_ANSWER_MS} ms after the answer; the server ${closed ? 'closed the connection' : 'kept it open'}`)
          assert.ok(written < 16 * MIB, `${(written / MIB).toFixed(1)} MiB written in the ${AFTER_ANSWER_MS} ms after the answer`)
        })
      }
    }
  })
}
