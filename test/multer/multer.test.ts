// bodykit/multer's API next to multer 2.x: module shape, option errors, MulterError, requests it skips, plain
// streams with headers (as multer's users test), async context, and Express 4 and 5's default error handler.
import assert from 'node:assert/strict'
import { AsyncLocalStorage } from 'node:async_hooks'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import { PassThrough } from 'node:stream'
import zlib from 'node:zlib'
import { describe, it, type TestContext } from 'node:test'
import express5 from 'express'
import express4 from 'express-4'
import realMulter from 'multer'
import bodykitMulter from '../../src/multer'
import { createMulterPolicy, type MulterSetup } from '../../src/multer/policy'
import { GuardedStream } from '../../src/multipart/guarded-stream'
import { runMiddleware, splitAt } from '../fuzz/targets/harness'
import { MiB, startServer } from '../hostile/helpers'

type Multer = typeof realMulter
type Next = (err?: unknown) => void
type Middleware = (req: http.IncomingMessage, res: http.ServerResponse | null, next: Next) => void

const LIBRARIES = [['multer', realMulter], ['bodykit/multer', bodykitMulter as unknown as Multer]] as const
const BOUNDARY = 'XyZboundary'
const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY

function form (...parts: Array<[name: string, value: string, filename?: string]>): Buffer {
  let text = ''
  for (const [name, value, filename] of parts) {
    text += '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="' + name + '"' +
      (filename === undefined ? '' : '; filename="' + filename + '"\r\nContent-Type: text/plain') + '\r\n\r\n' + value + '\r\n'
  }
  return Buffer.from(text + '--' + BOUNDARY + '--\r\n')
}

/** What the middleware did with a request, comparable across the two libraries. */
function describeOutcome (req: http.IncomingMessage, err: unknown): unknown {
  const request = req as typeof req & { body?: unknown, file?: unknown, files?: unknown }
  if (err !== undefined) {
    const error = err as Error & Record<string, unknown>
    return { error: { class: error.constructor.name, code: error.code, field: error.field, message: error.message } }
  }
  return JSON.parse(JSON.stringify({ body: request.body ?? '<none>', file: request.file ?? '<none>', files: request.files ?? '<none>' }, (key, value) =>
    key === 'path' || key === 'destination' || key === 'filename' ? typeof value : value))
}

