// Issues 5.1 and 9: a body over `limit` gets its 413 at once, every client receives it, and the server reads a bounded amount.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { DEFAULT_DISCARD } from '../../src/options'
import { DISCARD_IDLE_MS, LINGER_MS } from '../../src/wire'
import { MiB, entries, generatedBody, startServer, type RecordingServer } from './helpers'

const LIMIT = 100 * 1024
/** Socket buffers and one in-flight chunk: what may be read past a bound before backpressure holds. */
const SLACK = 256 * 1024
const BIG = 50 * MiB
/** A small budget, so that its bounds are reached quickly. */
const SMALL = { bytes: MiB, ms: 1000 }

const curl = ['/usr/bin/curl', '/usr/local/bin/curl', '/bin/curl'].find((file) => existsSync(file))
let tmp = ''
let bigFile = ''

before(() => {
  tmp = mkdtempSync(join(os.tmpdir(), 'bodykit-hostile-'))
  bigFile = join(tmp, 'big.json')
  writeFileSync(bigFile, Buffer.alloc(BIG, 0x20))
})
after(() => rmSync(tmp, { recursive: true, force: true }))

/** Resolves when the socket of the request closed on the server (bytesReadAtClose is set). */
async function closed (server: RecordingServer, index: number, withinMs: number): Promise<number> {
  const outcome = await server.outcome(index)
  const deadline = Date.now() + withinMs
  while (outcome.bytesReadAtClose === null) {
    if (Date.now() > deadline) assert.fail(`socket still open ${withinMs} ms after next()`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return outcome.bytesReadAtClose
}

function curlStatus (args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(curl as string, ['-sS', '-o', '/dev/null', '-w', '%{http_code}', ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err && !stdout) reject(new Error(stderr || String(err)))
      else resolve(stdout)
    })
  })
}

