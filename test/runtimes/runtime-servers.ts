// The runtimes the Web readers are tried on (Bun, Deno, workerd): each installed once from npm into a cache outside the
// repo, its server started over bodykit's built `dist/` and test/runtimes/web-routes.ts, and raw HTTP exchanged with it.
import assert from 'node:assert/strict'
import { execFile, spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { builtinModules } from 'node:module'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { after, before, type TestContext } from 'node:test'
import * as esbuild from 'esbuild'

const run = promisify(execFile)
const ROOT = path.resolve(__dirname, '../..')
export const DIST = path.join(ROOT, 'dist/index.js')
/** Runtimes are installed from the npm registry once, outside the repo, and reused. */
const CACHE = path.join(os.tmpdir(), 'bodykit-runtimes')
/** A server stops by itself after this (unless told otherwise), whatever happens to the test. */
const SERVER_LIFETIME_MS = 120_000

export interface Runtime { name: 'bun' | 'deno' | 'workerd', version: string }
export const RUNTIMES: readonly Runtime[] = [
  { name: 'bun', version: '1.4.5' },
  { name: 'deno', version: '2.9.6' },
  { name: 'workerd', version: '1.20261117.1' }
]
// workerd's Node modules (node:stream, node:zlib, node:fs, node:querystring, …) are all there at this date.
const WORKERD_COMPATIBILITY_DATE = '2026-08-01'

interface Installed { bin: string, version: string, installMs: number, cached: boolean }

/** A runtime's folder in the cache, and how long it took to find or install. */
export interface CachedInstall { dir: string, version: string, ms: number, cached: boolean }
/** Why a runtime could not be installed: its tests are skipped with it (a machine without the npm registry). */
export interface NotInstalled { skip: string }
type CacheEntry = CachedInstall | NotInstalled
/** One install per runtime and process, whoever asks first (a web-bundle test file asks twice: its harness and its servers). */
const cacheEntries = new Map<string, Promise<CacheEntry>>()

/**
 * Installs `name@version` from npm into the cache, once: `versionIn` checks an installed folder and says its version
 * (it throws while there is none). Installed beside the cache and moved in whole: two test files (run side by side by
 * `npm test`) may install at once. Shared with test/runtimes/web-bundle/harness.ts (edge-runtime, and the same three).
 */
export function installInCache (name: string, version: string, versionIn: (dir: string) => Promise<string>): Promise<CacheEntry> {
  const key = `${name}@${version}`
  let entry = cacheEntries.get(key)
  if (entry === undefined) {
    entry = installOnce(name, version, versionIn)
    cacheEntries.set(key, entry)
  }
  return entry
}

async function installOnce (name: string, version: string, versionIn: (dir: string) => Promise<string>): Promise<CacheEntry> {
  const dir = path.join(CACHE, `${name}@${version}`)
  const started = Date.now()
  try {
    return { dir, version: await versionIn(dir), ms: Date.now() - started, cached: true }
  } catch {
    // Not in the cache yet (or broken): installed below.
  }
  const staging = `${dir}.${process.pid}`
  try {
    fs.mkdirSync(staging, { recursive: true })
    await run('npm', ['install', '--prefix', staging, '--no-save', '--no-audit', '--no-fund', `${name}@${version}`], { timeout: 300_000 })
    try {
      await versionIn(dir)
    } catch {
      // Still not there (or broken), rather than put there by the other file meanwhile: this install is moved in whole.
      // A broken folder is moved aside first (never removed in place: the other file may be running from a good one).
      if (fs.existsSync(dir)) {
        const aside = `${dir}.broken.${process.pid}`
        fs.renameSync(dir, aside)
        fs.rmSync(aside, { recursive: true, force: true })
      }
      try {
        fs.renameSync(staging, dir)
      } catch (err) {
        // The other file's install got there between the check and the move: it is kept, and this one dropped.
        if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err
      }
    }
    return { dir, version: await versionIn(dir), ms: Date.now() - started, cached: false }
  } catch (err) {
    const detail = String((err as { stderr?: unknown }).stderr ?? '').trim().split('\n').slice(0, 2).join(' | ') || String(err)
    return { skip: `${name}@${version} could not be installed from the npm registry into ${dir}: ${detail}` }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true })
  }
}

/** The runtime's binary from its npm package (the binary ships in an optional platform package: no postinstall). */
async function install (runtime: Runtime): Promise<Installed | NotInstalled> {
  const binIn = (dir: string): string => path.join(dir, 'node_modules/.bin', runtime.name)
  const installed = await installInCache(runtime.name, runtime.version,
    async (dir) => (await run(binIn(dir), ['--version'], { timeout: 30_000 })).stdout.trim().split('\n')[0])
  if ('skip' in installed) return installed
  return { bin: binIn(installed.dir), version: installed.version, installMs: installed.ms, cached: installed.cached }
}


