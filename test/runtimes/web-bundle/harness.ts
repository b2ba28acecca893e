// The Node side of the Web bundle's runtime tests: installs the runtimes into the cache test/runtimes uses, bundles the
// Web build (scripts/web-bundle.mjs) with the runtime's entry, starts the servers, and holds the cases, the corpus and the
// comparison with the Node build's readers (src/readers.ts) on the same requests, with the differences that are allowed.
import assert from 'node:assert/strict'
import { execFile, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { isDeepStrictEqual, promisify } from 'node:util'
import zlib from 'node:zlib'
import { after, before, type TestContext } from 'node:test'
import * as esbuild from 'esbuild'
import { bundleWeb } from '../../../scripts/web-bundle.mjs'
import * as nodeBuild from '../../../src/readers'
import { sourceOf, splitAt } from '../../fuzz/targets/harness'
import { exchange, freePort, installInCache, portFromOutput, spawnServer, waitForAnswer, type CachedInstall, type NotInstalled } from '../runtime-servers'
import * as multipartTarget from '../../fuzz/targets/multipart'
import * as webTarget from '../../fuzz/targets/web'
import { drive, type Driven, type Kind, type Outcome, type Readers, type Spec } from './route'

const run = promisify(execFile)
const ROOT = path.resolve(__dirname, '../../..')
const HERE = __dirname
const SERVER_LIFETIME_MS = 120_000
export const MIB = 1024 * 1024

export type RuntimeName = 'edge-runtime' | 'workerd' | 'deno' | 'bun'
export const VERSIONS: Record<RuntimeName, string> = { 'edge-runtime': '4.0.1', workerd: '1.20261117.1', deno: '2.9.6', bun: '1.4.5' }

// ---------------------------------------------------------------------------------------------------------------
// Installing, with test/runtimes/runtime-servers.ts's installer: once from npm into the same cache.

/** Checks an installed folder and says its version (the binary's, or the package's for edge-runtime, which is a library). */
async function versionIn (name: RuntimeName, dir: string): Promise<string> {
  if (name === 'edge-runtime') return (JSON.parse(fs.readFileSync(path.join(dir, 'node_modules/edge-runtime/package.json'), 'utf8')) as { version: string }).version
  return (await run(path.join(dir, 'node_modules/.bin', name), ['--version'], { timeout: 30_000 })).stdout.trim().split('\n')[0]
}

export function install (name: RuntimeName): Promise<CachedInstall | NotInstalled> {
  return installInCache(name, VERSIONS[name], (dir) => versionIn(name, dir))
}

// ---------------------------------------------------------------------------------------------------------------
// Bundling: the Web build as a browser app gets it, then each runtime's entry around it.

/** The real Web bundle, written once per folder as `web.mjs`; fails if it still imports a Node built-in. */
export async function writeBundle (folder: string): Promise<string> {
  const { code, builtins } = await bundleWeb('src/web.ts')
  assert.deepEqual(builtins, [], 'the Web bundle imports Node built-ins')
  const file = path.join(folder, 'web.mjs')
  fs.writeFileSync(file, code)
  return file
}

/**
 * Bundles a runtime entry (or a recipe) into `folder`: src/web is the Web bundle (`web.mjs`), imported as a module
 * beside the output (`external`) or inlined (edge-runtime evaluates one script); no Node built-in is allowed in.
 */
export async function bundleEntry (folder: string, entry: string, outName: string, how: { format: 'esm' | 'iife', inlineBundle: boolean }): Promise<string> {
  const bundleFile = path.join(folder, 'web.mjs')
  const toBundle: esbuild.Plugin = {
    name: 'web-bundle',
    setup (build) {
      build.onResolve({ filter: /\/src\/web(\.ts)?$/ }, () => how.inlineBundle ? { path: bundleFile } : { path: './web.mjs', external: true })
    }
  }
  const outfile = path.join(folder, outName)
  await esbuild.build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: how.format,
    platform: 'browser',
    target: 'es2022',
    conditions: ['workerd', 'worker', 'browser'],
    plugins: [toBundle],
    logLevel: 'error'
  })
  return outfile
}

// ---------------------------------------------------------------------------------------------------------------
// The runtimes: edge-runtime in process, the others as servers over HTTP.

