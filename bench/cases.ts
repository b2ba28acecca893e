// Benchmark payloads and the fake request: a real http.IncomingMessage on a fake socket, fed in 64 KiB chunks.
import { EventEmitter } from 'node:events'
import { IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import zlib from 'node:zlib'
import type { Middleware, ParserName } from './targets'

export interface Case {
  name: string
  parser: ParserName
  options: Record<string, unknown>
  headers: Record<string, string>
  body: Buffer
}

export const CHUNK = 64 * 1024

/** Deterministic pseudo-random numbers, so every run benchmarks the same bytes. */
function prng (seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

/** A JSON array of small mixed records, padded with trailing spaces to exactly `size` bytes. */
function jsonOf (size: number): string {
  const rand = prng(size)
  const words = ['alpha', 'beta', 'gamma', 'delta', 'épsilon', 'zeta', 'ñu', 'theta', '東京', 'kappa']
  const items: string[] = []
  let length = 2
  for (let i = 0; ; i++) {
    const item = JSON.stringify({
      id: i,
      name: words[i % words.length] + ' ' + words[(i * 7) % words.length],
      price: Math.round(rand() * 100000) / 100,
      active: rand() > 0.5,
      tags: [words[i % 3], words[(i + 5) % 10]],
      meta: { score: rand(), note: null, ref: 'r-' + Math.floor(rand() * 1e9).toString(36) }
    })
    const itemLength = Buffer.byteLength(item) + (i ? 1 : 0)
    if (length + itemLength > size) break
    items.push(item)
    length += itemLength
  }
  return '[' + items.join(',') + ']' + ' '.repeat(size - length)
}

/** 30 bracketed parameters in a few nested shapes, as a form with sub-objects and arrays posts them. */
function nestedForm (): string {
  const pairs: string[] = [
    'user[name]=Ada+Lovelace', 'user[email]=ada%40example.com', 'user[address][street]=12+St+James%27s+Sq',
    'user[address][city]=London', 'user[address][zip]=SW1Y+4JH', 'user[prefs][lang]=en-GB', 'user[prefs][tz]=Europe%2FLondon',
    'user[prefs][news]=1', 'order[id]=A-1029', 'order[note]=leave+at+door'
  ]
  for (let i = 0; pairs.length < 28; i++) pairs.push(`order[items][${i >> 1}][${i % 2 ? 'qty' : 'sku'}]=${i % 2 ? i : 'SKU-' + (1000 + i)}`)
  pairs.push('tags[]=new', 'tags[]=gift')
  return pairs.join('&')
}

function bytes (size: number): Buffer {
  const rand = prng(7)
  const buf = Buffer.allocUnsafe(size)
  for (let i = 0; i < size; i++) buf[i] = (rand() * 256) | 0
  return buf
}

const json10k = jsonOf(10 * 1024)
const limit = '2mb'
const jsonType = { 'content-type': 'application/json' }
const formType = { 'content-type': 'application/x-www-form-urlencoded' }

// Compressed bodies (issue 11): JSON of 1, 10 and 100 KiB (inflated) in each encoding both body-parsers
// know (br is a 415 in the 1.x columns). 'gzip json 10 KiB' above stays the headline case.
const compressors: ReadonlyArray<[string, (body: string) => Buffer]> = [
  ['gzip', (body) => zlib.gzipSync(body)],
  ['deflate', (body) => zlib.deflateSync(body)],
  ['br', (body) => zlib.brotliCompressSync(body)]
]

function compressedCases (): Case[] {
  const out: Case[] = []
  for (const [encoding, compress] of compressors) {
    for (const kib of [1, 10, 100]) {
      if (encoding === 'gzip' && kib === 10) continue
      const body = kib === 10 ? json10k : jsonOf(kib * 1024)
      // 100 KiB is exactly the default limit: allow it explicitly, so the case reads a valid body.
      const options = kib === 100 ? { limit: '200kb' } : {}
      out.push({ name: `${encoding} json ${kib} KiB`, parser: 'json', options, headers: { ...jsonType, 'content-encoding': encoding }, body: compress(body) })
    }
  }
  return out
}

export const json69: Case = { name: 'json 69 B', parser: 'json', options: {}, headers: jsonType, body: Buffer.from(JSON.stringify({ id: 1234, name: 'Ada Lovelace', email: 'ada@example.com', ok: true })) }
export const json1m: Case = { name: 'json 1 MiB', parser: 'json', options: { limit }, headers: jsonType, body: Buffer.from(jsonOf(1024 * 1024)) }
export const form60: Case = { name: 'urlencoded 60 B', parser: 'urlencoded', options: { extended: false }, headers: formType, body: Buffer.from('name=Ada+Lovelace&email=ada%40example.com&age=36&langs=en-GB') }

export const cases: Case[] = [
  json69,
  { name: 'json 10 KiB', parser: 'json', options: {}, headers: jsonType, body: Buffer.from(json10k) },
  json1m,
  form60,
  { name: 'urlencoded 30 nested', parser: 'urlencoded', options: { extended: true }, headers: formType, body: Buffer.from(nestedForm()) },
  { name: 'text 1 KiB', parser: 'text', options: {}, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: Buffer.from(jsonOf(1024)) },
  { name: 'raw 1 MiB', parser: 'raw', options: { limit }, headers: { 'content-type': 'application/octet-stream' }, body: bytes(1024 * 1024) },
  { name: 'gzip json 10 KiB', parser: 'json', options: {}, headers: { ...jsonType, 'content-encoding': 'gzip' }, body: zlib.gzipSync(json10k) },
  ...compressedCases()
]

/** Splits a body as the socket would deliver it. */
export function chunksOf (body: Buffer): Buffer[] {
  const chunks: Buffer[] = []
  for (let i = 0; i < body.length; i += CHUNK) chunks.push(body.subarray(i, i + CHUNK))
  return chunks
}

/** Just enough of a net.Socket for IncomingMessage, on-finished and raw-body: open, readable, idle. */
class FakeSocket extends EventEmitter {
  readable = true
  writable = true
  destroyed = false
  readableHighWaterMark = 16 * 1024
  _paused = false
  remoteAddress = '127.0.0.1'
  resume (): this { return this }
  pause (): this { return this }
  setTimeout (): this { return this }
  destroy (): this { this.destroyed = true; this.readable = this.writable = false; return this }
}

/** A request whose headers have arrived and whose body has not: not "finished" for on-finished. */
export function makeRequest (c: Case): IncomingMessage {
  const req = new IncomingMessage(new FakeSocket() as unknown as Socket)
  req.method = 'POST'
  req.url = '/'
  req.httpVersion = '1.1'
  req.httpVersionMajor = 1
  req.httpVersionMinor = 1
  req.headers = { host: '127.0.0.1', ...c.headers, 'content-length': String(c.body.length) }
  return req
}

/** Delivers the body as Node's HTTP parser does: push each chunk, mark complete, push EOF. */
export function feed (req: IncomingMessage, chunks: Buffer[]): void {
  for (const chunk of chunks) req.push(chunk)
  req.complete = true
  req.push(null)
}

export const fakeResponse = {} as ServerResponse

/** Runs the middleware on a fresh request: resolves with `req.body`, rejects with what `next` got. */
export function run (mw: Middleware, req: IncomingMessage, chunks: Buffer[]): Promise<unknown> {
  return new Promise((resolve, reject) => {
    mw(req, fakeResponse, (err) => err ? reject(err) : resolve((req as IncomingMessage & { body?: unknown }).body))
    feed(req, chunks)
  })
}