export interface Server { port: number, child: ChildProcess, output: () => string }

export function spawnServer (bin: string, args: string[], env: NodeJS.ProcessEnv, cwd: string, lifetimeMs: number): { child: ChildProcess, output: () => string } {
  const child = spawn(bin, args, { cwd, env: { ...process.env, ...env, BODYKIT_SERVER_LIFETIME_MS: String(lifetimeMs) }, stdio: ['pipe', 'pipe', 'pipe'], timeout: lifetimeMs + 5000 })
  let log = ''
  child.stdout?.on('data', (chunk: Buffer) => { log += chunk.toString() })
  child.stderr?.on('data', (chunk: Buffer) => { log += chunk.toString() })
  return { child, output: () => log }
}

/** Bun and Deno print `{"port":N}` once listening. */
export function portFromOutput (child: ChildProcess, output: () => string): Promise<number> {
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

export async function freePort (): Promise<number> {
  const server = net.createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  const { port } = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** workerd says nothing when it listens: asked until it answers (`anyStatus`: any answer, for a worker with no `/runtime`). */
export async function waitForAnswer (port: number, child: ChildProcess, output: () => string, anyStatus = false): Promise<void> {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`workerd exited (${child.exitCode}):\n` + output())
    try {
      const response = await fetch(`http://127.0.0.1:${port}/runtime`)
      await response.arrayBuffer()
      if (response.ok || anyStatus) return
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

async function startServer (runtime: Runtime, bin: string, folder: string, lifetimeMs: number): Promise<Server> {
  const here = path.join(ROOT, 'test/runtimes')
  if (runtime.name === 'bun') {
    const { child, output } = spawnServer(bin, ['run', path.join(here, 'bun-server.mjs')], {}, ROOT, lifetimeMs)
    return { port: await portFromOutput(child, output), child, output }
  }
  if (runtime.name === 'deno') {
    const args = ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', '--allow-sys', path.join(here, 'deno-server.mjs')]
    const { child, output } = spawnServer(bin, args, { DENO_DIR: path.join(folder, 'deno-dir'), NO_COLOR: '1' }, ROOT, lifetimeMs)
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
  const { child, output } = spawnServer(bin, ['serve', '--verbose', path.join(folder, 'config.capnp')], {}, folder, lifetimeMs)
  await waitForAnswer(port, child, output)
  return { port, child, output }
}

/**
 * The runtime's server for the tests of the current `describe`: installed and started before them, stopped after.
 * `ready(t)` gives the server, or skips the test with the reason when the runtime could not be installed.
 */
export function serveRuntime (runtime: Runtime, lifetimeMs = SERVER_LIFETIME_MS): { ready: (t: TestContext) => Server | null } {
  let skip: string | null = null
  let server: Server | null = null
  let folder = ''
  const notes: string[] = []
  // Started when the file is loaded, so that a file's runtimes install at once while the first one's cases run.
  const installing = install(runtime)

  before(async () => {
    assert.ok(fs.existsSync(DIST), 'dist/index.js is missing: run `npm run build` first (npm test does)')
    const installed = await installing
    if ('skip' in installed) {
      skip = installed.skip
      console.log(`# skipped: ${skip}`)
      return
    }
    notes.push(`${installed.version}: ${installed.cached ? 'cached' : 'installed'} in ${(installed.installMs / 1000).toFixed(1)} s`)
    folder = fs.mkdtempSync(path.join(os.tmpdir(), `bodykit-${runtime.name}-`))
    const started = Date.now()
    server = await startServer(runtime, installed.bin, folder, lifetimeMs)
    notes.push(`server up in ${((Date.now() - started) / 1000).toFixed(1)} s on port ${server.port}`)
  })

  after(() => {
    server?.child.stdin?.end()
    server?.child.kill('SIGKILL')
    if (folder !== '') fs.rmSync(folder, { recursive: true, force: true })
  })

  return {
    ready (t) {
      if (skip !== null) {
        t.diagnostic(skip)
        t.skip(skip)
        return null
      }
      for (const note of notes.splice(0)) t.diagnostic(note)
      return server
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The requests, as bytes on the wire.

export interface Answer {
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
export const AFTER_ANSWER_MS = 500

/** One exchange over a raw socket: the head, then a body (whole, or chunked without end), until the answer is complete. */
export function exchange (port: number, head: string, body: Buffer | 'endless' | null, timeoutMs = 15_000): Promise<Answer> {
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

export const ENDLESS_CHUNK = Buffer.alloc(16 * 1024, 'a')
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