/** What a test gets of a runtime: drive a spec in it, and (a server) its port for requests over the wire. */
export interface Target {
  name: RuntimeName
  version: string
  /** bodykit's Content-Encodings this runtime's DecompressionStream reads. */
  formats: string[]
  drive: (spec: Spec) => Promise<Driven>
  server: { port: number, child: ChildProcess, output: () => string } | null
  folder: string
}

interface EdgeRuntimeModule { EdgeRuntime: new (options?: { initialCode?: string }) => { evaluate: <T>(code: string) => T } }

async function startEdgeRuntime (installed: CachedInstall, folder: string): Promise<Target> {
  await writeBundle(folder)
  const script = await bundleEntry(folder, path.join(HERE, 'edge-entry.ts'), 'edge.js', { format: 'iife', inlineBundle: true })
  const { EdgeRuntime } = createRequire(path.join(installed.dir, 'node_modules/'))('edge-runtime') as EdgeRuntimeModule
  const runtime = new EdgeRuntime({ initialCode: fs.readFileSync(script, 'utf8') })
  return {
    name: 'edge-runtime',
    version: installed.version,
    formats: JSON.parse(runtime.evaluate<string>('__bodykitDriver.formats()')) as string[],
    // Strings in and out: the runtime is another realm.
    drive: async (spec) => JSON.parse(await runtime.evaluate<Promise<string>>(`__bodykitDriver.run(${JSON.stringify(spec)})`)) as Driven,
    server: null,
    folder
  }
}

/**
 * workerd's config: one worker of ES modules (the entry and what it imports beside it), a compatibility date and no
 * compatibility flag, so no `nodejs_compat`: a `node:` import would fail to load.
 */
export function workerdConfig (port: number, modules: readonly string[]): string {
  return [
    'using Workerd = import "/workerd/workerd.capnp";',
    'const config :Workerd.Config = (',
    '  services = [ (name = "main", worker = .worker) ],',
    `  sockets = [ (name = "http", address = "127.0.0.1:${port}", http = (), service = "main") ],`,
    ');',
    'const worker :Workerd.Worker = (',
    `  modules = [ ${modules.map((name) => `(name = "${name}", esModule = embed "${name}")`).join(', ')} ],`,
    '  compatibilityDate = "2026-08-01",',
    ');',
    ''
  ].join('\n')
}

/** Starts workerd on a config in `folder` whose modules are already there; answers once it serves `/runtime`. */
export async function startWorkerd (installed: { dir: string }, folder: string, modules: readonly string[]): Promise<{ port: number, child: ChildProcess, output: () => string }> {
  const port = await freePort()
  fs.writeFileSync(path.join(folder, 'config.capnp'), workerdConfig(port, modules))
  const { child, output } = spawnServer(path.join(installed.dir, 'node_modules/.bin/workerd'), ['serve', '--verbose', path.join(folder, 'config.capnp')], {}, folder, SERVER_LIFETIME_MS)
  // A server that never answered is stopped here: no test holds it to stop it later.
  await waitForAnswer(port, child, output, true).catch((err: unknown) => { child.kill('SIGKILL'); throw err })
  return { port, child, output }
}

async function startServer (name: Exclude<RuntimeName, 'edge-runtime'>, installed: CachedInstall, folder: string): Promise<Target> {
  await writeBundle(folder)
  let server: Target['server']
  if (name === 'workerd') {
    await bundleEntry(folder, path.join(HERE, 'worker.ts'), 'worker.js', { format: 'esm', inlineBundle: false })
    server = await startWorkerd(installed, folder, ['worker.js', 'web.mjs'])
  } else {
    const entry = await bundleEntry(folder, path.join(HERE, 'serve.ts'), 'serve.mjs', { format: 'esm', inlineBundle: false })
    const bin = path.join(installed.dir, 'node_modules/.bin', name)
    const args = name === 'bun' ? ['run', entry] : ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', entry]
    const { child, output } = spawnServer(bin, args, { DENO_DIR: path.join(folder, 'deno-dir'), NO_COLOR: '1' }, folder, SERVER_LIFETIME_MS)
    server = { port: await portFromOutput(child, output).catch((err: unknown) => { child.kill('SIGKILL'); throw err }), child, output }
  }
  const base = `http://127.0.0.1:${server.port}`
  const { formats } = await (await fetch(`${base}/runtime`)).json() as { formats: string[] }
  return {
    name,
    version: installed.version,
    formats,
    drive: async (spec) => await (await fetch(`${base}/drive`, { method: 'POST', body: JSON.stringify(spec) })).json() as Driven,
    server,
    folder
  }
}

