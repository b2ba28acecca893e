// One reading however a body arrives: forms busboy alone never finished, or read differently depending on the split,
// answered once and alike by every reader; and the form reading itself, drawn bodies whole, in pieces and a byte at a
// time, against the reader it replaced (busboy with the hooks that made it read one way however split: oracle/).
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { after, describe, it } from 'node:test'
import busboy from 'busboy'
import fc from 'fast-check'
import bodykit from '../../src/index'
import multer from '../../src/multer'
import { startFormReading, type ReadingConfig } from '../../src/multipart/form-reading'
import { NODE_BYTES } from '../../src/multipart/node-bytes'
import { WEB_BYTES } from '../../src/web/bytes'
import { readMultipart as webReadMultipart } from '../../src/web'
import { feedBusboy, readAlikeHoweverSplit } from './oracle/busboy-feed'

type Delivery = 'whole' | 'bytes' | 'chunked'
const DELIVERIES: Delivery[] = ['whole', 'bytes', 'chunked']

/**
 * Found by coverage-guided fuzzing: a closing delimiter that is not the last in the first piece busboy reads, then a
 * file part. busboy 1.6 read the part, then waited for good on a file it could never end (multer 2.5 hangs with it,
 * but for a body that comes a byte at a time, which it reads as an empty form).
 */
const NEVER_ENDED = Buffer.from('\r\n--X--\r\n--X\r\n--X\r\nContent-Disposition:form-data;name="e";filename="t"\r\ne:\r\n\r\nf', 'latin1')
/**
 * Found by fuzzing: a delimiter inside a file part's header block (busboy reads on in the block), then the form's
 * closing `--` right after the block. busboy opened the file after that delimiter and never ended it (multer hangs).
 */
const FILE_BEFORE_CLOSE = Buffer.from('\r\n--X\r\nContent-Disposition:form-data;name="f";filename="t"\r\n--X\r\nC:\r\n\r\n--', 'latin1')
/** The same kind of block, then a line break busboy reads as a second header block and refuses, with the file open. */
const HEADER_AFTER_FILE = Buffer.from('--X\r\nContent-Disposition:form-data;name="f";filename="1"\r\ne:\r\n--X\r\n\r\n\r\n\0', 'latin1')
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

/** readMultipart of the body sent in this delivery, files in memory; the form it resolves with (a form is expected). */
async function readInMemory (body: Buffer, delivery: Delivery): Promise<NonNullable<Awaited<ReturnType<typeof bodykit.readMultipart>>>> {
  const req = fakeRequest(body, delivery)
  const read = bodykit.readMultipart(req as never, { files: { storage: 'memory' } })
  send(req, body, delivery)
  const form = await read
  assert.ok(form !== undefined, delivery)
  return form
}

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-stall-'))
after(() => { fs.rmSync(directory, { recursive: true, force: true }) })

