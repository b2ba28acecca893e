// Runs in Node, Bun or Deno (bundled by bench/web-readers.ts with the Web bundle inlined): readJson(request) against
// request.json() on a ~100 B body and a 64 KiB body streamed in 4 KiB pieces; prints one JSON line of ops/s medians.
import { readJson } from '../src/web'

const small = JSON.stringify({ id: 12345, name: 'bodykit', tags: ['a', 'b', 'c'], nested: { ok: true, n: 1.5 }, pad: 'xxxxxxxxxx' })
const pieces: Uint8Array[] = []
{
  const items: string[] = []
  let text = ''
  for (let i = 0; text.length < 64 * 1024 - 64; i++) { items.push(`{"i":${i},"v":"abcdefghij"}`); text = `{"items":[${items.join(',')}]}` }
  const bytes = new TextEncoder().encode(text)
  for (let at = 0; at < bytes.length; at += 4096) pieces.push(bytes.subarray(at, at + 4096))
}
const headers = { 'content-type': 'application/json' }

function smallRequest (): Request {
  return new Request('http://127.0.0.1/', { method: 'POST', headers, body: small })
}

/** The small body as a server hands it over: a stream (one piece). */
function smallStreamedRequest (): Request {
  const bytes = new TextEncoder().encode(small)
  let sent = false
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      if (sent) controller.close()
      else controller.enqueue(bytes.slice())
      sent = true
    }
  })
  return new Request('http://127.0.0.1/', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

const decoder = new TextDecoder()

/** The floor of reading a body as it arrives (the only way to stop it at a limit): its reader to the end, then JSON.parse. */
async function readerFloor (request: Request): Promise<unknown> {
  const reader = (request.body as ReadableStream<Uint8Array>).getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    size += value.byteLength
  }
  let bytes = chunks[0] ?? new Uint8Array(0)
  if (chunks.length > 1) {
    bytes = new Uint8Array(size)
    let at = 0
    for (const chunk of chunks) { bytes.set(chunk, at); at += chunk.byteLength }
  }
  return JSON.parse(decoder.decode(bytes))
}

function streamedRequest (): Request {
  let next = 0
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      if (next === pieces.length) controller.close()
      else controller.enqueue(pieces[next++].slice())
    }
  })
  return new Request('http://127.0.0.1/', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

/** Operations a second for `read` over about `ms` milliseconds, after a warm-up. */
async function opsPerSecond (read: () => Promise<unknown>, ms: number): Promise<number> {
  for (let i = 0; i < 200; i++) await read()
  let count = 0
  const started = performance.now()
  while (performance.now() - started < ms) {
    for (let i = 0; i < 50; i++) await read()
    count += 50
  }
  return count / ((performance.now() - started) / 1000)
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const RUNS = 5
const cases: Record<string, () => Promise<unknown>> = {
  'small, readJson': () => readJson(smallRequest()),
  'small, request.json()': () => smallRequest().json(),
  'small, reader floor': () => readerFloor(smallRequest()),
  'small streamed, readJson': () => readJson(smallStreamedRequest()),
  'small streamed, request.json()': () => smallStreamedRequest().json(),
  'small streamed, reader floor': () => readerFloor(smallStreamedRequest()),
  '64 KiB streamed, readJson': () => readJson(streamedRequest()),
  '64 KiB streamed, request.json()': () => streamedRequest().json()
}
async function main (): Promise<void> {
  const results: Record<string, number> = {}
  for (const [name, read] of Object.entries(cases)) {
    const runs: number[] = []
    for (let i = 0; i < RUNS; i++) runs.push(await opsPerSecond(read, 300))
    results[name] = Math.round(median(runs))
  }
  console.log(JSON.stringify(results))
}

void main()