for (const entry of entries) {
  describe(`early 413 (${entry.name} entry)`, () => {
    let server: RecordingServer
    let url = ''
    let count = 0
    /** The same parser with `discardLimit: '1mb'` and `discardTime: 1000`. */
    let small: RecordingServer
    let smallUrl = ''
    let smallCount = 0
    before(async () => {
      server = await startServer(entry.bodykit.json({ limit: LIMIT }))
      url = `http://127.0.0.1:${server.port}/`
      small = await startServer(entry.bodykit.json({ limit: LIMIT, discardLimit: '1mb', discardTime: SMALL.ms }))
      smallUrl = `http://127.0.0.1:${small.port}/`
    })
    after(async () => { await server.close(); await small.close() })

    it('answers a declared Content-Length over the limit before reading, and reads none of a body declared over the discard budget', async () => {
      const index = count++
      const size = DEFAULT_DISCARD.bytes + LIMIT + 1
      const body = generatedBody(size)
      const res = await fetch(url, { method: 'POST', body: body.stream, duplex: 'half', headers: { 'content-type': 'application/json', 'content-length': String(size) } } as RequestInit)
      assert.equal(res.status, 413)
      assert.equal(await res.text(), '[entity.too.large] request entity too large')
      assert.equal(res.headers.get('connection'), 'close')
      const outcome = await server.outcome(index)
      assert.equal(outcome.calls, 1)
      assert.deepEqual(pick(outcome.err, ['status', 'type', 'expected', 'length', 'limit', 'received']), { status: 413, type: 'entity.too.large', expected: size, length: size, limit: LIMIT })
      assert.ok(body.sent() < size / 2, `client could send ${body.sent()} bytes`)
      assert.ok(await closed(server, index, 3 * LINGER_MS) <= SLACK, 'server read past the slack')
    })

    it('answers a declared Content-Length over the limit before reading, then reads off a body within the budget', async () => {
      const index = count++
      const body = generatedBody(BIG)
      const res = await fetch(url, { method: 'POST', body: body.stream, duplex: 'half', headers: { 'content-type': 'application/json', 'content-length': String(BIG) } } as RequestInit)
      assert.equal(res.status, 413)
      assert.equal(await res.text(), '[entity.too.large] request entity too large')
      const outcome = await server.outcome(index)
      assert.equal(outcome.calls, 1)
      assert.ok(outcome.bytesReadAtNext <= SLACK, 'next() came after reading')
      assert.deepEqual(pick(outcome.err, ['status', 'type', 'expected', 'length', 'limit', 'received']), { status: 413, type: 'entity.too.large', expected: BIG, length: BIG, limit: LIMIT })
    })

    for (const framing of ['declared', 'chunked'] as const) {
      it(`a client that reads only once its ${framing} upload of 50 MiB is done receives the 413 (as python's urllib, browsers)`, async () => {
        const index = count++
        const response = await uploadThenRead(server.port, framing, BIG)
        assert.match(response, /^HTTP\/1.1 413 /)
        const outcome = await server.outcome(index)
        assert.ok(outcome.bytesReadAtNext <= LIMIT + SLACK, 'next() came late')
      })
    }

    it('answers a chunked body once the count crosses the limit; the server reads at most limit + the discard budget', async () => {
      const index = smallCount++
      const body = generatedBody(BIG)
      const res = await fetch(smallUrl, { method: 'POST', body: body.stream, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
      assert.equal(res.status, 413)
      assert.equal(await res.text(), '[entity.too.large] request entity too large')
      const outcome = await small.outcome(index)
      assert.equal(outcome.calls, 1)
      assert.equal(outcome.err?.limit, LIMIT)
      assert.ok((outcome.err?.received as number) > LIMIT && (outcome.err?.received as number) <= LIMIT + 64 * 1024)
      assert.ok(outcome.bytesReadAtNext <= LIMIT + SLACK, 'next() came late')
      assert.ok(await closed(small, index, SMALL.ms + 3 * LINGER_MS) <= LIMIT + SMALL.bytes + SLACK, 'server read past the bound')
    })

    it('with the default budget, a chunked 1 GiB upload costs the server at most limit + 64 MiB', async () => {
      const index = count++
      const body = generatedBody(1024 * MiB)
      const res = await fetch(url, { method: 'POST', body: body.stream, duplex: 'half', headers: { 'content-type': 'application/json' } } as RequestInit)
      assert.equal(res.status, 413)
      await res.text()
      assert.ok(await closed(server, index, DEFAULT_DISCARD.ms + 3 * LINGER_MS) <= LIMIT + DEFAULT_DISCARD.bytes + SLACK, 'server read past the bound')
    })

    it('Node\'s http client receives the 413 while still uploading', async () => {
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': BIG } })
        req.on('response', (res) => { res.resume(); resolve(res.statusCode as number) })
        req.on('error', reject)
        const chunk = Buffer.alloc(64 * 1024, 0x20)
        let left = BIG
        const write = (): void => {
          while (left > 0) {
            left -= chunk.length
            if (!req.write(chunk)) return void req.once('drain', write)
          }
          req.end()
        }
        write()
      })
      count++
      assert.equal(status, 413)
    })

    it('Node\'s http client piping a slow upload answered early: its request ends once the body goes quiet, not when the server gives it up', async () => {
      const size = 4 * MiB
      const { status, closedAfter } = await new Promise<{ status: number, closedAfter: number }>((resolve, reject) => {
        let answeredAt = 0
        let status = 0
        const req = http.request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': size } })
        req.on('response', (res) => {
          answeredAt = Date.now()
          status = res.statusCode as number
          res.resume()
        })
        // Kept alive, Node's client waits for good on a 'drain' after such an answer; the half-close ends the request.
        req.on('close', () => { resolve({ status, closedAfter: Date.now() - answeredAt }) })
        req.on('error', reject)
        let left = size
        Readable.from((async function * () {
          while (left > 0) {
            left -= 64 * 1024
            await new Promise((resolve) => setTimeout(resolve, 2))
            yield Buffer.alloc(64 * 1024, 0x20)
          }
        })()).pipe(req)
      })
      count++
      assert.equal(status, 413)
      assert.ok(closedAfter < DISCARD_IDLE_MS, `the request ended ${closedAfter} ms after the answer: the server gave it up first`)
    })

    it('curl receives the 413 for a 50 MiB upload, with and without Content-Length', { skip: curl ? false : 'curl not installed' }, async () => {
      assert.equal(await curlStatus(['-H', 'content-type: application/json', '--data-binary', '@' + bigFile, url]), '413')
      count++
      assert.equal(await curlStatus(['-H', 'content-type: application/json', '-H', 'transfer-encoding: chunked', '--data-binary', '@' + bigFile, url]), '413')
      count++
    })

    it('keeps the connection when the rest of the body is within the discard bound', async () => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
      const ports: number[] = []
      const post = (size: number): Promise<number> => new Promise((resolve, reject) => {
        const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': size } })
        req.on('socket', (socket) => { socket.once('connect', () => ports.push(socket.localPort as number)); if (!socket.connecting) ports.push(socket.localPort as number) })
        req.on('response', (res) => { res.resume(); res.on('end', () => resolve(res.statusCode as number)) })
        req.on('error', reject)
        req.end(size === 2 ? '{}' : Buffer.alloc(size, 0x20))
      })
      assert.equal(await post(3 * LIMIT), 413)
      count++
      assert.equal(await post(2), 200)
      count++
      agent.destroy()
      assert.equal(ports.length, 2)
      assert.equal(ports[0], ports[1], 'the second request did not reuse the connection')
    })

    it('closes the connection of a client that trickles after the 413 (declared 1 GB)', async () => {
      const index = count++
      const { gotResponse, closedAfter } = await trickle(server.port, `content-length: ${1024 * MiB}`, Buffer.alloc(0))
      assert.match(gotResponse, /^HTTP\/1.1 413 /)
      assert.match(gotResponse, /connection: close/i)
      assert.ok(closedAfter < LINGER_MS + 1500, `closed ${closedAfter} ms after the response`)
      assert.equal((await server.outcome(index)).calls, 1)
    })

    it('closes the connection of a chunked client that trickles after the 413, once the discard time is over', async () => {
      const index = smallCount++
      const first = Buffer.alloc(LIMIT + 1, 0x20)
      const { gotResponse, closedAfter } = await trickle(small.port, 'transfer-encoding: chunked', first)
      assert.match(gotResponse, /^HTTP\/1.1 413 /)
      assert.ok(closedAfter < SMALL.ms + LINGER_MS + 1500, `closed ${closedAfter} ms after the response`)
      assert.equal((await small.outcome(index)).calls, 1)
    })
  })
}

