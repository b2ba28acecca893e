// Real servers on other runtimes (Bun.serve, Deno.serve, workerd with nodejs_compat) run bodykit's built `dist/` readers
// on the Web Request each hands over; raw HTTP from Node gets the same answers as the same handler on Node in-process,
// and the hostile bodies (a 1 GiB declared length, an endless chunked body, compression bombs) are refused early.
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { describe, it } from 'node:test'
import { AFTER_ANSWER_MS, DIST, ENDLESS_CHUNK, exchange, RUNTIMES, serveRuntime, type Answer, type Runtime } from './runtime-servers'
import { createHandler, ROUTE_OPTIONS, type Readers } from './web-routes'

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
    const { ready } = serveRuntime(runtime)
    let endlessAnswer: Answer | null = null

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
