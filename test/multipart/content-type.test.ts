// Content-Types that content-type reads but busboy refuses: the same typed 400 as any invalid boundary, never busboy's bare error.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'

/** Found by fuzzing: each passes content-type's parser and the boundary check, and busboy says "Malformed content type". */
const REFUSED_BY_BUSBOY = ['multipart/form-data;boundary={', 'multipart/form-data;boundary={:', 'multipart/form-data; boundary=\t("""']

function request (contentType: string): PassThrough & { headers: Record<string, string>, method: string } {
  const req = new PassThrough() as PassThrough & { headers: Record<string, string>, method: string }
  req.headers = { 'content-type': contentType, 'content-length': '9' }
  req.method = 'POST'
  return req
}

describe('a multipart Content-Type busboy refuses', () => {
  for (const contentType of REFUSED_BY_BUSBOY) {
    it(`multipart(): ${JSON.stringify(contentType)} is 400 multipart.boundary.invalid, a bodykit error`, async () => {
      const req = request(contentType)
      const err = await new Promise<unknown>((resolve) => {
        bodykit.multipart()(req as never, {} as never, resolve)
        req.end('--X--\r\n\r\n')
      })
      assert.ok(bodykit.isBodyParserError(err))
      assert.equal(err.status, 400)
      assert.equal(err.type, 'multipart.boundary.invalid')
    })
    // compat(v1): body-parser 1's type-is reads none of them as multipart/form-data: the body is not read.
    it(`legacy multipart(): ${JSON.stringify(contentType)} is not read`, async () => {
      const req = request(contentType)
      const err = await new Promise<unknown>((resolve) => {
        legacy.multipart()(req as never, {} as never, resolve)
        req.end('--X--\r\n\r\n')
      })
      assert.equal(err, undefined)
      assert.deepEqual((req as { body?: unknown }).body, {})
    })
    it(`readMultipart: ${JSON.stringify(contentType)} rejects with multipart.boundary.invalid`, async () => {
      const req = request(contentType)
      const read = bodykit.readMultipart(req as never)
      req.end('--X--\r\n\r\n')
      await assert.rejects(read, (err: { type?: string }) => err.type === 'multipart.boundary.invalid')
    })
  }
})