/**
 * The runtime for the tests of the current `describe`: installed, bundled and started before them, stopped after.
 * `ready(t)` gives it, or skips the test with the reason when the runtime could not be installed.
 */
export function useRuntime (name: RuntimeName): { ready: (t: TestContext) => Target | null } {
  let skip: string | null = null
  let target: Target | null = null
  let folder = ''
  const notes: string[] = []
  before(async () => {
    const installed = await install(name)
    if ('skip' in installed) {
      skip = installed.skip
      console.log(`# skipped: ${skip}`)
      return
    }
    notes.push(`${name} ${installed.version}: ${installed.cached ? 'cached' : 'installed'} in ${(installed.ms / 1000).toFixed(1)} s`)
    folder = fs.mkdtempSync(path.join(os.tmpdir(), `bodykit-web-${name}-`))
    const started = Date.now()
    target = name === 'edge-runtime' ? await startEdgeRuntime(installed, folder) : await startServer(name, installed, folder)
    notes.push(`up in ${((Date.now() - started) / 1000).toFixed(1)} s${target.server ? ` on port ${target.server.port}` : ''}; DecompressionStream formats: ${target.formats.join(', ') || 'none'}`)
  })
  after(() => {
    target?.server?.child.stdin?.end()
    target?.server?.child.kill('SIGKILL')
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
      return target
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Requests: a spec (driven in the runtime, or sent over the wire) and the Node build's answer to the same.

const NODE_READERS = nodeBuild as unknown as Readers

/** The Node build's readers (src/readers.ts) on a Node Request with the spec's headers and pieces. */
export function driveOnNode (spec: Spec): Promise<Driven> {
  return drive(NODE_READERS, spec)
}

const b64 = (bytes: Buffer): string => bytes.toString('base64')

/** A spec of bytes: the headers plus the framing (its exact length, or chunked in the pieces given). */
export function specOf (kind: Kind, headers: Record<string, string>, options: unknown, pieces: readonly Buffer[], framing: 'length' | 'chunked'): Spec {
  const length = pieces.reduce((sum, piece) => sum + piece.length, 0)
  const framed = framing === 'length' ? { ...headers, 'content-length': String(length) } : { ...headers, 'transfer-encoding': 'chunked' }
  return { kind, headers: framed, body: { chunks: pieces.filter((piece) => piece.length > 0).map(b64) }, options }
}

/** A spec as bytes on the wire, to `/read/<kind>` with its options in a header (chunked framing encoded). */
export function wireOf (spec: Spec, port: number): Buffer {
  const chunks = spec.body !== null && 'chunks' in spec.body ? spec.body.chunks.map((chunk) => Buffer.from(chunk, 'base64')) : []
  const headers = { host: `127.0.0.1:${port}`, ...spec.headers, 'x-bodykit-options': JSON.stringify(spec.options) }
  const head = `POST /read/${spec.kind} HTTP/1.1\r\n` + Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('') + 'connection: close\r\n\r\n'
  const body = spec.headers['transfer-encoding'] === 'chunked'
    ? Buffer.concat([...chunks.flatMap((chunk) => [Buffer.from(chunk.length.toString(16) + '\r\n'), chunk, Buffer.from('\r\n')]), Buffer.from('0\r\n\r\n')])
    : Buffer.concat(chunks)
  return Buffer.concat([Buffer.from(head, 'latin1'), body])
}

/** Sends a spec over HTTP to `/read/<kind>` (raw bytes: header values as the corpus has them) and reads the route's answer. */
export async function sendOverWire (spec: Spec, port: number): Promise<Outcome> {
  const answer = await exchange(port, '', wireOf(spec, port))
  assert.ok(answer.json !== null && typeof answer.json === 'object', `not the route's answer: ${answer.status} ${answer.text.slice(0, 300)}`)
  return { status: answer.status as number, body: answer.json as Outcome['body'] }
}

// ---------------------------------------------------------------------------------------------------------------
// Comparing: the same value or error, but for differences that are documented and counted.

export type Allowance = 'engine message' | 'format absent here' | 'zlib prefix past the limit' | 'received count' | 'decompressor message' | 'utf-16 odd byte'

/** An outcome as compared: without the stack of an error that is not bodykit's (its frames are the runtime's). */
export function comparable (outcome: Outcome): Outcome {
  if (!('error' in outcome.body)) return outcome
  const { stack: _stack, ...error } = outcome.body.error
  return { status: outcome.status, body: { error } }
}

const ABSENT = 'x-bodykit-absent'

/**
 * The answer the Node build gives when it cannot inflate a Content-Encoding either: the same request with an encoding
 * no build knows, its name put back. That is what a runtime without the format answers (415 `encoding.unsupported`,
 * or whatever comes before the encoding is looked at: no body, another type, a charset).
 */
async function nodeWithoutFormat (spec: Spec, encoding: string): Promise<Outcome> {
  const headers = { ...spec.headers, 'content-encoding': ABSENT }
  const { outcome } = await driveOnNode({ ...spec, headers })
  return JSON.parse(JSON.stringify(outcome).replaceAll(ABSENT, encoding)) as Outcome
}

const errorOf = (outcome: Outcome): Record<string, unknown> | null => 'error' in outcome.body ? outcome.body.error : null

/**
 * Asserts the runtime's outcome is the Node build's for the same spec, but for an allowed difference; resolves with the
 * difference allowed, or null. The allowed ones:
 * - 'format absent here': the runtime's DecompressionStream lacks the body's Content-Encoding (edge-runtime has none,
 *   workerd gzip and deflate only): the answer is the Node build's for an encoding it cannot read either;
 * - 'engine message': a JSON SyntaxError's message is the engine's (JavaScriptCore on Bun; the newer V8 of Deno and
 *   workerd adds ` (line 1 column 7)`);
 * - 'zlib prefix past the limit': a damaged compressed body whose bytes before the damage inflate past the limit is 413
 *   in the Node build (it works out what zlib dropped with its error), the damage's 400 in the Web build (documented);
 * - 'received count': the `received` of a 413 is where the piece that crossed the limit ended, so it follows how the
 *   pieces were cut: by the runtime's DecompressionStream after inflation (Node's zlib gives 16 KiB pieces, Deno's and
 *   Bun's others), or by the runtime's HTTP server for a body that came over the wire (it groups the chunks sent as it
 *   reads them); still over the limit, and nothing else differs;
 * - 'decompressor message': a compressed body the decompressor refuses is 400 without a type, with the decompressor's
 *   own error (zlib's message, errno and code on Node; Deno's, Bun's or workerd's words elsewhere);
 * - 'utf-16 odd byte': a utf-16 text whose last byte is alone ends with U+FFFD from TextDecoder, where iconv-lite
 *   drops the byte (documented).
 */
export async function assertSame (target: Target, spec: Spec, fromRuntime: Outcome, fromNode: Outcome, why: string, via: 'driven' | 'wire' = 'driven'): Promise<Allowance | null> {
  const encoding = (spec.headers['content-encoding'] ?? 'identity').toLowerCase()
  let expected = comparable(fromNode)
  let allowance: Allowance | null = null
  if (['gzip', 'deflate', 'br'].includes(encoding) && !target.formats.includes(encoding)) {
    expected = comparable(await nodeWithoutFormat(spec, encoding))
    if (!isDeepStrictEqual(expected, comparable(fromNode))) allowance = 'format absent here'
  }
  const actual = comparable(fromRuntime)
  const [a, e] = [errorOf(actual), errorOf(expected)]
  if (a !== null && e !== null && a.type === 'entity.parse.failed' && e.type === 'entity.parse.failed' && a.message !== e.message) {
    const engine = (message: unknown): unknown => target.name === 'bun' ? null : String(message).replace(/ \(line \d+ column \d+\)$/, '')
    const strip = (error: Record<string, unknown>): Record<string, unknown> => ({ ...error, message: engine(error.message) })
    assert.deepEqual({ ...actual, body: { error: strip(a) } }, { ...expected, body: { error: strip(e) } }, why)
    return 'engine message'
  }
  if (a !== null && e !== null && a.type === 'entity.too.large' && e.type === 'entity.too.large' && a.received !== e.received && (encoding !== 'identity' || via === 'wire')) {
    assert.ok(Number(a.received) > Number(a.limit), why)
    assert.deepEqual({ ...actual, body: { error: { ...a, received: null } } }, { ...expected, body: { error: { ...e, received: null } } }, why)
    return 'received count'
  }
  if (a !== null && e !== null && encoding !== 'identity') {
    const typeless = (error: Record<string, unknown>): unknown => error.type === undefined ? [error.status, error.statusCode, error.expose] : null
    if (typeless(a) !== null && isDeepStrictEqual(typeless(a), typeless(e)) && a.status === 400 && !isDeepStrictEqual(actual, expected)) return 'decompressor message'
  }
  if (a !== null && e !== null && e.type === 'entity.too.large' && a.status === 400 && a.type === undefined && encoding !== 'identity' && !isDeepStrictEqual(actual, expected)) {
    return 'zlib prefix past the limit'
  }
  // utf-16 with an odd last byte: WHATWG's TextDecoder ends the text with U+FFFD, iconv-lite drops the byte (docs/web.md).
  if (/charset=utf-?16/i.test(spec.headers['content-type'] ?? '') && !isDeepStrictEqual(actual, expected)) {
    const text = (outcome: unknown): unknown => (outcome as { body?: { value?: unknown } }).body?.value
    if (typeof text(actual) === 'string' && text(actual) === String(text(expected)) + '\ufffd') return 'utf-16 odd byte'
  }
  assert.deepEqual(actual, expected, why)
  return allowance
}

// ---------------------------------------------------------------------------------------------------------------
// The cases: plain requests of each reader, and the hostile ones.

const seeded = (length: number, seed: number): Buffer => Buffer.from(Array.from({ length }, (_, i) => (i * 131 + seed * 17 + (i >> 7)) & 255))
const BOUNDARY = '----bodykit-web-5b1e'
function multipartBody (parts: Array<{ name: string, filename?: string, type?: string, data: Buffer | string }>): Buffer {
  const pieces: Buffer[] = []
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"` + (part.filename === undefined ? '' : `; filename="${part.filename}"`)
    pieces.push(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: ${disposition}\r\n` + (part.type ? `Content-Type: ${part.type}\r\n` : '') + '\r\n'), Buffer.from(part.data), Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  return Buffer.concat(pieces)
}
const form = multipartBody([
  { name: 'name', data: 'bodykit' },
  { name: 'tags[]', data: 'a' },
  { name: 'note', data: 'h\u00e9llo w\u00f6rld' },
  { name: 'f', filename: 'h.txt', type: 'text/plain', data: 'hello' },
  { name: 'photo', filename: 'photo.png', type: 'image/png', data: seeded(20_000, 3) }
])
const json = { 'content-type': 'application/json' }
const octets = { 'content-type': 'application/octet-stream' }
const multipartType = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` }
const MULTIPART_OPTIONS = { limit: '256kb', files: { storage: 'memory', fileSizeLimit: '64kb', fileLimit: 2 } }
// 60 MiB of zeros as ~58 KB of gzip (under the 64kb wire limit, so the inflated count is what refuses it); brotli packs
// 100 MiB into a few dozen bytes.
const gzipBomb = zlib.gzipSync(Buffer.alloc(60 * MIB), { level: 9 })
const brotliBomb = zlib.brotliCompressSync(Buffer.alloc(100 * MIB), { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } })
export const ENDLESS_PIECE = 16 * 1024

export interface Case {
  name: string
  spec: Spec
  /** The status and type the Node build answers (checked, so that a case cannot drift into testing nothing). */
  node: { status: number, type?: string }
  /**
   * A hostile case: the producer must have given at most this many bytes, and seen its body cancelled unless it had
   * given all of it (a bomb's few wire bytes may all be read before the inflated 413).
   */
  hostile?: { atMost: number }
}

const whole = (kind: Kind, headers: Record<string, string>, options: unknown, body: Buffer, pieces = 1): Spec =>
  specOf(kind, headers, options, pieces === 1 ? [body] : splitAt(body, Array.from({ length: pieces - 1 }, (_, i) => Math.floor(body.length * (i + 1) / pieces))), 'length')

export const CASES: Case[] = [
  { name: 'json', spec: whole('json', json, { limit: '1kb' }, Buffer.from('{"user":{"name":"bodykit","tags":["a","b"]},"n":1.5}'), 3), node: { status: 200 } },
  { name: 'json, gzip', spec: whole('json', { ...json, 'content-encoding': 'gzip' }, { limit: '1kb' }, zlib.gzipSync('{"packed":true}')), node: { status: 200 } },
  { name: 'json, deflate, chunked', spec: specOf('json', { ...json, 'content-encoding': 'deflate' }, {}, [zlib.deflateSync('[1,2,3]')], 'chunked'), node: { status: 200 } },
  { name: 'json over 1kb with its length declared', spec: whole('json', json, { limit: '1kb' }, Buffer.from(JSON.stringify({ pad: 'x'.repeat(2000) }))), node: { status: 413, type: 'entity.too.large' } },
  { name: 'json over 1kb, chunked', spec: specOf('json', json, { limit: '1kb' }, [Buffer.from(JSON.stringify({ pad: 'x'.repeat(2000) }))], 'chunked'), node: { status: 413, type: 'entity.too.large' } },
  { name: 'json that does not parse', spec: whole('json', json, {}, Buffer.from('{"a":')), node: { status: 400, type: 'entity.parse.failed' } },
  { name: 'json, strict, a bare string', spec: whole('json', json, {}, Buffer.from('"x"')), node: { status: 400, type: 'entity.parse.failed' } },
  { name: 'json with __proto__ (kept as a plain key)', spec: whole('json', json, {}, Buffer.from('{"__proto__":{"x":1}}')), node: { status: 200 } },
  { name: 'json, charset utf-16 (bytes that are not UTF-16 JSON)', spec: whole('json', { 'content-type': 'application/json; charset=utf-16' }, {}, Buffer.from('{}')), node: { status: 400, type: 'entity.parse.failed' } },
  { name: 'json, charset latin1 (refused by the JSON parser)', spec: whole('json', { 'content-type': 'application/json; charset=latin1' }, {}, Buffer.from('{}')), node: { status: 415, type: 'charset.unsupported' } },
  { name: 'json, another type: undefined', spec: whole('json', { 'content-type': 'text/plain' }, {}, Buffer.from('{}')), node: { status: 200 } },
  { name: 'text, utf-8 split inside a character', spec: whole('text', { 'content-type': 'text/plain; charset=utf-8' }, {}, Buffer.from('h\u00e9llo w\u00f6rld \u2713'), 4), node: { status: 200 } },
  { name: 'text, latin1, deflate', spec: whole('text', { 'content-type': 'text/plain; charset=iso-8859-1', 'content-encoding': 'deflate' }, {}, zlib.deflateSync(Buffer.from('caf\u00e9', 'latin1'))), node: { status: 200 } },
  { name: 'text, windows-1252', spec: whole('text', { 'content-type': 'text/plain; charset=windows-1252' }, {}, Buffer.from([0x80, 0x41, 0xe9])), node: { status: 200 } },
  { name: 'text, shift_jis', spec: whole('text', { 'content-type': 'text/plain; charset=shift_jis' }, {}, Buffer.from([0x82, 0xa0, 0x41])), node: { status: 200 } },
  { name: 'text, an unknown charset', spec: whole('text', { 'content-type': 'text/plain; charset=x-bogus' }, {}, Buffer.from('a')), node: { status: 415, type: 'charset.unsupported' } },
  { name: 'raw, 20 KB in pieces', spec: whole('raw', octets, { limit: '64kb' }, seeded(20_000, 1), 5), node: { status: 200 } },
  { name: 'raw, br', spec: whole('raw', { ...octets, 'content-encoding': 'br' }, { limit: '64kb' }, zlib.brotliCompressSync(seeded(30_000, 2))), node: { status: 200 } },
  { name: 'raw, an unknown encoding', spec: whole('raw', { ...octets, 'content-encoding': 'compress' }, {}, Buffer.from('x')), node: { status: 415, type: 'encoding.unsupported' } },
  { name: 'raw, a damaged gzip body', spec: whole('raw', { ...octets, 'content-encoding': 'gzip' }, {}, Buffer.concat([zlib.gzipSync('hello').subarray(0, 12), Buffer.from('garbage')])), node: { status: 400 } },
  { name: 'raw, a wrong Content-Length', spec: { ...whole('raw', octets, {}, Buffer.from('abc')), headers: { ...octets, 'content-length': '5' } }, node: { status: 400, type: 'request.size.invalid' } },
  { name: 'urlencoded, extended', spec: whole('urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, { extended: true }, Buffer.from('a[b]=1&c=2&c=3&name=%C3%A9t%C3%A9&sp=a+b')), node: { status: 200 } },
  { name: 'urlencoded, simple', spec: whole('urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, { extended: false }, Buffer.from('a[b]=1&c=2&c=3')), node: { status: 200 } },
  { name: 'urlencoded, too many parameters', spec: whole('urlencoded', { 'content-type': 'application/x-www-form-urlencoded' }, { parameterLimit: 2 }, Buffer.from('a=1&b=2&c=3')), node: { status: 413, type: 'parameters.too.many' } },
  { name: 'multipart with two files (memory)', spec: whole('multipart', multipartType, MULTIPART_OPTIONS, form, 7), node: { status: 200 } },
  { name: 'multipart, a file over fileSizeLimit', spec: whole('multipart', multipartType, MULTIPART_OPTIONS, multipartBody([{ name: 'big', filename: 'big.bin', data: seeded(70_000, 4) }])), node: { status: 413, type: 'multipart.file.too.large' } },
  { name: 'multipart, cut short', spec: whole('multipart', multipartType, MULTIPART_OPTIONS, form.subarray(0, 300)), node: { status: 400, type: 'multipart.unexpected.end' } },
  { name: 'multipart, no boundary', spec: whole('multipart', { 'content-type': 'multipart/form-data' }, MULTIPART_OPTIONS, form), node: { status: 400, type: 'multipart.boundary.invalid' } },
  // Hostile: each refused before the body is all read, and the body cancelled.
  {
    name: 'a declared 1 GiB Content-Length (the body never comes)',
    spec: { kind: 'json', headers: { ...json, 'content-length': String(1024 * MIB) }, body: { never: true }, options: {} },
    node: { status: 413, type: 'entity.too.large' },
    hostile: { atMost: 0 }
  },
  {
    name: 'an endless chunked body',
    spec: { kind: 'raw', headers: { ...octets, 'transfer-encoding': 'chunked' }, body: { chunks: [], endless: ENDLESS_PIECE }, options: { limit: '64kb' } },
    node: { status: 413, type: 'entity.too.large' },
    hostile: { atMost: 64 * 1024 + 2 * ENDLESS_PIECE }
  },
  {
    name: `a gzip bomb (${gzipBomb.length} bytes inflating to 60 MiB)`,
    spec: specOf('raw', { ...octets, 'content-encoding': 'gzip' }, { limit: '64kb' }, splitAt(gzipBomb, [16384, 32768, 49152]), 'length'),
    node: { status: 413, type: 'entity.too.large' },
    hostile: { atMost: gzipBomb.length }
  },
  {
    name: `a brotli bomb (${brotliBomb.length} bytes inflating to 100 MiB)`,
    spec: specOf('raw', { ...octets, 'content-encoding': 'br' }, { limit: '64kb' }, [brotliBomb], 'length'),
    node: { status: 413, type: 'entity.too.large' },
    hostile: { atMost: brotliBomb.length }
  },
  {
    name: 'an endless multipart file (fileSizeLimit 64kb)',
    spec: { kind: 'multipart', headers: { ...multipartType, 'transfer-encoding': 'chunked' }, body: { chunks: [b64(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\n`))], endless: ENDLESS_PIECE }, options: { limit: '10mb', files: { fileSizeLimit: '64kb' } } },
    node: { status: 413, type: 'multipart.file.too.large' },
    hostile: { atMost: 64 * 1024 + 2 * ENDLESS_PIECE + 200 }
  },
  {
    name: 'an endless multipart file (limit 64kb)',
    spec: { kind: 'multipart', headers: { ...multipartType, 'transfer-encoding': 'chunked' }, body: { chunks: [b64(Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="f.bin"\r\n\r\n`))], endless: ENDLESS_PIECE }, options: { limit: '64kb', files: true } },
    node: { status: 413, type: 'entity.too.large' },
    hostile: { atMost: 64 * 1024 + 2 * ENDLESS_PIECE + 200 }
  }
]

// ---------------------------------------------------------------------------------------------------------------
// The fuzz corpora (test/fuzz/corpus/web and multipart) as specs, as test/runtimes/corpus-replay.test.ts reads them.

const CORPUS = path.join(ROOT, 'test/fuzz/corpus')
const KNOWN_FINDINGS = JSON.parse(fs.readFileSync(path.join(ROOT, 'test/fuzz/known-findings.json'), 'utf8')) as Record<string, string>

export interface CorpusSpec { name: string, spec: Spec }

/**
 * Corpus requests the Web build answers otherwise than the Node build, not yet fixed in src/: left out of the corpus
 * comparison and run as todo tests, each with what differs.
 */
// The three found here (a malformed part header in a header block cut by the limit) were the Node build's: its
// canonical stream held the block whole and answered 413; it now hands it to busboy first (test/limits/one-answer.test.ts).
export const KNOWN_DIFFERENCES: Record<string, string> = {}

function withoutUndefined (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutUndefined)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined).map(([key, field]) => [key, withoutUndefined(field)]))
}

/** Why an input cannot go as a spec (over HTTP too), or null: a header HTTP cannot carry, options JSON cannot. */
function whyNot (headers: Record<string, string>, options: object): string | null {
  for (const [name, value] of Object.entries(headers)) {
    try {
      http.validateHeaderValue(name, value)
    } catch {
      return `a ${name} Node's HTTP client and parser refuse`
    }
  }
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(options)), withoutUndefined(options))) return 'options JSON does not carry'
  return null
}