describe('a form busboy alone never finished', () => {
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
      const form = await readInMemory(NEVER_ENDED, delivery)
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

  it('a file whose header block held its delimiter, then the closing --: one empty file, whatever the split, in both builds', async () => {
    const webForm = await webReadMultipart(new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=X' }, body: FILE_BEFORE_CLOSE }), { files: true })
    assert.ok(webForm !== undefined)
    assert.deepEqual(webForm.files.map(({ fieldName, originalName, size }) => ({ fieldName, originalName, size })), [{ fieldName: 'f', originalName: 't', size: 0 }])
    for (const delivery of DELIVERIES) {
      const form = await readInMemory(FILE_BEFORE_CLOSE, delivery)
      assert.deepEqual(form.files.map(({ fieldName, originalName, size }) => ({ fieldName, originalName, size })), [{ fieldName: 'f', originalName: 't', size: 0 }], delivery)
      for (const upload of [multer().any(), multer({ dest: directory }).any(), bodykit.multipart({ files: { storage: 'disk', directory } })]) {
        assert.deepEqual(await answer(upload as never, FILE_BEFORE_CLOSE, delivery), { calls: 1, status: undefined, type: undefined, message: undefined, body: {} }, delivery)
      }
    }
  })

  it('a second header block after a file\'s: malformed, the open file ended, whatever the split, in both builds', async () => {
    await assert.rejects(webReadMultipart(new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=X' }, body: HEADER_AFTER_FILE }), { files: true }), { type: 'multipart.header.malformed' })
    // A folder of its own: the uploads above succeed, and their files stay (the app's to move or remove).
    const uploads = fs.mkdtempSync(path.join(directory, 'malformed-'))
    const malformed = { calls: 1, status: 400, type: 'multipart.header.malformed', message: 'malformed part header', body: null }
    for (const delivery of DELIVERIES) {
      for (const storage of ['memory', 'disk'] as const) {
        assert.deepEqual(await answer(bodykit.multipart({ files: { storage, directory: uploads } }) as never, HEADER_AFTER_FILE, delivery), malformed, `${storage}, ${delivery}`)
      }
      for (const upload of [multer().any(), multer({ dest: uploads }).any()]) {
        const seen = await answer(upload as never, HEADER_AFTER_FILE, delivery)
        assert.deepEqual([seen.calls, seen.message], [1, 'Malformed part header'], delivery)
      }
    }
    assert.deepEqual(fs.readdirSync(uploads), [])
  })
})

describe('an empty body, however it arrives', () => {
  /** A chunked request-like stream whose body is the given chunks (none, or one empty chunk). */
  const chunkedOf = (chunks: Buffer[]): Readable & { headers: Record<string, string>, method: string } =>
    Object.assign(Readable.from(chunks), { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=X', 'transfer-encoding': 'chunked' } })
  const outcomeOf = (middleware: (req: never, res: never, next: (err?: unknown) => void) => void, chunks: Buffer[]): Promise<unknown> => new Promise((resolve) => {
    const req = chunkedOf(chunks)
    middleware(req as never, {} as never, (err?: unknown) => {
      resolve(err === undefined ? { body: JSON.parse(JSON.stringify((req as { body?: unknown }).body ?? null)) } : { message: (err as Error).message })
    })
  })

  it('multipart(): an empty form whether no chunk or an empty one arrives (found by fuzzing: an empty chunk was a form cut short)', async () => {
    for (const chunks of [[], [Buffer.alloc(0)], [Buffer.alloc(0), Buffer.alloc(0)]]) {
      assert.deepEqual(await outcomeOf(bodykit.multipart() as never, chunks), { body: {} }, `${chunks.length} empty chunks`)
    }
  })

  it('bodykit/multer: multer\'s "Unexpected end of form" whether no chunk or an empty one arrives', async () => {
    for (const chunks of [[], [Buffer.alloc(0)]]) {
      assert.deepEqual(await outcomeOf(multer().any() as never, chunks), { message: 'Unexpected end of form' }, `${chunks.length} empty chunks`)
    }
  })
})

describe('parts after the closing delimiter', () => {
  it('multipart(): ignored (an epilogue), whatever the split', async () => {
    const middleware = bodykit.multipart()
    for (const delivery of DELIVERIES) {
      assert.deepEqual(await answer(middleware, PART_AFTER_CLOSE, delivery), { calls: 1, status: undefined, type: undefined, message: undefined, body: {} }, delivery)
    }
  })
})

/**
 * Found by coverage-guided fuzzing: a delimiter with one `\r` before the next (`--X\r\r\n--X`). busboy loses the
 * second delimiter when the `\r` comes in the same call as it (the body in one piece), and reads it when not.
 */
const LOST_DELIMITER = Buffer.from('--X\r\r\n--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X--\r\n', 'latin1')
/**
 * Found by coverage-guided fuzzing: a delimiter inside a part's header block. busboy's header parser says it read a
 * byte more than it was given when a header value ends its bytes, and busboy then reads the byte after them.
 */
const DELIMITER_IN_HEADER = Buffer.from('--X\r\nContent-Disposition: form-data; na\r\n--X--\r\n\r\n\r\n\xfe\r\n', 'latin1')

type Limits = Record<string, number | undefined> & { fieldSize?: number, fileSize?: number, parts?: number, files?: number, fields?: number }

/** What the reader before bodykit's own (busboy with the hooks) reported for a body given in these pieces: fields, files with their bytes, the first error. */
function busboyReading (pieces: Buffer[], limits: Limits = {}, alike = true): Promise<string[]> {
  return new Promise((resolve) => {
    const seen: string[] = []
    const parser = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=X' }, limits })
    if (alike) readAlikeHoweverSplit(parser)
    let done = false
    const finish = (last: string): void => {
      if (done) return
      done = true
      seen.push(last)
      resolve(seen)
    }
    // What busboy reports after its first error is not read (the part reader stops there): not compared either.
    parser.on('field', (name: string, value: string, info: { valueTruncated: boolean }) => { if (!done) seen.push(`field ${JSON.stringify(name)}=${JSON.stringify(value)}${info.valueTruncated ? ' (truncated)' : ''}`) })
    parser.on('file', (name: string, stream: Readable & { truncated?: boolean }, info: { filename?: string }) => {
      const chunks: Buffer[] = []
      if (done) {
        stream.resume()
        return
      }
      const entry = seen.length
      seen.push('')
      stream.on('data', (chunk: Buffer) => { chunks.push(chunk) })
      stream.on('error', () => {})
      stream.on('end', () => { if (!done) seen[entry] = `file ${JSON.stringify(name)} ${JSON.stringify(info.filename)}=${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}${stream.truncated === true ? ' (truncated)' : ''}` })
    })
    for (const limit of ['partsLimit', 'filesLimit', 'fieldsLimit']) parser.on(limit, () => { if (!done) seen.push(limit) })
    parser.on('error', (err: Error) => { finish('error: ' + err.message) })
    parser.on('close', () => { finish('close') })
    const source = new PassThrough()
    feedBusboy(parser, source, [], () => done, { fault: (thrown) => { finish('fault: ' + String(thrown)) }, stalled: () => { finish('stalled') } })
    for (const piece of pieces) source.write(piece)
    source.end()
  })
}

/** What the form reading reports for a body given in these pieces, in the oracle's words, with a build's byte tools. */
function formReading (pieces: Uint8Array[], limits: Limits = {}, tools = NODE_BYTES): string[] {
  const seen: string[] = []
  let done = false
  const note = (entry: string): void => { if (!done) seen.push(entry) }
  const config: ReadingConfig = { limits }
  const form = startFormReading('X', config, {
    field (name, value, info) { note(`field ${JSON.stringify(name)}=${JSON.stringify(value)}${info.valueTruncated ? ' (truncated)' : ''}`) },
    file (name, info) {
      const entry = seen.length
      note('')
      const chunks: Uint8Array[] = []
      let truncated = false
      return {
        data (bytes, start, end) { chunks.push(bytes.slice(start, end)) },
        limit () { truncated = true },
        end () { if (!done) seen[entry] = `file ${JSON.stringify(name)} ${JSON.stringify(info.filename)}=${JSON.stringify(Buffer.concat(chunks).toString('latin1'))}${truncated ? ' (truncated)' : ''}` }
      }
    },
    countLimit (limit) { note(limit + 'Limit') },
    unreadableFileName (name) { note('unreadable ' + String(name)) },
    malformed () {
      note('error: Malformed part header')
      done = true
    }
  }, tools)
  for (const piece of pieces) form.write(piece)
  if (!done) note(form.end() ? 'close' : 'error: Unexpected end of form')
  return seen
}

const piecesAt = (body: Buffer, cuts: number[]): Buffer[] => {
  const points = [...new Set(cuts.map((cut) => cut % (body.length + 1)))].sort((a, b) => a - b)
  return [0, ...points].map((start, i) => body.subarray(start, [...points, body.length][i]))
}
const bytesOf = (body: Buffer): Buffer[] => Array.from(body, (byte) => Buffer.from([byte]))

describe('delimiters busboy alone read by the split', () => {
  for (const [name, body] of [['a lost delimiter', LOST_DELIMITER], ['a delimiter inside a header block', DELIMITER_IN_HEADER]] as const) {
    it(`${name}: the form reading reads it as busboy with the hooks did, the same for every two-piece split and a byte at a time`, async () => {
      const whole = await busboyReading([body])
      assert.deepEqual(formReading([body]), whole, 'whole')
      assert.deepEqual(formReading([body], {}, WEB_BYTES), whole, 'whole, with the Web build\'s tools')
      for (let cut = 1; cut < body.length; cut++) assert.deepEqual(formReading(piecesAt(body, [cut])), whole, `cut at ${cut}`)
      assert.deepEqual(formReading(bytesOf(body)), whole, 'a byte at a time')
    })

    for (const [label, make] of [['multipart()', () => bodykit.multipart({ files: { storage: 'memory' } })], ['bodykit/multer', () => multer().any()]] as const) {
      it(`${name}: ${label} answers once, the same whatever the split`, async () => {
        const answers = []
        for (const delivery of DELIVERIES) answers.push(await answer(make() as never, body, delivery))
        for (const seen of answers) assert.equal(seen.calls, 1)
        assert.deepEqual(answers[1], answers[0], 'a byte at a time against whole')
        assert.deepEqual(answers[2], answers[0], 'chunked against whole')
      })
    }
  }

  // Bodies made of the pieces that confuse a delimiter search: delimiters with and without their line break, lone
  // CR, LF and dashes, part headers cut anywhere, and data; with small limits, so that each is met mid-piece.
  const token = fc.constantFrom('--X', '\r\n--X', '--X--', '\r\n', '\r', '\n', '-', '--', 'a', '\xfe', ':', ' ', '"',
    'Content-Disposition: form-data; name="f"', 'Content-Disposition: form-data; name="g"; filename="t.txt"', '; na', 'Content-Type: text/plain',
    '\r\n\r\n', 'data', 'x'.repeat(40))
  const bodyArb = fc.array(token, { maxLength: 24 }).map((tokens) => Buffer.from(tokens.join(''), 'latin1'))
  const limitsArb = fc.record({ fieldSize: fc.constantFrom(undefined, 1, 3, 64), fileSize: fc.constantFrom(undefined, 1, 3, 64), parts: fc.constantFrom(undefined, 1, 2, 3), files: fc.constantFrom(undefined, 1, 2), fields: fc.constantFrom(undefined, 1, 2) }, { requiredKeys: [] })

  it('the form reading reads drawn bodies and limits as busboy with the hooks did, whole, in drawn pieces and a byte at a time, with either build\'s tools', async () => {
    await fc.assert(fc.asyncProperty(bodyArb, limitsArb, fc.array(fc.nat(), { minLength: 1, maxLength: 6 }), async (body, drawn, cuts) => {
      const limits = Object.fromEntries(Object.entries(drawn).filter(([, value]) => value !== undefined)) as Limits
      const whole = await busboyReading([body], limits)
      assert.deepEqual(formReading([body], limits), whole, 'whole')
      assert.deepEqual(formReading(piecesAt(body, cuts), limits), whole, 'in pieces')
      assert.deepEqual(formReading(bytesOf(body), limits), whole, 'a byte at a time')
      assert.deepEqual(formReading(piecesAt(body, cuts).map((piece) => new Uint8Array(piece)), limits, WEB_BYTES), whole, 'in pieces, the Web build\'s tools')
    }), { numRuns: 1000 })
  })
})
