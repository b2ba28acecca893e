// The fast path's own proof: small canonical forms read whole by readCanonicalForm must give what busboy gives
// for the same bytes streamed (limits at and around what the body needs, files on disk and in memory).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { readCanonicalForm } from '../../src/multipart/canonical-form'
import { endRequest, fakeRequest, fakeResponse, sleep, tick } from '../hostile/helpers'
import { limitsFor, multipartInput, readWithBusboy, toBody, type MultipartInput } from './model'

const RUNS = Number(process.env.MULTIPART_FUZZ_RUNS ?? 3000)
const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-canonical-'))
after(() => { fs.rmSync(directory, { recursive: true, force: true }) })

/** Mostly canonical forms: no preamble, epilogue or damage, CRLF; the rest as the fuzz model draws them. */
const input: fc.Arbitrary<MultipartInput> = fc.tuple(multipartInput, fc.boolean()).map(([drawn, canonical]) => canonical
  ? {
      ...drawn,
      // A boundary browsers would write: one the fast path takes unquoted.
      boundary: drawn.boundary.replace(/[^0-9a-zA-Z'+_.-]/g, '-'),
      preamble: Buffer.alloc(0),
      epilogue: Buffer.alloc(0),
      damage: 'none',
      lineBreak: '\r\n',
      gzip: false,
      // Parts as browsers write them: named, no charset, no filename*, a bare media type.
      parts: drawn.parts.filter((part) => part.kind !== 'bare').map((part) => part.kind === 'field'
        ? { ...part, name: part.name ?? 'unnamed', charset: null }
        : part.kind === 'file' ? { ...part, name: part.name ?? 'unnamed', extended: false, unreadable: null, type: part.type === 'text/plain; charset=utf-8' ? 'text/plain' : part.type } : part)
    }
  : { ...drawn, gzip: false })

interface Seen { status: number, type?: string, body?: unknown, files?: unknown }

/** One request through a middleware: whole (with a length) or streamed in pieces (chunked). */
async function send (middleware: ReturnType<typeof bodykit.multipart>, contentType: string, body: Buffer, whole: boolean): Promise<Seen> {
  const req = fakeRequest({ 'content-type': contentType, ...(whole ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' }) })
  let seen: Seen | undefined
  middleware(req, fakeResponse(req), (err?: unknown) => {
    const e = err as { status: number, type: string } | undefined
    const files = (req as { files?: Array<{ fieldName: string, originalName: string, mimeType: string, size: number, buffer?: Buffer, path?: string }> }).files
    seen = e !== undefined
      ? { status: e.status, type: e.type }
      : {
          status: 200,
          body: JSON.parse(JSON.stringify((req as { body?: unknown }).body)),
          files: files?.map((file) => {
            const bytes = file.buffer ?? fs.readFileSync(file.path as string)
            if (file.path !== undefined) fs.unlinkSync(file.path)
            return { fieldName: file.fieldName, originalName: file.originalName, mimeType: file.mimeType, size: file.size, bytes: bytes.toString('base64') }
          })
        }
  })
  if (whole) req.push(body)
  else for (let at = 0; at < body.length; at += 997) req.push(body.subarray(at, at + 997))
  endRequest(req)
  while (seen === undefined) await (sleep(1))
  await tick()
  return seen
}

describe('readCanonicalForm', () => {
  it('never throws: every prefix of a canonical form, each with any byte replaced by a delimiter character', () => {
    const boundary = 'z=,gG'
    const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="a"; filename="x.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--${boundary}\r\nContent-Disposition: form-data; name="b"\r\n\r\nv\r\n--${boundary}--\r\n`)
    let checked = 0
    for (let cut = 0; cut <= body.length; cut++) {
      const prefix = body.subarray(0, cut)
      const parts = readCanonicalForm(prefix, boundary)
      // Only the whole form (or it without its last CRLF) is canonical; a cut one goes to busboy.
      assert.equal(parts !== null, cut === 0 || cut === body.length || cut === body.length - 2, 'cut at ' + cut)
      for (let at = 0; at < cut; at++) {
        for (const byte of [0x0d, 0x0a, 0x2d, 0x22, 0x5c, 0x00, 0xff]) {
          const copy = Buffer.from(prefix)
          copy[at] = byte
          readCanonicalForm(copy, boundary)
          checked++
        }
      }
    }
    assert.ok(checked > 100_000)
  })
})

for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
  describe(`multipart fast path (${name} entry)`, () => {
    it('a canonical small form read whole gives what busboy gives it streamed', async () => {
      let canonical = 0
      await fc.assert(fc.asyncProperty(input, async (drawn) => {
        const body = toBody(drawn)
        // Unquoted where it can be, as browsers send it: only a plain `boundary=` may take the fast path.
        const contentType = /^[0-9a-zA-Z'+_.-]+$/.test(drawn.boundary)
          ? 'multipart/form-data; boundary=' + drawn.boundary
          : 'multipart/form-data; boundary="' + drawn.boundary + '"'
        const limits = limitsFor(drawn, body, await readWithBusboy(body, contentType, 10 * 1024 * 1024))
        const middleware = entry.multipart({
          limit: Math.max(limits.limit, 64 * 1024),
          partLimit: limits.partLimit,
          parameterLimit: limits.parameterLimit,
          fieldSizeLimit: limits.fieldSizeLimit,
          defaultCharset: drawn.defaultCharset,
          files: limits.files === null ? false : { ...limits.files, directory }
        })
        if (body.length <= 64 * 1024 && contentType.endsWith(drawn.boundary) && readCanonicalForm(body, drawn.boundary) !== null) canonical++
        const whole = await send(middleware, contentType, body, true)
        const streamed = await send(middleware, contentType, body, false)
        assert.deepEqual(whole, streamed)
        assert.deepEqual(fs.readdirSync(directory), [])
      }), { numRuns: RUNS })
      // The property must have exercised the fast path, not only its fallback.
      assert.ok(canonical > RUNS / 5, `only ${canonical} of ${RUNS} forms were canonical`)
      console.log(`multipart fast path (${name}): ${canonical} canonical forms of ${RUNS}`)
    })
  })
}