/** Both corpora as specs (a wrong Content-Length goes with the exact one: a real connection cannot carry it), and what was left out. */
export function readCorpus (): { specs: CorpusSpec[], skipped: Map<string, number> } {
  const specs: CorpusSpec[] = []
  const skipped = new Map<string, number>()
  const files = (target: string): string[] => fs.existsSync(path.join(CORPUS, target)) ? fs.readdirSync(path.join(CORPUS, target)).sort() : []
  const skip = (target: string, file: string, why: string | null): boolean => {
    if (KNOWN_FINDINGS[`${target}/${file}`] !== undefined) why = 'a known finding'
    if (why !== null) skipped.set(`${target}: ${why}`, (skipped.get(`${target}: ${why}`) ?? 0) + 1)
    return why !== null
  }
  // The web-build target's corpus is drawn as the web target's: the inputs that told the two builds apart on Node.
  for (const target of ['web', 'web-build']) {
    for (const file of files(target)) {
      const input = webTarget.draw(sourceOf(fs.readFileSync(path.join(CORPUS, target, file))))
      const { wire, options } = webTarget.requestOf(input)
      const { 'content-length': _length, 'transfer-encoding': _chunked, ...headers } = wire.headers
      if (skip(target, file, whyNot(headers, options))) continue
      const framing = input.framing === 'chunked' ? 'chunked' : 'length'
      specs.push({ name: `${target}/${file} (${input.kind}, ${framing})`, spec: specOf(input.kind, headers, withoutUndefined(options), wire.chunks, framing) })
    }
  }
  for (const file of files('multipart')) {
    const input = multipartTarget.draw(sourceOf(fs.readFileSync(path.join(CORPUS, 'multipart', file))))
    const options = multipartTarget.optionsOf(input)
    const headers = { 'content-type': input.contentType }
    if (skip('multipart', file, whyNot(headers, options))) continue
    specs.push({ name: `multipart/${file} (length)`, spec: specOf('multipart', headers, withoutUndefined(options), [input.body], 'length') })
    specs.push({ name: `multipart/${file} (chunked)`, spec: specOf('multipart', headers, withoutUndefined(options), splitAt(input.body, input.splits), 'chunked') })
  }
  return { specs, skipped }
}

export const countIn = <K>(map: Map<K, number>, key: K): void => { map.set(key, (map.get(key) ?? 0) + 1) }
export const listOf = (map: Map<unknown, number>): string => [...map].sort().map(([key, n]) => `${key} ×${n}`).join('; ') || 'none'
