// The h3 runtime tests: an h3 2 app (test/runtimes/h3-app.ts) reading bodies with bodykit/h3, bundled with esbuild as an
// app's bundler would (h3 resolved to h3 2, bodykit/h3 to the build under test), served by Bun, Deno or workerd (without
// nodejs_compat), and asked over fresh connections; its answers checked, and compared with h3 2's own readers' on the same
// requests. The runtimes come from the cache and installer the Web bundle's tests use (test/runtimes/web-bundle/harness.ts):
// a runtime that cannot be installed skips its tests with the reason, as there.
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, before, describe, it, type TestContext } from 'node:test'
import * as esbuild from 'esbuild'
import { bundleWeb } from '../../scripts/web-bundle.mjs'
import { exchange, portFromOutput, spawnServer, type Answer } from './runtime-servers'
import { install, startWorkerd, VERSIONS } from './web-bundle/harness'
import type { PartSummary } from './h3-app'

const ROOT = path.resolve(__dirname, '../..')
const SERVER_LIFETIME_MS = 120_000
const KIB = 1024

export type H3RuntimeName = 'bun' | 'deno' | 'workerd'
/**
 * The build of bodykit/h3 in the app: 'web', the Web bundle of src/h3-web.mts (scripts/web-bundle.mjs, as dist/h3-web.mjs
 * is built: what the package's workerd, worker and browser conditions give); 'node', the Node build dist/h3.mjs (its
 * `import` condition, what Bun and Deno resolve bodykit/h3 to), bundled for the runtime with its Node modules.
 */
export type H3Build = 'web' | 'node'

interface Server { port: number, child: ChildProcess, output: () => string }

// ---------------------------------------------------------------------------------------------------------------
// Bundling the app.

/**
 * Bundles the app's entry for `name` into `folder`, bodykit/h3 being `build`: one ES module with h3 2 inlined (this file's
 * 'h3-2' and bodykit's own `import 'h3'` both resolve to node_modules/h3-2, so there is one h3, and it is 2.x).
 * The Web build's bundle imports nothing (no Node built-in: workerd without nodejs_compat could not load one).
 */