/** Writes the whole body without reading (as python's http.client does), then reads the response; resolves with what it read. */
function uploadThenRead (port: number, framing: 'declared' | 'chunked', size: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    socket.pause()
    const header = framing === 'declared' ? `content-length: ${size}` : 'transfer-encoding: chunked'
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${header}\r\n\r\n`)
    const chunk = Buffer.alloc(64 * 1024, 0x20)
    const framed = framing === 'chunked' ? Buffer.concat([Buffer.from(chunk.length.toString(16) + '\r\n'), chunk, Buffer.from('\r\n')]) : chunk
    let left = size
    let response = ''
    const write = (): void => {
      while (left > 0) {
        left -= chunk.length
        if (!socket.write(framed)) return void socket.once('drain', write)
      }
      socket.write(framing === 'chunked' ? '0\r\n\r\n' : '', () => {
        socket.on('data', (data: Buffer) => {
          response += data.toString('latin1')
          if (response.includes('\r\n\r\n')) { socket.destroy(); resolve(response) }
        })
        socket.resume()
      })
    }
    socket.on('error', reject)
    socket.on('close', () => reject(new Error('closed before a response: ' + JSON.stringify(response))))
    write()
  })
}

/** Sends headers and `first`, then 1 KiB every 20 ms; reports the response and how long after it the server closed. */
function trickle (port: number, framing: string, first: Buffer): Promise<{ gotResponse: string, closedAfter: number }> {
  const chunked = framing.startsWith('transfer-encoding')
  const frame = (data: Buffer): Buffer => chunked ? Buffer.concat([Buffer.from(data.length.toString(16) + '\r\n'), data, Buffer.from('\r\n')]) : data
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let response = ''
    let respondedAt = 0
    const timer = setInterval(() => { if (socket.writable) socket.write(frame(Buffer.alloc(1024, 0x20))) }, 20)
    socket.on('connect', () => {
      socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n${framing}\r\n\r\n`)
      if (first.length) socket.write(frame(first))
    })
    socket.on('data', (data) => {
      response += data.toString('latin1')
      if (!respondedAt) respondedAt = Date.now()
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      clearInterval(timer)
      if (!respondedAt) reject(new Error('closed without a response'))
      else resolve({ gotResponse: response, closedAfter: Date.now() - respondedAt })
    })
    setTimeout(() => { socket.destroy(); }, 20_000).unref()
  })
}

function pick (obj: object | undefined, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const key of keys) if (obj && key in obj) out[key] = (obj as Record<string, unknown>)[key]
  return out
}
