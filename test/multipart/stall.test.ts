// Forms busboy alone never finishes, or reads differently depending on the split: every reader answers them once, the same way however they arrive.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough, type Readable } from 'node:stream'
import { after, describe, it } from 'node:test'
import busboy from 'busboy'
import bodykit from '../../src/index'
import multer from '../../src/multer'
import { endAtClosingDelimiter, feedBusboy } from '../../src/multipart/busboy-feed'

type Delivery = 'whole' | 'bytes' | 'chunked'
const DELIVERIES: Delivery[] = ['whole', 'bytes', 'chunked']

/**
 * Found by coverage-guided fuzzing: a closing delimiter that is not the last in the first piece busboy reads, then a
 * file part. busboy 1.6 reads the part, then waits for good on a file it can never end (multer 2.5 hangs with it,
 * but for a body that comes a byte at a time, which it reads as an empty form).
 */
const NEVER_ENDED = Buffer.from('\r\n--X--\r\n--X\r\n--X\r\nContent-Disposition:form-data;name="e";filename="t"\r\ne:\r\n\r\nf', 'latin1')
/** A field after the closing delimiter: busboy reads it only when it comes in the delimiter's own piece. */
const PART_AFTER_CLOSE = Buffer.from('--X--\r\n--X\r\n--X\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--X--\r\n', 'latin1')

function fakeRequest (body: Buffer, delivery: Delivery): PassThrough & { headers: Record<string, string>, method: string } {
  const req = new PassThrough() as PassThrough & { headers: Record<string, string>, method: string }
  req.headers = delivery === 'chunked'
    ? { 'content-type': 'multipart/form-data; boundary=X', 'transfer-encoding': 'chunked' }
    : { 'content-type': 'multipart/form-data; boundary=X', 'content-length': String(body.length) }
  req.method = 'POST'
  return req
}

function send (req: PassThrough, body: Buffer, delivery: Delivery): void {
  if (delivery === 'bytes') {
    for (const byte of body) req.write(Buffer.from([byte]))
    req.end()
  } else req.end(body)
}

interface Answer { calls: number, status?: number, type?: string, message?: string, body?: unknown }

/** Runs a middleware on the body; resolves once `next` was called and the event loop had a turn to call it again. */
function answer (middleware: (req: never, res: never, next: (err?: unknown) => void) => void, body: Buffer, delivery: Delivery): Promise<Answer> {
  return new Promise((resolve) => {
    const req = fakeRequest(body, delivery)
    const seen: Answer = { calls: 0 }
    middleware(req as never, {} as never, (err?: unknown) => {
      seen.calls++
      if (seen.calls > 1) return
      const error = err as { status?: number, type?: string, message?: string } | undefined
      Object.assign(seen, { status: error?.status, type: error?.type, message: error?.message, body: JSON.parse(JSON.stringify((req as { body?: unknown }).body ?? null)) })
      setTimeout(() => { resolve(seen) }, 20)
    })
    send(req, body, delivery)
  })
}

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-stall-'))
after(() => { fs.rmSync(directory, { recursive: true, force: true }) })

describe('a form busboy never finishes', () => {
  it('pins the busboy internals the hook relies on', () => {
    assert.equal(endAtClosingDelimiter(busboy({ headers: { 'content-type': 'multipart/form-data; boundary=X' } })), true)
  })

  for (const storage of ['memory', 'disk'] as const) {
    it(`multipart() (${storage}): an empty form, once, whatever the split`, async () => {
      const middleware = bodykit.multipart({ files: { storage, directory } })
      for (const delivery of DELIVERIES) {
        assert.deepEqual(await answer(middleware, NEVER_ENDED, delivery), { calls: 1, status: undefined, type: undefined, message: undefined, body: {} }, delivery)
      }
      assert.deepEqual(fs.readdirSync(directory), [])
    })
  }

  it('readMultipart: an empty form, whatever the split', async () => {
    for (const delivery of DELIVERIES) {
      const req = fakeRequest(NEVER_ENDED, delivery)
      const read = bodykit.readMultipart(req as never, { files: { storage: 'memory' } })
      send(req, NEVER_ENDED, delivery)
      const form = await read
      assert.ok(form !== undefined, delivery)
      assert.deepEqual({ fields: form.fields, files: form.files }, { fields: {}, files: [] }, delivery)
    }
  })

  for (const storage of ['memory', 'disk'] as const) {
    it(`bodykit/multer (${storage}): an empty form, once, whatever the split (multer hangs, but for a byte at a time)`, async () => {
      const upload = storage === 'memory' ? multer() : multer({ dest: directory })
      for (const delivery of DELIVERIES) {
        assert.deepEqual(await answer(upload.any(), NEVER_ENDED, delivery), { calls: 1, status: undefined, type: undefined, message: undefined, body: {} }, delivery)
      }
      assert.deepEqual(fs.readdirSync(directory), [])
    })
  }

  it('busboy alone, fed by the feed, is stopped as stalled once it has read every byte (the guard under the hook)', async () => {
    const parser = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=X' } })
    const files: Readable[] = []
    parser.on('file', (_name: string, stream: Readable) => {
      files.push(stream)
      stream.on('error', () => {})
      stream.resume()
    })
    parser.on('error', () => {})
    const source = new PassThrough()
    const outcome = await new Promise<string>((resolve) => {
      feedBusboy(parser, source, [], () => false, { fault: (thrown) => { resolve('fault: ' + String(thrown)) }, stalled: () => { resolve('stalled') } })
      source.end(NEVER_ENDED)
    })
    assert.equal(outcome, 'stalled')
    assert.equal(files.length, 1, 'busboy began the file it then waited on')
  })

  it('a throw from what busboy calls is the feed\'s fault, not an uncaught exception', async () => {
    const parser = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=X' } })
    parser.on('field', () => { throw new Error('listener threw') })
    const source = new PassThrough()
    const outcome = await new Promise<string>((resolve) => {
      feedBusboy(parser, source, [], () => false, { fault: (thrown) => { resolve('fault: ' + (thrown as Error).message) }, stalled: () => { resolve('stalled') } })
      source.end(Buffer.from('--X\r\nContent-Disposition: form-data; name="a"\r\n\r\nv\r\n--X--\r\n'))
    })
    assert.equal(outcome, 'fault: listener threw')
  })
})

describe('parts after the closing delimiter', () => {
  it('multipart(): ignored (an epilogue), whatever the split', async () => {
    const middleware = bodykit.multipart()
    for (const delivery of DELIVERIES) {
      assert.deepEqual(await answer(middleware, PART_AFTER_CLOSE, delivery), { calls: 1, status: undefined, type: undefined, message: undefined, body: {} }, delivery)
    }
  })

  it('busboy alone reads them only in the closing delimiter\'s own piece (why the hook exists)', async () => {
    const read = (pieces: Buffer[]): Promise<string[]> => new Promise((resolve) => {
      const fields: string[] = []
      const parser = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=X' } })
      parser.on('field', (name: string) => { fields.push(name) })
      parser.on('close', () => { resolve(fields) })
      for (const piece of pieces) parser.write(piece)
      parser.end()
    })
    assert.deepEqual(await read([PART_AFTER_CLOSE]), ['a'])
    assert.deepEqual(await read([PART_AFTER_CLOSE.subarray(0, 5), PART_AFTER_CLOSE.subarray(5)]), [])
  })
})