/** One request through a middleware on a real server; resolves with the outcome `next` saw. */
async function outcomeOf (t: TestContext, middleware: Middleware, headers: http.OutgoingHttpHeaders, body: Buffer | null): Promise<unknown> {
  let seen!: (outcome: unknown) => void
  const outcome = new Promise((resolve) => { seen = resolve })
  const server = http.createServer((req, res) => {
    middleware(req, res, (err) => {
      seen(describeOutcome(req, err))
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.close() })
  const req = http.request({ port: (server.address() as { port: number }).port, host: '127.0.0.1', method: 'POST', headers, agent: false }, (res) => res.resume())
  req.on('error', () => {})
  req.end(body ?? undefined)
  return await outcome
}

describe('bodykit/multer: the module as multer has it', () => {
  it('exports a function with diskStorage, memoryStorage and MulterError', () => {
    assert.equal(typeof bodykitMulter, 'function')
    for (const key of ['diskStorage', 'memoryStorage', 'MulterError'] as const) assert.equal(typeof bodykitMulter[key], typeof realMulter[key])
    const upload = bodykitMulter()
    for (const method of ['single', 'array', 'fields', 'none', 'any'] as const) assert.equal(typeof upload[method], 'function')
    assert.equal(upload.single('f').name, 'multerMiddleware')
  })

  it('throws multer\'s TypeError for the same bad options', () => {
    const cases: unknown[] = ['x', null, 5, { limits: { fileSize: '1mb' } }, { limits: { files: NaN } }, { limits: { parts: true } },
      { limits: { fields: -1 } }, { limits: { fieldSize: 1.5 } }, { streamHandler: 5 }]
    for (const options of cases) {
      const expected = catchMessage(() => realMulter(options as never))
      assert.ok(expected !== null)
      assert.deepEqual(catchMessage(() => bodykitMulter(options as never)), expected, JSON.stringify(options))
    }
    assert.doesNotThrow(() => bodykitMulter({ limits: { fileSize: Infinity, files: 0, fields: undefined } }))
  })

  it('refuses a streamHandler at creation: the pipeline reads the request itself (docs/differences.md)', () => {
    assert.throws(() => bodykitMulter({ streamHandler: () => {} } as never), { name: 'TypeError', message: 'option streamHandler is not supported by bodykit/multer' })
  })

  it('makes MulterErrors as multer does, with a 4xx status that is not an own property', () => {
    const codes = ['LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT',
      'LIMIT_UNEXPECTED_FILE', 'MISSING_FIELD_NAME', 'LIMIT_FIELD_NESTING', 'LIMIT_FIELD_ARRAY_INDEX', 'STREAM_DESTROYED', 'INVALID_FIELD_NAME', 'NO_SUCH_CODE']
    for (const code of codes) {
      const expected = new (realMulter.MulterError as unknown as new (code: string, field: string, filename: string) => Error)(code, 'field', 'name.txt')
      const actual = new bodykitMulter.MulterError(code, 'field', 'name.txt')
      assert.deepEqual(Object.keys(actual), Object.keys(expected))
      assert.deepEqual({ ...actual }, { ...expected })
      assert.equal(actual.message, expected.message)
      assert.ok(actual instanceof Error && actual instanceof bodykitMulter.MulterError)
      assert.equal(actual.status, code.startsWith('LIMIT_') && !['LIMIT_UNEXPECTED_FILE', 'LIMIT_FIELD_NESTING', 'LIMIT_FIELD_ARRAY_INDEX'].includes(code) ? 413 : 400)
      assert.equal(Object.getOwnPropertyNames(actual).includes('status'), false)
    }
    assert.deepEqual(Object.keys(new bodykitMulter.MulterError('LIMIT_FILE_COUNT')), Object.keys(new realMulter.MulterError('LIMIT_FILE_COUNT')))
  })
})

function catchMessage (run: () => unknown): { name: string, message: string } | null {
  try {
    run()
    return null
  } catch (err) {
    return { name: (err as Error).name, message: (err as Error).message }
  }
}

describe('bodykit/multer: requests it reads and skips, as multer', () => {
  const requests: Array<[string, http.OutgoingHttpHeaders, Buffer | null]> = [
    ['a form with a field and a file', { 'content-type': FORM_TYPE }, form(['a', '1'], ['f', 'hello', 'h.txt'])],
    ['a chunked form', { 'content-type': FORM_TYPE, 'transfer-encoding': 'chunked' }, form(['a[b]', '1'], ['a[c][]', '2'])],
    ['JSON', { 'content-type': 'application/json' }, Buffer.from('{"a":1}')],
    ['no body', {}, null],
    ['multipart/mixed', { 'content-type': 'multipart/mixed; boundary=' + BOUNDARY }, form(['a', '1'])],
    ['no boundary', { 'content-type': 'multipart/form-data' }, form(['a', '1'])],
    ['an empty boundary', { 'content-type': 'multipart/form-data; boundary=' }, form(['a', '1'])],
    ['a Content-Type that does not parse', { 'content-type': 'multipart/form-data; boundary=a b' }, form(['a', '1'])],
    ['an empty body', { 'content-type': FORM_TYPE }, Buffer.alloc(0)],
    ['a body cut short', { 'content-type': FORM_TYPE }, form(['a', '1'], ['f', 'hello', 'h.txt']).subarray(0, 60)]
  ]
  for (const [what, headers, body] of requests) {
    it(what, async (t) => {
      const outcomes = []
      for (const [, library] of LIBRARIES) outcomes.push(await outcomeOf(t, library().single('f') as unknown as Middleware, headers, body))
      assert.deepEqual(outcomes[1], outcomes[0])
    })
  }

  it('reads a plain stream carrying headers, with no response (as multer\'s users test)', async () => {
    const body = form(['a', '1'], ['a', '2'], ['f', 'hello', 'h.txt'])
    const outcomes = []
    for (const [, library] of LIBRARIES) {
      const req = new PassThrough() as PassThrough & { headers: http.IncomingHttpHeaders, complete?: boolean }
      req.headers = { 'content-type': FORM_TYPE, 'content-length': String(body.length) }
      const outcome = new Promise((resolve) => {
        (library().single('f') as unknown as Middleware)(req as unknown as http.IncomingMessage, null, (err) => { resolve(describeOutcome(req as unknown as http.IncomingMessage, err)) })
      })
      req.end(body)
      outcomes.push(await outcome)
    }
    assert.deepEqual(outcomes[1], outcomes[0])
    assert.deepEqual((outcomes[1] as { body: unknown }).body, { a: ['1', '2'] })
  })

  it('passes on a request whose body something else read (multer waits for data that never comes) (docs/multer.md)', async (t) => {
    const upload = bodykitMulter().single('f') as unknown as Middleware
    const seen = await outcomeOf(t, (req, res, next) => {
      req.resume()
      req.on('end', () => { upload(req, res, next) })
    }, { 'content-type': FORM_TYPE }, form(['a', '1']))
    assert.deepEqual(seen, { body: '<none>', file: '<none>', files: '<none>' })
  })

  it('answers a second header block in a file part, with the file ended in it and none left on disk (multer waits for good) (docs/multer.md)', async (t) => {
    // A delimiter inside the file part's header block: busboy opens the file at the block's end, reads the CR LF
    // after it as another header block and refuses that, leaving the file's stream unended. Found by the fuzzer.
    const body = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="f"; filename="1"\r\ne:\r\n--${BOUNDARY}\r\n\r\n\r\n\0`, 'latin1')
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-header-after-file-'))
    t.after(() => { fs.rmSync(directory, { recursive: true, force: true }) })
    const malformed = { error: { class: 'Error', code: undefined, field: undefined, message: 'Malformed part header' } }
    for (const headers of [{ 'content-type': FORM_TYPE }, { 'content-type': FORM_TYPE, 'transfer-encoding': 'chunked' }]) {
      assert.deepEqual(await outcomeOf(t, bodykitMulter().any() as unknown as Middleware, headers, body), malformed)
      assert.deepEqual(await outcomeOf(t, bodykitMulter({ dest: directory }).any() as unknown as Middleware, headers, body), malformed)
    }
    assert.deepEqual(fs.readdirSync(directory), [])
    // multer 2.5.0 never calls next for it (the request would hang): a second or two of waiting shows it still.
    const req = new PassThrough() as PassThrough & { headers: http.IncomingHttpHeaders }
    req.headers = { 'content-type': FORM_TYPE, 'content-length': String(body.length) }
    let called = false
    ;(realMulter().any() as unknown as Middleware)(req as unknown as http.IncomingMessage, null, () => { called = true })
    req.end(body)
    await new Promise((resolve) => setTimeout(resolve, 1000))
    assert.equal(called, false, 'multer answered: the difference documented in docs/multer.md is gone')
  })

  it('inflates a gzip-encoded form (multer hands the compressed bytes to busboy) (docs/multer.md)', async (t) => {
    const body = zlib.gzipSync(form(['a[b]', '1'], ['f', 'hello', 'h.txt']))
    const ours = await outcomeOf(t, bodykitMulter().single('f') as unknown as Middleware, { 'content-type': FORM_TYPE, 'content-encoding': 'gzip' }, body)
    assert.deepEqual(ours, { body: { a: { b: '1' } }, file: { fieldname: 'f', originalname: 'h.txt', encoding: '7bit', mimetype: 'text/plain', buffer: { type: 'Buffer', data: [...Buffer.from('hello')] }, size: 5 }, files: '<none>' })
    const theirs = await outcomeOf(t, realMulter().single('f') as unknown as Middleware, { 'content-type': FORM_TYPE, 'content-encoding': 'gzip' }, body)
    assert.ok('error' in (theirs as object))
  })

  it('calls next in the caller\'s async context (AsyncLocalStorage), as multer does', async (t) => {
    const storage = new AsyncLocalStorage<string>()
    const upload = bodykitMulter().none() as unknown as Middleware
    const seen = await outcomeOf(t, (req, res, next) => {
      storage.run('request-42', () => { upload(req, res, () => { next(storage.getStore() === 'request-42' ? undefined : new Error('context lost')) }) })
    }, { 'content-type': FORM_TYPE }, form(['a', '1']))
    assert.deepEqual(seen, { body: { a: '1' }, file: '<none>', files: '<none>' })
  })

  it('passes a file of exactly fileSize and refuses one byte more, with an async fileFilter (multer CVE-2026-77063)', async (t) => {
    for (const [size, expected] of [[5, 'accepted'], [6, 'LIMIT_FILE_SIZE']] as const) {
      for (const [, library] of LIBRARIES) {
        const upload = library({ limits: { fileSize: 5 }, fileFilter: (_req, _file, callback) => { setImmediate(callback, null, true) } })
        const outcome = await outcomeOf(t, upload.single('f') as unknown as Middleware, { 'content-type': FORM_TYPE }, form(['f', 'x'.repeat(size), 'a.txt']))
        assert.equal((outcome as { error?: { code: string } }).error?.code ?? 'accepted', expected)
      }
    }
  })
})

describe('bodykit/multer behind Express 4 and 5: what the client receives', () => {
  for (const [major, express] of [['4', express4], ['5', express5]] as const) {
    it(`Express ${major}: the same JSON for a form, and a 4xx where multer's MulterError gives 500 (docs/differences.md)`, async (t) => {
      const answers: Array<Array<{ status: number, body: string }>> = []
      for (const [, library] of LIBRARIES) {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-multer-express-'))
        t.after(() => { fs.rmSync(dir, { recursive: true, force: true }) })
        const app = (express as unknown as () => express5.Express)()
        // Quiet: the default handler logs every error outside 'test'.
        app.set('env', 'test')
        const upload = library({ dest: dir, limits: { fileSize: 10 } })
        app.post('/one', upload.single('f') as unknown as express5.RequestHandler, (req, res) => {
          const request = req as typeof req & { file?: Record<string, unknown> }
          res.json({ body: req.body, file: { ...request.file, path: typeof request.file?.path, filename: typeof request.file?.filename, destination: typeof request.file?.destination } })
        })
        const server = app.listen(0, '127.0.0.1')
        await new Promise((resolve) => server.once('listening', resolve))
        t.after(() => { server.close() })
        const url = 'http://127.0.0.1:' + (server.address() as { port: number }).port + '/one'
        const post = async (body: Buffer): Promise<{ status: number, body: string }> => {
          const response = await fetch(url, { method: 'POST', headers: { 'content-type': FORM_TYPE, 'x-env': 'test' }, body })
          const text = await response.text()
          return { status: response.status, body: text.includes('{') ? text : text.split('\n')[0] }
        }
        answers.push([
          await post(form(['a[b]', '1'], ['f', 'small', 'a.txt'])),
          await post(form(['f', 'x'.repeat(11), 'big.txt'])),
          await post(form(['g', 'y', 'other.txt'])),
          await post(form(['a', '1']).subarray(0, 30))
        ])
      }
      const [multer, ours] = answers
      assert.deepEqual(ours[0], multer[0])
      assert.equal(multer[0].status, 200)
      assert.deepEqual(ours.slice(1).map((answer) => answer.status), [413, 400, 400])
      assert.deepEqual(multer.slice(1).map((answer) => answer.status), [500, 500, 500])
    })
  }
})

describe('bodykit/multer: a refused upload is read off within bounds (multer drains it all)', () => {
  it('ends a file at its fileSize limit: when the body then ends short, its engine finishes it and _removeFile removes it; multer\'s engine only gets the error (docs/multer.md)', async (t) => {
    const head = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\n\r\n'
    for (const [name, library] of LIBRARIES) {
      const events: string[] = []
      const storage = {
        _handleFile (_req: unknown, file: { stream: NodeJS.ReadableStream }, callback: (err: Error | null, info?: object) => void) {
          file.stream.on('data', () => {})
          file.stream.on('error', () => { events.push('stream error') })
          file.stream.on('end', () => { events.push('stream end'); setImmediate(callback, null, { custom: true }) })
        },
        _removeFile (_req: unknown, file: { fieldname: string }, callback: (err: Error | null) => void) {
          events.push('removed ' + file.fieldname)
          setImmediate(callback, null)
        }
      }
      const upload = library({ storage: storage as never, limits: { fileSize: 4 } }).single('f') as unknown as Middleware
      let seen!: (code: unknown) => void
      const outcome = new Promise((resolve) => { seen = resolve })
      const server = http.createServer((req, res) => {
        upload(req, res, (err) => {
          seen((err as { code?: string } | undefined)?.code)
          res.end()
        })
      })
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      t.after(() => { server.close() })
      // Chunked, no closing delimiter: the file passes its limit, and the body's end comes in a later read.
      const req = http.request({ port: (server.address() as { port: number }).port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': FORM_TYPE }, agent: false }, (res) => res.resume())
      req.on('error', () => {})
      req.write(head + 'twelve bytes')
      setTimeout(() => { req.end() }, 50)
      assert.equal(await outcome, 'LIMIT_FILE_SIZE', name)
      assert.deepEqual(events, name === 'multer' ? ['stream error'] : ['stream end', 'removed f'], name)
    }
  })

  it('answers LIMIT_FILE_SIZE early and reads at most the 64 MiB budget of a 512 MiB upload (docs/multer.md)', async () => {
    const server = await startServer(bodykitMulter({ limits: { fileSize: 1024 } }).single('f') as never)
    try {
      const size = 512 * MiB
      const head = Buffer.from('--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="f"; filename="big.bin"\r\n\r\n')
      const chunk = new Uint8Array(64 * 1024).fill(0x20)
      let sent = 0
      const stream = new ReadableStream<Uint8Array>({
        pull (controller) {
          if (sent >= size) return controller.close()
          const part = sent === 0 ? head : chunk.subarray(0, Math.min(chunk.length, size - sent))
          sent += part.length
          controller.enqueue(part)
        }
      })
      const url = 'http://127.0.0.1:' + server.port + '/'
      const answer = await fetch(url, { method: 'POST', body: stream, duplex: 'half', headers: { 'content-type': FORM_TYPE, 'content-length': String(size) } } as RequestInit)
      assert.equal(answer.status, 413)
      await answer.arrayBuffer()
      const outcome = await server.outcome(0)
      assert.equal(outcome.calls, 1)
      assert.equal((outcome.err as { code?: string } | undefined)?.code, 'LIMIT_FILE_SIZE')
      // Either side may close first; the server never reads past its read-off budget (and socket slack).
      await new Promise<void>((resolve) => {
        const poll = (): void => { if (outcome.bytesReadAtClose !== null) resolve(); else setImmediate(poll) }
        poll()
      })
      assert.ok((outcome.bytesReadAtClose as number) <= 64 * MiB + 4 * MiB, `the server read ${outcome.bytesReadAtClose} bytes`)
    } finally {
      await server.close()
    }
  })
})

/** A Node request as the harness delivers it: whole or in pieces, with Content-Length (read whole) or chunked. */
interface Delivery { name: string, headers: Record<string, string>, chunks: Buffer[] }

function deliveriesOf (body: Buffer, splits: number[]): Delivery[] {
  const cuts: Array<[string, Buffer[]]> = [['whole', [body]], ['split', splitAt(body, splits)], ['a byte at a time', splitAt(body, Array.from(body.keys()))]]
  const deliveries: Delivery[] = []
  for (const [pieces, chunks] of cuts) {
    deliveries.push({ name: pieces + ', Content-Length', headers: { 'content-type': FORM_TYPE, 'content-length': String(body.length) }, chunks })
    deliveries.push({ name: pieces + ', chunked', headers: { 'content-type': FORM_TYPE, 'transfer-encoding': 'chunked' }, chunks })
  }
  return deliveries
}

/** The error each delivery of `body` gives a middleware (class, code, field, message), or 'accepted'. */
async function errorsOf (middleware: () => Middleware, body: Buffer, splits: number[]): Promise<Record<string, unknown>> {
  const errors: Record<string, unknown> = {}
  for (const delivery of deliveriesOf(body, splits)) {
    const run = await runMiddleware(middleware() as never, { headers: delivery.headers, chunks: delivery.chunks }, delivery.name)
    errors[delivery.name] = run.err === undefined ? 'accepted' : (describeOutcome(run.req, run.err) as { error: unknown }).error
  }
  return errors
}

/** A fileFilter answering a turn later (`async`) or at once: a file whose name has an `e` is refused. */
function refuseE (async: boolean) {
  return (_req: unknown, file: { originalname: string }, callback: (err: Error | null, accept?: boolean) => void): void => {
    const answer = (): void => { if (file.originalname.includes('e')) callback(new Error('refused by filter')); else callback(null, true) }
    if (async) setImmediate(answer)
    else answer()
  }
}

const fileHead = (name: string, filename: string): string =>
  '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="' + name + '"; filename="' + filename + '"\r\nContent-Type: text/plain\r\n\r\n'

describe('bodykit/multer: an async fileFilter\'s verdict comes before a later error, however the body arrives (issue 45, docs/multer.md)', () => {
  it('a form cut short after a file over fileSize: LIMIT_FILE_SIZE in every delivery, as from multer 2.5.0 itself', async () => {
    // The file's 5th byte comes before the end of the form (no delimiter follows): its limit is the first error.
    const body = Buffer.from(fileHead('file', 'fall2ack.txt') + 'x'.repeat(60))
    const limits = { fileSize: 4 }
    const filter = (_req: unknown, _file: unknown, callback: (err: null, accept: boolean) => void): void => { setImmediate(callback, null, true) }
    const ours = await errorsOf(() => bodykitMulter({ limits, fileFilter: filter }).array('file') as unknown as Middleware, body, [40, 100])
    const theirs = await errorsOf(() => realMulter({ limits, fileFilter: filter }).array('file') as unknown as Middleware, body, [40, 100])
    assert.deepEqual(ours, theirs)
    for (const error of Object.values(ours)) assert.deepEqual(error, { class: 'MulterError', code: 'LIMIT_FILE_SIZE', field: 'file', message: 'File too large' })
  })

  it('an async fileFilter that refuses a file, in a form then cut short: the filter\'s error in every delivery, as multer\'s with the filter answering at once', async () => {
    const body = Buffer.from(fileHead('f', 'refused.txt') + 'data\r\n--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="a"\r\n\r\n1')
    const ours = await errorsOf(() => bodykitMulter({ fileFilter: refuseE(true) as never }).any() as unknown as Middleware, body, [30, 110])
    const theirs = await errorsOf(() => realMulter({ fileFilter: refuseE(false) as never }).any() as unknown as Middleware, body, [30, 110])
    assert.deepEqual(ours, theirs)
    for (const error of Object.values(ours)) assert.deepEqual(error, { class: 'Error', code: undefined, field: undefined, message: 'refused by filter' })
  })

  it('a file over fileSize, then a field over fieldSize and a nameless part (a canonical form, read whole): LIMIT_FILE_SIZE, as multer\'s with the filter answering at once', async () => {
    const body = form(['f', 'more than four', 'a.txt'], ['a', 'too long a value'], ['b', '2'])
    const nameless = Buffer.from('--' + BOUNDARY + '\r\nContent-Disposition: form-data\r\n\r\nv\r\n--' + BOUNDARY + '--\r\n')
    const withNameless = Buffer.concat([body.subarray(0, body.length - BOUNDARY.length - 6), nameless])
    for (const [what, payload] of [['field over fieldSize', body], ['and a nameless part', withNameless]] as const) {
      const limits = { fileSize: 4, fieldSize: 4 }
      const ours = await errorsOf(() => bodykitMulter({ limits, fileFilter: refuseE(true) as never }).any() as unknown as Middleware, payload, [60, 140])
      const theirs = await errorsOf(() => realMulter({ limits, fileFilter: refuseE(false) as never }).any() as unknown as Middleware, payload, [60, 140])
      assert.deepEqual(ours, theirs, what)
      for (const error of Object.values(ours)) assert.deepEqual(error, { class: 'MulterError', code: 'LIMIT_FILE_SIZE', field: 'f', message: 'File too large' }, what)
    }
  })

  it('two files whose filters answer in the reverse order, both refusing: the first file\'s error', async () => {
    const body = form(['f', 'one', 'one.txt'], ['f', 'two', 'two.txt'])
    const fileFilter = (): ((req: unknown, file: { originalname: string }, callback: (err: Error) => void) => void) => {
      let first: ((err: Error) => void) | null = null
      return (_req, file, callback) => {
        if (file.originalname === 'one.txt') {
          first = callback
          return
        }
        // The second file's refusal comes first in time; the first file's, once it is in.
        setImmediate(() => {
          callback(new Error('two refused'))
          setImmediate(() => { first?.(new Error('one refused')) })
        })
      }
    }
    const errors = await errorsOf(() => bodykitMulter({ fileFilter: fileFilter() as never }).any() as unknown as Middleware, body, [50])
    for (const [name, error] of Object.entries(errors)) assert.deepEqual(error, { class: 'Error', code: undefined, field: undefined, message: 'one refused' }, name)
  })

  it('stores no file accepted while a later error waits for its verdict', async () => {
    const stored: string[] = []
    const storage = {
      _handleFile (_req: unknown, file: { originalname: string, stream: NodeJS.ReadableStream }, callback: (err: Error | null, info?: object) => void) {
        stored.push(file.originalname)
        file.stream.resume()
        file.stream.on('end', () => { callback(null, {}) })
      },
      _removeFile (_req: unknown, _file: unknown, callback: (err: Error | null) => void) { callback(null) }
    }
    // The form's end is missing: the body has ended, and its error is known, while the filter is pending.
    const body = Buffer.from(fileHead('f', 'a.txt') + 'data\r\n')
    const acceptLater = (_req: unknown, _file: unknown, callback: (err: Error | null, accept?: boolean) => void): void => { setTimeout(() => { callback(null, true) }, 30) }
    const run = await runMiddleware(bodykitMulter({ storage: storage as never, fileFilter: acceptLater as never }).any() as never,
      { headers: { 'content-type': FORM_TYPE, 'content-length': String(body.length) }, chunks: [body] }, 'bodykit/multer')
    assert.equal((run.err as Error | undefined)?.message, 'Unexpected end of form')
    assert.deepEqual(stored, [])
  })

  it('calls whenJudged back once no fileFilter is pending, never synchronously', async () => {
    let answer: ((err: Error | null, accept?: boolean) => void) | null = null
    const setup: MulterSetup = {
      limits: undefined,
      preservePath: false,
      defParamCharset: 'latin1',
      defCharset: undefined,
      highWaterMark: undefined,
      fileHwm: undefined,
      storage: bodykitMulter.memoryStorage() as never,
      fileFilter: (_req, _file, callback) => { answer = callback },
      fileStrategy: 'ARRAY'
    }
    const req = Object.assign(new PassThrough(), { headers: { 'content-type': FORM_TYPE } })
    const outcome = new Promise<unknown>((resolve) => {
      const { collector } = createMulterPolicy(() => setup).begin(req as never, undefined, (err) => { resolve(err ?? 'accepted') })
      const calls: string[] = []
      collector.whenJudged(() => { calls.push('before any file') })
      assert.deepEqual([...calls], [], 'not synchronously')
      const file = new GuardedStream({ read () {} })
      collector.file('f', file, { filename: 'a.txt', encoding: '7bit', mimeType: 'text/plain' })
      file.push(Buffer.from('data'))
      file.push(null)
      collector.whenJudged(() => { calls.push('judged') })
      setImmediate(() => {
        assert.deepEqual([...calls], ['before any file'], 'not while the filter is pending')
        ;(answer as unknown as (err: Error | null, accept?: boolean) => void)(null, true)
        assert.deepEqual([...calls], ['before any file'], 'not from inside the filter\'s callback')
        process.nextTick(() => {
          assert.deepEqual([...calls], ['before any file', 'judged'])
          collector.end()
        })
      })
    })
    assert.equal(await outcome, 'accepted')
  })
})
