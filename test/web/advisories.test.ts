// What a Web Request's body gets that request.json() and formData() do not: decided before reading, counted as it streams,
// cancelled when refused; each advisory of web-request-bodies.md (Hono bodyLimit, SvelteKit, Remix) as a case.
import assert from 'node:assert/strict'
import { mkdtempSync, readdirSync, rmSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import { readJson, readMultipart, readRaw, readText } from '../../src/index'
import { openFds, settleFds } from '../multipart/helpers'

const KiB = 1024
const MiB = 1024 * KiB

/** A body that counts what was pulled from it and whether it was cancelled; `total` bytes in 16 KiB chunks (Infinity: endless). */
function countedBody (total: number, fill = 0x61): { body: ReadableStream<Uint8Array>, pulled: () => number, cancelled: () => boolean } {
  let pulled = 0
  let cancelled = false
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      const size = Math.min(16 * KiB, total - pulled)
      if (size <= 0) {
        controller.close()
        return
      }
      pulled += size
      controller.enqueue(new Uint8Array(size).fill(fill))
    },
    cancel () { cancelled = true }
  }, { highWaterMark: 0 })
  return { body, pulled: () => pulled, cancelled: () => cancelled }
}

function post (headers: Record<string, string>, body: string | Uint8Array | ReadableStream<Uint8Array> | null): Request {
  return new Request('http://127.0.0.1/upload', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

async function refusal (reading: Promise<unknown>): Promise<{ status: number, type: string, message: string }> {
  const err = await reading.then((value) => { throw new Error('accepted: ' + JSON.stringify(value)) }, (error: unknown) => error)
  return err as { status: number, type: string, message: string }
}

const settled = (): Promise<void> => new Promise((resolve) => { setTimeout(resolve, 20) })

describe('Web Request bodies: decided before reading, bounded while reading, cancelled when refused', () => {
  it('a declared 1 GiB body is 413 with nothing read, and its stream is cancelled', async () => {
    const counted = countedBody(Infinity)
    const err = await refusal(readJson(post({ 'content-type': 'application/json', 'content-length': String(1024 * MiB) }, counted.body)))
    assert.equal(err.status, 413)
    assert.equal(err.type, 'entity.too.large')
    await settled()
    assert.equal(counted.pulled(), 0)
    assert.ok(counted.cancelled())
  })

  it('an endless body without a length stops near the limit (Hono CVE-2026-44456, SvelteKit CVE-2026-40073: chunked)', async () => {
    const counted = countedBody(Infinity)
    const err = await refusal(readRaw(post({ 'content-type': 'application/octet-stream' }, counted.body), { limit: MiB }))
    assert.equal(err.status, 413)
    await settled()
    assert.ok(counted.pulled() <= MiB + 64 * KiB, `pulled ${counted.pulled()}`)
    assert.ok(counted.cancelled())
  })

  it('Content-Length with Transfer-Encoding: the bytes are counted, not the header (Hono CVE-2025-59139)', async () => {
    const counted = countedBody(4 * MiB)
    const err = await refusal(readRaw(post({ 'content-type': 'application/octet-stream', 'content-length': '10', 'transfer-encoding': 'chunked' }, counted.body), { limit: 64 * KiB }))
    assert.ok(err.status === 413 || err.status === 400, String(err.status))
    await settled()
    assert.ok(counted.pulled() <= 128 * KiB, `pulled ${counted.pulled()}`)
  })

  it('an understated Content-Length never lets more than the limit in (Hono CVE-2026-54288)', async () => {
    const counted = countedBody(MiB)
    const err = await refusal(readText(post({ 'content-type': 'text/plain', 'content-length': '100' }, counted.body), { limit: 200 }))
    assert.equal(err.status, 413)
    assert.equal(err.type, 'entity.too.large')
    await settled()
    assert.ok(counted.pulled() <= 32 * KiB, `pulled ${counted.pulled()}`)
    assert.ok(counted.cancelled())
  })

  it('a Content-Length that is not digits is 400 request.length.invalid, read no further (Hono bodyLimit skipped it)', async () => {
    for (const length of ['abc', '10, 10', '-1', '1e3', '0x10']) {
      const counted = countedBody(MiB)
      const err = await refusal(readJson(post({ 'content-type': 'application/json', 'content-length': length }, counted.body)))
      assert.deepEqual([err.status, err.type, err.message], [400, 'request.length.invalid', 'invalid content-length'], length)
      await settled()
      assert.equal(counted.pulled(), 0, length)
      assert.ok(counted.cancelled(), length)
    }
  })

  it('a gzip bomb stops near the limit of inflated bytes', async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(100 * MiB))
    const err = await refusal(readJson(post({ 'content-type': 'application/json', 'content-encoding': 'gzip' }, bomb)))
    assert.equal(err.status, 413)
    assert.equal(err.type, 'entity.too.large')
  })

  it('multipart: a boundary over 70 characters is refused at once, nothing read (Remix GHSA-hpwp-7w8r-373j)', async () => {
    const counted = countedBody(MiB)
    const err = await refusal(readMultipart(post({ 'content-type': 'multipart/form-data; boundary=' + 'b'.repeat(71) }, counted.body)))
    assert.equal(err.status, 400)
    await settled()
    assert.equal(counted.pulled(), 0)
    assert.ok(counted.cancelled())
  })

  it('multipart: a file streams to disk, and a file over fileSizeLimit leaves no file and no descriptor', async (t) => {
    const directory = mkdtempSync(path.join(os.tmpdir(), 'bodykit-web-'))
    t.after(() => { rmSync(directory, { recursive: true, force: true }) })
    const form = new FormData()
    form.append('name', 'report')
    form.append('file', new Blob([Buffer.alloc(3 * MiB, 0x62)]), 'report.bin')
    const result = await readMultipart(new Request('http://127.0.0.1/upload', { method: 'POST', body: form }), { files: { storage: 'disk', directory, fileSizeLimit: '4mb' }, limit: '8mb' }) as { fields: unknown, files: Array<{ size: number, path: string }> }
    assert.deepEqual(result.fields, { name: 'report' })
    assert.equal(result.files[0].size, 3 * MiB)
    assert.deepEqual(readdirSync(directory).length, 1)
    rmSync(result.files[0].path)
    const baseline = openFds()
    const err = await refusal(readMultipart(new Request('http://127.0.0.1/upload', { method: 'POST', body: form }), { files: { storage: 'disk', directory, fileSizeLimit: '1mb' }, limit: '8mb' }))
    assert.equal(err.status, 413)
    await settled()
    assert.deepEqual(readdirSync(directory), [])
    // At most the baseline: a descriptor open when it was taken (another read's, Node's own) may close since.
    const fds = await settleFds(baseline)
    assert.ok(fds <= baseline, `descriptors back to baseline (${fds} > ${baseline})`)
  })

  it('a Request whose body was used is already read; one of another type keeps its body unread', async () => {
    const used = post({ 'content-type': 'application/json' }, '{"a":1}')
    await used.text()
    assert.equal(await readJson(used), undefined)
    const other = post({ 'content-type': 'text/csv' }, 'a,b')
    assert.equal(await readJson(other), undefined)
    assert.equal(await other.text(), 'a,b')
    assert.equal(await readJson(new Request('http://127.0.0.1/', { method: 'GET', headers: { 'content-type': 'application/json' } })), undefined)
  })

  it('a Request without a body whose headers declare one is an empty body, as from a Node request (Bun: Content-Length: 0)', async () => {
    const empty = (headers: Record<string, string>): Request => new Request('http://127.0.0.1/', { method: 'POST', headers })
    assert.deepEqual(await readJson(empty({ 'content-type': 'application/json', 'content-length': '0' })), {})
    assert.equal(await readText(empty({ 'content-type': 'text/plain', 'content-length': '0' })), '')
    const short = await refusal(readJson(empty({ 'content-type': 'application/json', 'content-length': '5' })))
    assert.deepEqual([short.status, short.type], [400, 'request.size.invalid'])
    // Without a length, a Request without a body has nothing to read.
    assert.equal(await readJson(empty({ 'content-type': 'application/json' })), undefined)
  })

  it('a body another reader holds is theirs: nothing read, nothing cancelled, whichever way it would be read', async () => {
    const form = '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b--\r\n'
    const cases: Array<[string, (request: Request) => Promise<unknown>, Record<string, string>, string | Uint8Array]> = [
      ['json, read whole', readJson, { 'content-type': 'application/json' }, '{"a":1}'],
      ['json, gzip (streamed)', readJson, { 'content-type': 'application/json', 'content-encoding': 'gzip' }, zlib.gzipSync('{"a":1}')],
      ['multipart (streamed)', readMultipart, { 'content-type': 'multipart/form-data; boundary=b' }, form]
    ]
    for (const [name, read, headers, body] of cases) {
      const held = post(headers, body)
      const reader = (held.body as ReadableStream<Uint8Array>).getReader()
      assert.equal(await read(held), undefined, name)
      // The holder still reads the whole body: bodykit neither read nor cancelled it.
      const chunks: Uint8Array[] = []
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) chunks.push(chunk.value)
      assert.deepEqual(Buffer.concat(chunks), Buffer.from(body), name)
    }
    const cancelled = post({ 'content-type': 'application/json' }, '{"a":1}')
    await (cancelled.body as ReadableStream<Uint8Array>).cancel()
    assert.equal(await readJson(cancelled), undefined)
  })

  it('a held body is still refused for what its headers say, and left to its holder', async () => {
    const held = post({ 'content-type': 'application/json; charset=koi8-r' }, '{"a":1}')
    const reader = (held.body as ReadableStream<Uint8Array>).getReader()
    const err = await refusal(readJson(held))
    assert.deepEqual([err.status, err.type], [415, 'charset.unsupported'])
    await settled()
    assert.equal(Buffer.from((await reader.read()).value as Uint8Array).toString(), '{"a":1}')
  })
})
