// A compressed form gets one answer however fast zlib inflates it: a wire verdict (a wrong length, bytes past the limit) waits for what zlib still holds.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import bodykit from '../../src/index'
import multer from '../../src/multer'

/** A form whose first part header is malformed (it begins with a space): 20 bytes, 40 gzipped. */
const MALFORMED = Buffer.from('--X\r\n form-dat"\r\n\r\n1', 'latin1')
const GZIPPED = zlib.gzipSync(MALFORMED)
/** The pieces the fuzzer sent it in (found by the web target: a Request and a Node stream answered differently). */
const PIECES = [3, 2, 5, 1, 8, 12, 9]
/**
 * A gzipped form whose malformed part comes last, cut short (no trailer; 84 of 96 bytes): zlib inflated the last
 * piece with its finish flag, and so dropped the malformed part, when the body's end came before zlib got to it.
 */
const CUT_SHORT = zlib.gzipSync(Buffer.from('--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n' + 'v'.repeat(30) + '\r\n--X\r\n bad header\r\n\r\nx\r\n--X--\r\n', 'latin1')).subarray(0, 84)

type Pace = 'at once' | 'with pauses'
type Framing = { 'content-length': string } | { 'transfer-encoding': 'chunked' }

interface Answer { calls: number, status?: number, type?: string, code?: string, message?: string }

/** Sends the gzipped form to a middleware in its pieces, at once (zlib behind) or with pauses (zlib keeping up). */
function answer (middleware: (req: never, res: never, next: (err?: unknown) => void) => void, framing: Framing, pace: Pace,
  body = GZIPPED, pieces = PIECES): Promise<Answer> {
  return new Promise((resolve) => {
    const req = Object.assign(new PassThrough(), {
      method: 'POST',
      headers: { 'content-type': 'multipart/form-data; boundary=X', 'content-encoding': 'gzip', ...framing }
    })
    const seen: Answer = { calls: 0 }
    middleware(req as never, {} as never, (err?: unknown) => {
      seen.calls++
      if (seen.calls > 1) return
      const error = err as { status?: number, type?: string, code?: string, message?: string } | undefined
      Object.assign(seen, { status: error?.status, type: error?.type, code: error?.code, message: error?.message })
      setTimeout(() => { resolve(seen) }, 30)
    })
    void (async () => {
      let at = 0
      for (const size of pieces) {
        if (req.destroyed) return
        req.write(body.subarray(at, at += size))
        if (pace === 'with pauses') await new Promise((resolve) => setTimeout(resolve, 15))
      }
      req.end()
    })()
  })
}

const MIDDLEWARES = {
  'multipart()': () => bodykit.multipart(),
  'bodykit/multer': () => multer().any()
}

describe('a compressed form, however fast zlib inflates it', () => {
  assert.equal(GZIPPED.length, PIECES.reduce((sum, size) => sum + size, 0))

  it('wire bytes past the limit: the malformed part zlib still held comes first (multipart())', async () => {
    for (const pace of ['at once', 'with pauses'] as const) {
      const seen = await answer(bodykit.multipart({ limit: 32 }) as never, { 'transfer-encoding': 'chunked' }, pace)
      assert.deepEqual(seen, { calls: 1, status: 400, type: 'multipart.header.malformed', code: undefined, message: 'malformed part header' }, pace)
    }
  })

  // bodykit/multer's errors are multer's: busboy's message, no `type`.
  const MALFORMED_ANSWER = {
    'multipart()': { calls: 1, status: 400, type: 'multipart.header.malformed', message: 'malformed part header' },
    'bodykit/multer': { calls: 1, status: 400, type: undefined, message: 'Malformed part header' }
  }

  for (const [name, make] of Object.entries(MIDDLEWARES)) {
    it(`a body cut short: the malformed part zlib still held comes before zlib's complaint (${name})`, async () => {
      for (const pace of ['at once', 'with pauses'] as const) {
        const seen = await answer(make() as never, { 'transfer-encoding': 'chunked' }, pace, CUT_SHORT, [40, 30, 14])
        assert.deepEqual({ calls: seen.calls, status: seen.status, type: seen.type, message: seen.message }, MALFORMED_ANSWER[name as keyof typeof MALFORMED_ANSWER], pace)
      }
    })

    it(`a wrong Content-Length: the malformed part first, then never the length (${name})`, async () => {
      const answers = []
      for (const pace of ['at once', 'with pauses'] as const) answers.push(await answer(make() as never, { 'content-length': String(GZIPPED.length + 1) }, pace))
      assert.equal(answers[0].calls, 1)
      assert.equal(answers[0].status, 400)
      assert.notEqual(answers[0].type, 'request.size.invalid')
      assert.deepEqual(answers[1], answers[0])
    })
  }
})
