// Issue 45, "One body, one answer at the limit": a body's answer is its first error in byte order, where going past
// `limit` (or a file past its size limit) is an error at the first byte beyond it. These are the examples,
// each delivered every way it can arrive; each must get the one answer the rule gives.
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { describe, it } from 'node:test'
import { deliveriesOf, describeAnswer, multerAnswer, multerMiddleware, readerAnswer, type Delivery } from './deliveries'
import type { Answer } from '../fuzz/targets/harness'
import { readMultipart as webRead } from '../../src/web'

/** The deliveries whose answers differ from `expected`, one line each. */
function wrongOnes (answers: Array<[Delivery, Answer]>, expected: (delivery: Delivery) => Partial<NonNullable<Answer['error']>>): string[] {
  const wrong: string[] = []
  for (const [delivery, answer] of answers) {
    const want = expected(delivery)
    const got = answer.error ?? {}
    if (Object.entries(want).some(([key, value]) => (got as Record<string, unknown>)[key] !== value)) {
      wrong.push(`${delivery.name}: ${describeAnswer(answer)}, want ${JSON.stringify(want)}`)
    }
  }
  return wrong
}

describe('issue 45: one body, one answer at the limit', () => {
  describe('example 1: readMultipart, limit 100, a malformed part header in the first 100 of 101 bytes', () => {
    const contentType = 'multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW'
    const body = Buffer.from('------WebKitFormBoundary7MA4YWxkTrZu0gW\r\nCtent-Disposition\u00ea\u00ea\u00ea\u00ea\u00ea\u00ea: form-data; name="a"\r\n\r\n1\r\n------We\n', 'latin1')
    const options = { files: true, limit: 100 }
    // The header name's first 0xEA (not a token character) is where busboy finds the header malformed.
    const damageAt = body.indexOf(0xea)

    it('is the body of the issue: 101 bytes, damaged before byte 100', () => {
      assert.equal(body.length, 101)
      assert.ok(damageAt < options.limit, `damage at byte ${damageAt}`)
    })

    it('answers 400 multipart.header.malformed in every delivery without Content-Length (Node stream and Web Request, whole, in pieces, a byte at a time)', async () => {
      // The drawn-looking splits: before the damage, right after it, just before the limit, at it.
      const splits = [[50], [damageAt + 1], [99], [100], [20, 60, 95]]
      const answers: Array<[Delivery, Answer]> = []
      for (const points of splits) {
        for (const delivery of deliveriesOf(body, points)) {
          if (delivery.length) continue
          // whole and a byte at a time do not depend on the split: once is enough.
          if (delivery.pieces !== 'split' && points !== splits[0]) continue
          const named = delivery.pieces === 'split' ? { ...delivery, name: `${delivery.name} at ${points.join(',')}` } : delivery
          answers.push([named, await readerAnswer('multipart', options, { 'content-type': contentType }, delivery)])
        }
      }
      const wrong = wrongOnes(answers, () => ({ status: 400, type: 'multipart.header.malformed' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })

    it('answers 413 before reading when Content-Length (101) is over the limit: the header comes first in byte order', async () => {
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(body, [50])) {
        if (!delivery.length) continue
        answers.push([delivery, await readerAnswer('multipart', options, { 'content-type': contentType }, delivery)])
      }
      const wrong = wrongOnes(answers, () => ({ status: 413, type: 'entity.too.large' }))
      assert.deepEqual(wrong, [], wrong.join('\n'))
    })
  })

  describe('example 2: the same bytes from a Web Request and from a Node stream', () => {
    // Found by test/limits/one-answer.property.test.ts: a gzip form of 102 bytes on the wire, limit 100, whose
    // deflate data is damaged at wire byte 47 (zlib: "invalid code -- missing end-of-block"), before the limit.
    // A byte at a time, a Node stream answers zlib's 400 and a Web Request's stream 413 (the reader's pieces come
    // faster than zlib's thread pool, and the wire count's 413 then hides zlib's error).
    const contentType = 'multipart/form-data; boundary=X'
    const body = Buffer.from('H4sIAAAAAAAAA0XMMQqAMAwAwD2QP5Tu0UUQFCd9gupBHKpGCGhaNIP+3tH1hiMKCH1SYzUa5M7pFpOkjdvTddIWLbZO48mdX6Z19q3b5eAfCnvM/8P4Zm6c8WNlPqIoAiJdIRAF', 'base64')
    const headers = { 'content-type': contentType, 'content-encoding': 'gzip' }
    const options = { limit: 100, files: { storage: 'memory' } }
    const damage = { status: 400, type: undefined, message: 'invalid code -- missing end-of-block' }

    it('is damaged before the limit, and inflates to no more than the limit before the damage', () => {
      assert.equal(body.length, 102)
      let firstError = -1
      for (let n = 1; n <= body.length && firstError === -1; n++) {
        try {
          zlib.gunzipSync(body.subarray(0, n), { finishFlush: zlib.constants.Z_SYNC_FLUSH })
        } catch (err) {
          assert.equal((err as Error).message, damage.message)
          firstError = n
        }
      }
      assert.equal(firstError, 47)
      assert.ok(zlib.gunzipSync(body.subarray(0, firstError - 1), { finishFlush: zlib.constants.Z_SYNC_FLUSH }).length <= options.limit)
    })

    it('answers zlib\'s 400 from a Node stream and from a Web Request alike, in every delivery without Content-Length', async () => {
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(body, [11, 20, 46, 47, 60])) {
        if (delivery.length) continue
        answers.push([delivery, await readerAnswer('multipart', options, headers, delivery)])
      }
      const wrong = wrongOnes(answers, () => damage)
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })
  })

  describe('example 3: bodykit/multer, fileSize 16, an async fileFilter that accepts, a form cut short after the file', () => {
    const contentType = 'multipart/form-data; boundary=------------------------d74496d66958873e'
    const body = Buffer.from('--------------------------d74496d66958873e\r\nContent-Disposition: form-data; name="file"; filename="fall2ack.txt"; filename*=U.F-8\'\'%multipart/mixedE2%82%AC%20rates.txt\r\n\r\nx\r\n---------------------L-----d93164d66958873e--\r\n', 'latin1')
    const limits = { fileSize: 16, files: 1 }

    it('is the body of the issue: the file\'s 17th byte comes before the end of the form', () => {
      assert.equal(body.length, 221)
      const dataStart = body.indexOf('\r\n\r\n') + 4
      // No delimiter follows: the file's data runs to the end of the body, which is where the form is cut short.
      assert.ok(body.length - dataStart > limits.fileSize, `${body.length - dataStart} bytes of file data`)
    })

    // bodykit/multer reads the part under its plain filename (RFC 6266 §4.3, a documented difference: multer's busboy
    // skips the part, and multer answers "Unexpected end of form"). The file is accepted, so the first error in byte
    // order is the file passing fileSize at its 17th byte: LIMIT_FILE_SIZE, before the end of the form at byte 221.
    it('answers 413 LIMIT_FILE_SIZE with Content-Length (whole-form path) and without (streaming path)', async () => {
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(body, [100, 180], ['node'])) {
        answers.push([delivery, await multerAnswer(multerMiddleware(limits), { 'content-type': contentType }, delivery)])
      }
      const wrong = wrongOnes(answers, () => ({ status: 413, type: 'MulterError:LIMIT_FILE_SIZE:file', message: 'File too large' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })

    // The same class without filename*: multer 2.5.0 itself answers LIMIT_FILE_SIZE for it, in every split.
    it('answers 413 LIMIT_FILE_SIZE for the same form with a plain filename, as multer 2.5.0 does', async () => {
      const plain = Buffer.from(body.toString('latin1').replace(/; filename\*=[^\r]*/, ''), 'latin1')
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(plain, [100, 140], ['node'])) {
        answers.push([delivery, await multerAnswer(multerMiddleware(limits), { 'content-type': contentType }, delivery)])
      }
      const wrong = wrongOnes(answers, () => ({ status: 413, type: 'MulterError:LIMIT_FILE_SIZE:file', message: 'File too large' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })
  })

  describe('a compressed json body past the limit on the wire, damaged in its first `limit` bytes', () => {
    // Incompressible text: its gzip is longer than the limit, so the wire passes it.
    const text = JSON.stringify({ words: Array.from({ length: 12 }, (_, i) => (i * 7919).toString(36) + 'qzx' + String.fromCharCode(97 + i)) })
    const intact = zlib.gzipSync(text)
    const limit = 40
    const damaged = Buffer.from(intact)
    damaged[3] = 0xe0 // FLG with reserved bits set: zlib refuses the gzip header at byte 3
    const headers = { 'content-type': 'application/json', 'content-encoding': 'gzip' }

    it('is past the limit on the wire', () => {
      assert.ok(intact.length > limit + 8, `${intact.length} bytes on the wire`)
    })

    it('answers zlib\'s 400 in every delivery without Content-Length (the damage comes before the wire\'s limit)', async () => {
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(damaged, [2, 4, limit - 1, limit + 1])) {
        if (!delivery.length) answers.push([delivery, await readerAnswer('json', { limit }, headers, delivery)])
      }
      const wrong = wrongOnes(answers, () => ({ status: 400, message: 'unknown header flags set' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })

    it('answers 413 in every delivery of the intact body, and with Content-Length for the damaged one', async () => {
      const answers: Array<[Delivery, Answer]> = []
      for (const delivery of deliveriesOf(intact, [2, 4, limit - 1, limit + 1])) answers.push([delivery, await readerAnswer('json', { limit }, headers, delivery)])
      for (const delivery of deliveriesOf(damaged, [limit - 1])) {
        if (delivery.length) answers.push([delivery, await readerAnswer('json', { limit }, headers, delivery)])
      }
      const wrong = wrongOnes(answers, () => ({ status: 413, type: 'entity.too.large' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
    })
  })

  describe('a gzip form whose one piece zlib fails in (a wrong checksum), a malformed part header in its output', () => {
    const form = '--X\r\nContent-Disposition form-data name=a\r\n\r\nvalue\r\n--X--\r\n'
    const body = zlib.gzipSync(form)
    body[body.length - 8] ^= 1 // the CRC: zlib fails at the end, in the write that holds the whole body
    const headers = { 'content-type': 'multipart/form-data; boundary=X', 'content-encoding': 'gzip' }
    const whole = (limit: number): Promise<Answer> => readerAnswer('multipart', { limit }, headers, deliveriesOf(body, [])[0])

    it('answers the part\'s error with a limit up to 256 KiB: what zlib dropped is inflated again and parsed first', async () => {
      assert.equal((await whole(100 * 1024)).error?.type, 'multipart.header.malformed')
      assert.equal((await whole(256 * 1024)).error?.type, 'multipart.header.malformed')
    })

    it('answers zlib\'s error above 256 KiB, where the body is not kept to inflate again (bounded work; body-parser\'s answer)', async () => {
      const answer = await whole(256 * 1024 + 1)
      assert.deepEqual([answer.error?.status, answer.error?.message], [400, 'incorrect data check'])
    })
  })

  describe('a malformed line in a header block the limit cuts, after a part the fast path read (found on the Web build)', () => {
    // The second part's block never ends before the limit: bodykit's streamed fast path held it whole, waiting for its
    // end, and answered 413; busboy finds the `;` (not a token character) malformed at byte 66.
    const body = Buffer.from('--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n2\r\n--X\r\nform-data; nam--X\r\n' + 'x'.repeat(100), 'latin1')
    const headers = { 'content-type': 'multipart/form-data; boundary=X' }
    const damageAt = body.indexOf(';', body.indexOf('--X', 10))

    it('answers 400 multipart.header.malformed in every delivery without Content-Length, from both builds', async () => {
      const options = { files: false, limit: 100 }
      assert.ok(damageAt < options.limit && body.length > options.limit, `damage at byte ${damageAt} of ${body.length}`)
      const answers: Array<[Delivery, Answer]> = []
      for (const points of [[30], [damageAt + 1], [99], [60, 80]]) {
        for (const delivery of deliveriesOf(body, points)) {
          if (delivery.length) continue
          answers.push([{ ...delivery, name: `${delivery.name} at ${points.join(',')}` }, await readerAnswer('multipart', options, headers, delivery)])
        }
      }
      const wrong = wrongOnes(answers, () => ({ status: 400, type: 'multipart.header.malformed' }))
      assert.deepEqual(wrong, [], 'delivery-dependent answers:\n' + wrong.join('\n'))
      const fromWeb = await webRead(new Request('http://127.0.0.1/', { method: 'POST', headers, body: new Blob([body]).stream(), duplex: 'half' } as RequestInit), options)
        .then(() => 'read', (err: { type?: unknown }) => err.type)
      assert.equal(fromWeb, 'multipart.header.malformed')
    })
  })
})