async function bundleApp (name: H3RuntimeName, build: H3Build, folder: string): Promise<string> {
  let bodykitH3: string
  if (build === 'web') {
    const { code, builtins } = await bundleWeb('src/h3-web.mts', { minify: false })
    assert.deepEqual(builtins, [], 'the Web bundle of bodykit/h3 imports Node built-ins')
    bodykitH3 = path.join(folder, 'h3-web.mjs')
    fs.writeFileSync(bodykitH3, code)
  } else {
    bodykitH3 = path.join(ROOT, 'dist/h3.mjs')
    assert.ok(fs.existsSync(bodykitH3), 'dist/h3.mjs is missing: run `npm run build` first (npm test does)')
  }
  const toBuild: esbuild.Plugin = {
    name: 'bodykit-h3',
    setup (b) {
      b.onResolve({ filter: /\/src\/h3(\.m?ts)?$/ }, () => ({ path: bodykitH3 }))
    }
  }
  const outfile = path.join(folder, name === 'workerd' ? 'worker.js' : 'serve.mjs')
  const result = await esbuild.build({
    entryPoints: [path.join(__dirname, name === 'workerd' ? 'h3-worker.ts' : 'h3-serve.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: build === 'web' ? 'browser' : 'node',
    target: 'es2022',
    // h3 2's own entry for the runtime (its `serve`, unused here, is the runtime's).
    conditions: build === 'web' ? [name, 'worker', 'browser'] : [name],
    // An alias is resolved from the working directory: h3 2 wherever `h3` is imported (bodykit's bundle sits in a temp folder).
    alias: { h3: 'h3-2' },
    absWorkingDir: ROOT,
    define: { BODYKIT_H3_BUILD: JSON.stringify(build) },
    // The Node build's CommonJS `require()`s of Node modules, in an ES module (Deno has no `require` there).
    banner: build === 'node' ? { js: 'import { createRequire as __bodykitCreateRequire } from \'node:module\'; const require = __bodykitCreateRequire(import.meta.url);' } : undefined,
    metafile: true,
    logLevel: 'error',
    plugins: [toBuild]
  })
  const inputs = Object.keys(result.metafile.inputs)
  assert.ok(inputs.some((input) => input.includes('node_modules/h3-2/')), 'h3 2 is not in the bundle')
  assert.deepEqual(inputs.filter((input) => input.includes('node_modules/h3/')), [], 'h3 1.x is in the bundle')
  assert.ok(inputs.includes(path.relative(ROOT, bodykitH3)) || inputs.some((input) => path.resolve(ROOT, input) === bodykitH3), 'bodykit/h3 is not in the bundle')
  if (build === 'web') {
    const [output] = Object.values(result.metafile.outputs)
    assert.deepEqual(output.imports.filter((imported) => imported.external).map((imported) => imported.path), [], 'the worker imports modules')
  }
  return outfile
}

async function startServer (name: H3RuntimeName, build: H3Build, installed: { dir: string }, folder: string): Promise<Server> {
  const file = await bundleApp(name, build, folder)
  if (name === 'workerd') return startWorkerd(installed, folder, [path.basename(file)])
  const bin = path.join(installed.dir, 'node_modules/.bin', name)
  const args = name === 'bun'
    ? ['run', file]
    : ['run', '--no-lock', '--allow-net=127.0.0.1', '--allow-read', '--allow-env', ...(build === 'node' ? ['--allow-sys'] : []), file]
  const { child, output } = spawnServer(bin, args, { DENO_DIR: path.join(folder, 'deno-dir'), NO_COLOR: '1' }, folder, SERVER_LIFETIME_MS)
  // A server that never listened is stopped here: no test holds it to stop it later.
  const port = await portFromOutput(child, output).catch((err: unknown) => { child.kill('SIGKILL'); throw err })
  return { port, child, output }
}

/**
 * The runtime's server for the tests of the current `describe`: installed, bundled and started before them, stopped after.
 * `ready(t)` gives it, or skips the test with the reason when the runtime could not be installed (as useRuntime does).
 */
function serveApp (name: H3RuntimeName, build: H3Build): { ready: (t: TestContext) => Server | null } {
  let skip: string | null = null
  let server: Server | null = null
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
    folder = fs.mkdtempSync(path.join(os.tmpdir(), `bodykit-h3-${name}-${build}-`))
    const started = Date.now()
    server = await startServer(name, build, installed, folder)
    notes.push(`bundled and up in ${((Date.now() - started) / 1000).toFixed(1)} s on port ${server.port}`)
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
// Requests: each on a connection of its own (`connection: close`), so that a 413 whose body the server left unread
// cannot break the next request.

interface Reply { status: number | null, json: unknown, text: string }

function chunkedFrames (body: Buffer, size = 16 * KIB): Buffer {
  const frames: Buffer[] = []
  for (let at = 0; at < body.length; at += size) {
    const piece = body.subarray(at, at + size)
    frames.push(Buffer.from(piece.length.toString(16) + '\r\n'), piece, Buffer.from('\r\n'))
  }
  frames.push(Buffer.from('0\r\n\r\n'))
  return Buffer.concat(frames)
}

async function post (server: Server, route: string, headers: Record<string, string>, body: Buffer | string, framing: 'length' | 'chunked' = 'length'): Promise<Reply> {
  const bytes = Buffer.from(body)
  const framed: Record<string, string> = framing === 'length' ? { 'content-length': String(bytes.length) } : { 'transfer-encoding': 'chunked' }
  const all: Record<string, string> = { host: `127.0.0.1:${server.port}`, ...headers, ...framed, connection: 'close' }
  const head = `POST ${route} HTTP/1.1\r\n` + Object.entries(all).map(([name, value]) => `${name}: ${value}\r\n`).join('') + '\r\n'
  const answer: Answer = await exchange(server.port, head, framing === 'length' ? bytes : chunkedFrames(bytes))
  return { status: answer.status, json: answer.json, text: answer.text }
}

/** What a failed assertion shows: the answer, and the end of the server's output (an unhandled error's stack is there). */
const show = (server: Server, reply: Reply): string => `${reply.status} ${reply.text.slice(0, 500)}\n--- server output:\n${server.output().slice(-2000)}`

/** Asserts a 200 answer and gives its JSON. */
function ok (server: Server, reply: Reply): unknown {
  assert.equal(reply.status, 200, show(server, reply))
  assert.ok(reply.json !== null, show(server, reply))
  return reply.json
}

/** h3 2's answer to bodykit/h3's HTTPError: exactly `{ status, statusText, message, data: { type } }`. */
function assertRefusal (server: Server, reply: Reply, expected: { status: number, statusText: string, message: string, type: string }): void {
  assert.equal(reply.status, expected.status, show(server, reply))
  assert.deepEqual(reply.json, { status: expected.status, statusText: expected.statusText, message: expected.message, data: { type: expected.type } }, show(server, reply))
}

const TOO_LARGE = { status: 413, statusText: 'Request Entity Too Large', message: 'request entity too large', type: 'entity.too.large' }
const JSON_TYPE = { 'content-type': 'application/json' }
const OCTETS = { 'content-type': 'application/octet-stream' }
const FORM_TYPE = { 'content-type': 'application/x-www-form-urlencoded' }

/** A JSON text of exactly `length` bytes: `{"pad":"xx…"}`. */
const jsonOf = (length: number): string => `{"pad":"${'x'.repeat(length - 10)}"}`
const seeded = (length: number, seed: number): Buffer => Buffer.from(Array.from({ length }, (_, i) => (i * 131 + seed * 17 + (i >> 7)) & 255))
const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex')

/** A multipart body built by FormData (Node's own encoder): a field, a file, another field; and the parts it holds. */
async function formDataBody (): Promise<{ headers: Record<string, string>, body: Buffer, parts: PartSummary[] }> {
  const file = seeded(30_000, 5)
  const form = new FormData()
  form.append('title', 'h\u00e9llo w\u00f6rld')
  form.append('upload', new Blob([new Uint8Array(file)], { type: 'image/png' }), 'photo.png')
  form.append('note', 'after the file')
  const request = new Request('http://127.0.0.1/', { method: 'POST', body: form })
  const body = Buffer.from(await request.arrayBuffer())
  const parts: PartSummary[] = [
    { name: 'title', size: Buffer.byteLength('h\u00e9llo w\u00f6rld'), sha256: sha256('h\u00e9llo w\u00f6rld') },
    { name: 'upload', filename: 'photo.png', type: 'image/png', size: file.length, sha256: sha256(file) },
    { name: 'note', size: 'after the file'.length, sha256: sha256('after the file') }
  ]
  return { headers: { 'content-type': request.headers.get('content-type') as string }, body, parts }
}

// ---------------------------------------------------------------------------------------------------------------

/** The tests of the app on one runtime with one build of bodykit/h3. */
export function h3RuntimeSuite (name: H3RuntimeName, build: H3Build): void {
  describe(`an h3 2 app with bodykit/h3 (the ${build === 'web' ? 'Web bundle' : 'Node build'}) on ${name}@${VERSIONS[name]}`, () => {
    const { ready } = serveApp(name, build)

    it('answers GET /runtime: the runtime, and the build bundled', async (t) => {
      const server = ready(t)
      if (server === null) return
      const answer = await exchange(server.port, `GET /runtime HTTP/1.1\r\nhost: 127.0.0.1:${server.port}\r\nconnection: close\r\n\r\n`, null)
      const reply = { status: answer.status, json: answer.json, text: answer.text }
      const json = ok(server, reply) as { runtime: string, build: string }
      assert.equal(json.build, build)
      assert.match(json.runtime, name === 'workerd' ? /^workerd$/ : new RegExp(`^${name[0].toUpperCase()}${name.slice(1)} `))
      t.diagnostic(`runtime: ${json.runtime}`)
    })

    it('readBody: a small JSON body comes back equal, and equal to h3\'s own readBody', async (t) => {
      const server = ready(t)
      if (server === null) return
      const value = { user: { name: 'bodykit', tags: ['a', '\u00e9', '\u2713'] }, n: 1.5, none: null, list: [1, [2, { deep: true }]] }
      const text = JSON.stringify(value)
      const ours = ok(server, await post(server, '/json', JSON_TYPE, text))
      assert.deepEqual(ours, { body: value })
      assert.deepEqual(ours, ok(server, await post(server, '/h3/json', JSON_TYPE, text)))
    })

    it('readBody: urlencoded `a=1&a=2&b=3` is { a: [\'1\', \'2\'], b: \'3\' }, as h3\'s own readBody reads it', async (t) => {
      const server = ready(t)
      if (server === null) return
      const ours = ok(server, await post(server, '/form', FORM_TYPE, 'a=1&a=2&b=3'))
      assert.deepEqual(ours, { body: { a: ['1', '2'], b: '3' } })
      assert.deepEqual(ours, ok(server, await post(server, '/h3/form', FORM_TYPE, 'a=1&a=2&b=3')))
    })

    it('readBody: a gzip JSON body is inflated', async (t) => {
      const server = ready(t)
      if (server === null) return
      const value = { packed: true, text: 'h\u00e9llo '.repeat(200) }
      const reply = await post(server, '/json', { ...JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync(JSON.stringify(value)))
      assert.deepEqual(ok(server, reply), { body: value })
    })

    it('readRawBody(event, false): the bytes, as many as h3\'s own readRawBody gives', async (t) => {
      const server = ready(t)
      if (server === null) return
      const bytes = seeded(20_000, 1)
      const ours = ok(server, await post(server, '/raw', OCTETS, bytes))
      assert.deepEqual(ours, { length: 20_000 })
      assert.deepEqual(ours, ok(server, await post(server, '/h3/raw', OCTETS, bytes)))
    })

    it('the default limit, 100 KiB: a JSON body of exactly 100 KiB is read, one byte more is 413 entity.too.large', async (t) => {
      const server = ready(t)
      if (server === null) return
      const atLimit = ok(server, await post(server, '/json', JSON_TYPE, jsonOf(100 * KIB))) as { body: { pad: string } }
      assert.equal(atLimit.body.pad.length, 100 * KIB - 10)
      assertRefusal(server, await post(server, '/json', JSON_TYPE, jsonOf(100 * KIB + 1)), TOO_LARGE)
      assertRefusal(server, await post(server, '/json', JSON_TYPE, jsonOf(110_000)), TOO_LARGE)
    })

    it('the default limit, counted as the body comes: 110 KB chunked (no Content-Length) to readRawBody is 413', async (t) => {
      const server = ready(t)
      if (server === null) return
      assertRefusal(server, await post(server, '/raw', OCTETS, seeded(110_000, 2), 'chunked'), TOO_LARGE)
      // And under the limit, chunked, read whole.
      assert.deepEqual(ok(server, await post(server, '/raw', OCTETS, seeded(90_000, 3), 'chunked')), { length: 90_000 })
    })

    it('the default limit, counted inflated: 1 MiB of zeros as a few KB of gzip is 413', async (t) => {
      const server = ready(t)
      if (server === null) return
      const packed = zlib.gzipSync(Buffer.alloc(1024 * KIB))
      assert.ok(packed.length < 8 * KIB)
      assertRefusal(server, await post(server, '/raw', { ...OCTETS, 'content-encoding': 'gzip' }, packed), TOO_LARGE)
    })

    it('readBody(event, { limit: 16 }): 16 bytes are read, 17 are 413 entity.too.large', async (t) => {
      const server = ready(t)
      if (server === null) return
      const sixteen = '{"a":"12345678"}'
      const seventeen = '{"a":"123456789"}'
      assert.deepEqual([Buffer.byteLength(sixteen), Buffer.byteLength(seventeen)], [16, 17])
      assert.deepEqual(ok(server, await post(server, '/limited', JSON_TYPE, sixteen)), { body: { a: '12345678' } })
      assertRefusal(server, await post(server, '/limited', JSON_TYPE, seventeen), TOO_LARGE)
      assertRefusal(server, await post(server, '/limited', JSON_TYPE, seventeen, 'chunked'), TOO_LARGE)
    })

    it('invalid JSON: 400 entity.parse.failed, h3\'s own answer with bodykit\'s type', async (t) => {
      const server = ready(t)
      if (server === null) return
      const ours = await post(server, '/json', JSON_TYPE, '{"a":')
      assertRefusal(server, ours, { status: 400, statusText: 'Bad Request', message: 'Invalid JSON body', type: 'entity.parse.failed' })
      const theirs = await post(server, '/h3/json', JSON_TYPE, '{"a":')
      assert.equal(theirs.status, 400, show(server, theirs))
      const { data: _data, ...withoutType } = ours.json as Record<string, unknown>
      assert.deepEqual(withoutType, theirs.json)
    })

    it('readMultipartFormData: a FormData of a field, a file and a field lists its parts in order, sizes and bytes, as h3\'s own does', async (t) => {
      const server = ready(t)
      if (server === null) return
      const { headers, body, parts } = await formDataBody()
      const ours = ok(server, await post(server, '/parts', headers, body))
      assert.deepEqual(ours, { parts })
      assert.deepEqual(ours, ok(server, await post(server, '/h3/parts', headers, body)))
    })

    it('an unknown charset (application/json; charset=klingon): 415 charset.unsupported', async (t) => {
      const server = ready(t)
      if (server === null) return
      const reply = await post(server, '/json', { 'content-type': 'application/json; charset=klingon' }, '{}')
      assertRefusal(server, reply, { status: 415, statusText: 'Unsupported Media Type', message: 'unsupported charset "KLINGON"', type: 'charset.unsupported' })
    })

    it('readValidatedBody: a valid body passes, an invalid one is h3\'s own 400', async (t) => {
      const server = ready(t)
      if (server === null) return
      assert.deepEqual(ok(server, await post(server, '/validated', JSON_TYPE, '{"n":1}')), { body: { n: 1 } })
      const ours = await post(server, '/validated', JSON_TYPE, '{"n":"1"}')
      const theirs = await post(server, '/h3/validated', JSON_TYPE, '{"n":"1"}')
      assert.equal(theirs.status, 400, show(server, theirs))
      assert.deepEqual([ours.status, ours.json], [theirs.status, theirs.json], show(server, ours))
    })
  })
}
