// User callbacks that throw, reject, call back twice or never (fileFilter, a storage engine's _handleFile and _removeFile, verify, a JSON reviver, a schema): the fault becomes next(err) once, the read stops, its files are removed, nothing reaches the process.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { IncomingMessage } from 'node:http'
import { Writable, pipeline } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import type { StandardSchemaV1 } from '../../src/options'
import {
  CLOSE_DELIMITER, MULTIPART_TYPE, SECOND_CALL_WINDOW_MS, assertNone, connect, eventually, fdsBackTo, fieldPart, filePart, folderEngine,
  listFolder, makeFolder, openFds, requestHead, seededBytes, serve, settledWithin, sleep, summarize, trackUnlinks, watchProcess, within,
  type ErrorLike, type Middleware, type Next, type ServedRequest
} from './harness'

const watch = watchProcess(before, after)
const folders: string[] = []
after(() => { for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true }) })

type Engine = multer.StorageEngine
type FileFilter = NonNullable<multer.Options['fileFilter']>
type MulterFile = Parameters<Engine['_handleFile']>[1]

/** A form: a field, a first file (stored before the fault), a second file (where the user code misbehaves). */
function uploadForm (): Buffer {
  return Buffer.concat([fieldPart('name', 'user code'), filePart('first', 'first.bin', seededBytes(3000, 11)), filePart('second', 'second.bin', seededBytes(3000, 12)), CLOSE_DELIMITER])
}

/** The same form with files large enough (over 64 KiB in all) to be read as a stream rather than whole. */
function largeUploadForm (): Buffer {
  return Buffer.concat([fieldPart('name', 'user code'), filePart('first', 'first.bin', seededBytes(50_000, 11)), filePart('second', 'second.bin', seededBytes(50_000, 12)), CLOSE_DELIMITER])
}

interface Case {
  /** The middleware, given a fresh upload folder. */
  make: (folder: string) => Middleware
  /** The request's Content-Type and body (sent whole, with its Content-Length). */
  contentType: string
  body: Buffer
  /** For user code that never calls back: the client goes away once this holds (the read must end then). */
  leaveWhen?: (served: ServedRequest) => boolean
  /** What next(err) must have been given: the violations, empty when it is right. */
  expect: (err: unknown) => string[]
  /** Whether the upload folder must be empty when next is called (files removed before next(err)). */
  emptyAtNext?: boolean
}

/** An error that is the one thrown (the same object), with the status an error handler answers. */
function expectThrown (thrown: unknown, status: number): (err: unknown) => string[] {
  return (err) => {
    const out: string[] = []
    if (err !== thrown) out.push(`next got ${summarize(err)}, not the error thrown`)
    else if (((err as ErrorLike).status ?? 500) !== status) out.push(`status ${(err as ErrorLike).status ?? '(none: 500)'}, not ${status}`)
    return out
  }
}

/** Any error an error handler answers (the client went away, or one of these errors). */
function expectError (...allowed: unknown[]): (err: unknown) => string[] {
  return (err) => {
    if (err === undefined || err === null) return ['next called without an error']
    if (allowed.length > 0 && !allowed.includes(err) && (err as ErrorLike).type !== 'request.aborted') return [`next got ${summarize(err)}`]
    return []
  }
}

/** Sends one request to `mw` over real HTTP and checks what the fault left: next once, the expected error, no file, no descriptor, no uncaught. */
async function runCase (c: Case): Promise<void> {
  const mark = watch.mark()
  const folder = makeFolder('user')
  folders.push(folder)
  const unlinks = trackUnlinks(folder)
  const inner = c.make(folder)
  /** What was on disk, or still being removed, when next was first called. */
  let atNext: { files: number, unlinking: number } | null = null
  const mw: Middleware = (req, res, next) => inner(req, res, (err) => {
    atNext ??= { files: listFolder(folder).length, unlinking: unlinks.pending() }
    next(err)
  })
  const served = await serve(mw, { folder })
  const fds = openFds()
  const violations: string[] = []
  try {
    const client = await connect(served.port, Buffer.concat([requestHead({ 'Content-Type': c.contentType, 'Content-Length': String(c.body.length) }), c.body]))
    const request = await served.arrived(0)
    if (c.leaveWhen !== undefined) {
      const leave = c.leaveWhen
      if (!(await eventually(() => leave(request)))) violations.push('the user code was never reached (test setup)')
      client.socket.destroy()
    }
    if (request.thrown !== undefined) violations.push(`the middleware threw ${summarize(request.thrown)}`)
    if (!(await settledWithin(request.state))) violations.push('next was never called')
    await sleep(SECOND_CALL_WINDOW_MS)
    if (request.state.calls > 1) violations.push(`next called ${request.state.calls} times`)
    if (request.state.calls > 0) violations.push(...c.expect(request.state.err))
    const seen = atNext as { files: number, unlinking: number } | null
    if (c.emptyAtNext === true && seen !== null && (seen.files > 0 || seen.unlinking > 0)) {
      violations.push(`files not yet removed when next was called: ${seen.files} in the upload folder, ${seen.unlinking} unlinks not done`)
    }
    if (!(await eventually(() => listFolder(folder).length === 0))) violations.push(`files left in the upload folder: ${listFolder(folder).length}`)
    await within(client.closed)
    client.socket.destroy()
    const now = await fdsBackTo(fds)
    if (now > fds) violations.push(`descriptors: ${now} open, ${fds} before`)
  } finally {
    unlinks.restore()
    await served.close()
  }
  for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
  assertNone(violations, 'violations')
}

/** The requests whose misbehaving user code was called (multer gives fileFilter and the engine the request). */
const reached = new WeakSet<object>()
/** The client goes away once the user code that never answers was called (these forms are small: all of the body is in by then). */
const leaveOnceReached = (served: ServedRequest): boolean => reached.has(served.req)

const STORAGES = ['memory', 'disk', 'custom'] as const

/** The storage engine of a kind, for a folder. */
function engineOf (storage: typeof STORAGES[number], folder: string): Engine {
  return storage === 'memory' ? multer.memoryStorage() : storage === 'disk' ? multer.diskStorage({ destination: folder }) : folderEngine(folder)
}

/** A multer middleware (`any()`) whose fileFilter misbehaves on the second file. */
function withFilter (storage: typeof STORAGES[number], onSecond: FileFilter): (folder: string) => Middleware {
  return (folder) => multer({
    storage: engineOf(storage, folder),
    fileFilter: (req, file, callback) => {
      if (file.fieldname !== 'second') return callback(null, true)
      reached.add(req)
      onSecond(req, file, callback)
    }
  }).any() as unknown as Middleware
}

describe('bodykit/multer fileFilter misbehaving on the second file (the first is stored, then removed)', () => {
  for (const storage of STORAGES) {
    it(`${storage} storage: a fileFilter that throws gives next(the error thrown), 500`, async () => {
      const thrown = new Error('fileFilter threw')
      await runCase({ make: withFilter(storage, () => { throw thrown }), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(thrown, 500), emptyAtNext: true })
    })

    it(`${storage} storage: a fileFilter that calls back with an error gives next(that error)`, async () => {
      const given = Object.assign(new Error('refused by fileFilter'), { status: 415 })
      await runCase({ make: withFilter(storage, (_req, _file, callback) => { callback(given) }), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(given, 415), emptyAtNext: true })
    })

    it(`${storage} storage: a fileFilter that calls back twice (accept, accept / refuse, accept / error, accept) counts its first answer`, async () => {
      const given = new Error('first answer: an error')
      for (const [first, second, expect] of [
        [() => [null, true], () => [null, true], (err: unknown) => err === undefined ? [] : [`accepted twice: ${summarize(err)}`]],
        [() => [null, false], () => [null, true], (err: unknown) => err === undefined ? [] : [`refused then accepted: ${summarize(err)}`]],
        [() => [given], () => [null, true], expectThrown(given, 500)]
      ] as const) {
        await runCase({
          make: withFilter(storage, (_req, _file, callback) => {
            (callback as (...args: unknown[]) => void)(...first())
            ;(callback as (...args: unknown[]) => void)(...second())
          }),
          contentType: MULTIPART_TYPE,
          body: uploadForm(),
          expect
        })
      }
    })

    it(`${storage} storage: a fileFilter that never calls back: the client going away ends the read, next once, files removed`, async () => {
      await runCase({ make: withFilter(storage, () => {}), contentType: MULTIPART_TYPE, body: uploadForm(), leaveWhen: leaveOnceReached, expect: expectError() })
    })
  }
})

/** The user's engine: the first file stored by `folderEngine`, the second handled by `onSecond`. */
function withEngine (onSecond: (folder: string, base: Engine) => Engine['_handleFile'], removeFile?: (folder: string, base: Engine) => Engine['_removeFile']): (folder: string) => Middleware {
  return (folder) => {
    const base = folderEngine(folder)
    const second = onSecond(folder, base)
    const engine: Engine = {
      _handleFile: (req, file, callback) => {
        if (file.fieldname !== 'second') return base._handleFile(req, file, callback)
        reached.add(req)
        second(req, file, callback)
      },
      _removeFile: removeFile === undefined ? base._removeFile : removeFile(folder, base)
    }
    return multer({ storage: engine }).any() as unknown as Middleware
  }
}

/** Reads the file's stream to its end, then `then`. */
function drain (file: MulterFile, then: () => void): void {
  file.stream.on('data', () => {})
  file.stream.once('end', then)
}

describe('a custom storage engine\'s _handleFile misbehaving on the second file', () => {
  it('throws synchronously: next(the error thrown), 500, the first file removed', async () => {
    const thrown = new Error('_handleFile threw')
    await runCase({ make: withEngine(() => () => { throw thrown }), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(thrown, 500), emptyAtNext: true })
  })

  for (const [size, form] of [['small form (read whole)', uploadForm], ['large form (streamed)', largeUploadForm]] as const) {
    it(`throws later, from inside a listener of file.stream, ${size}: next(the error thrown), 500, the first file removed`, async () => {
      const thrown = new Error('thrown from a data listener')
      await runCase({ make: withEngine(() => (_req, file) => { file.stream.on('data', () => { throw thrown }) }), contentType: MULTIPART_TYPE, body: form(), expect: expectThrown(thrown, 500), emptyAtNext: true })
    })
  }

  it('calls back twice (info, then info again / an error): the first answer counts, next once', async () => {
    await runCase({
      make: withEngine(() => (_req, file, callback) => { drain(file, () => { callback(null, { size: 1 }); callback(null, { size: 2 }) }) }),
      contentType: MULTIPART_TYPE, body: uploadForm(), expect: (err) => err === undefined ? [] : [`next got ${summarize(err)}`]
    })
    await runCase({
      make: withEngine(() => (_req, file, callback) => { drain(file, () => { callback(null, { size: 1 }); callback(new Error('second answer')) }) }),
      contentType: MULTIPART_TYPE, body: uploadForm(), expect: (err) => err === undefined ? [] : [`next got ${summarize(err)}`]
    })
  })

  it('calls back with an error: next(that error), the first file removed', async () => {
    const given = new Error('storage full')
    await runCase({ make: withEngine(() => (_req, file, callback) => { drain(file, () => { callback(given) }) }), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(given, 500), emptyAtNext: true })
  })

  it('never calls back (reads its stream to the end): the client going away ends the read, next once, files removed', async () => {
    await runCase({ make: withEngine(() => (_req, file) => { drain(file, () => {}) }), contentType: MULTIPART_TYPE, body: uploadForm(), leaveWhen: leaveOnceReached, expect: expectError() })
  })

  it('pipes file.stream into a slow sink with stream.pipeline; the request fails once the file\'s bytes all arrived: the engine\'s pipeline ends', async () => {
    const mark = watch.mark()
    const folder = makeFolder('user')
    folders.push(folder)
    /** The sink's held write callbacks (a disk or network that has not answered yet), and the pipeline's outcome. */
    const held: Array<() => void> = []
    let pipelineDone: unknown = 'not yet'
    const engine: Engine = {
      _handleFile (req, file, callback) {
        reached.add(req)
        const sink = new Writable({ highWaterMark: 1, write (_chunk, _encoding, done) { held.push(() => { done() }) } })
        pipeline(file.stream, sink, (err) => {
          pipelineDone = err ?? null
          callback(err ?? null, { size: 0 })
        })
      },
      _removeFile (_req, _file, callback) { callback(null) }
    }
    const served = await serve(multer({ storage: engine }).single('first') as unknown as Middleware, { folder })
    const violations: string[] = []
    try {
      const data = seededBytes(3000, 13)
      const head = requestHead({ 'Content-Type': MULTIPART_TYPE, 'Content-Length': '100000' })
      const opening = filePart('first', 'first.bin', data)
      // The file's bytes, then (once the engine holds them) its closing CRLF and the next part's start: the file's stream ends while its sink still holds the bytes.
      const client = await connect(served.port, Buffer.concat([head, opening.subarray(0, opening.length - 2)]))
      const request = await served.arrived(0)
      if (!(await eventually(() => held.length > 0))) violations.push('the sink never got the file\'s bytes (test setup)')
      // The closing CRLF and the whole next delimiter line: the reader ends the file's stream there.
      const next = fieldPart('after', 'x').subarray(0, 50)
      client.socket.write(Buffer.concat([opening.subarray(opening.length - 2), next]))
      await eventually(() => request.req.socket.bytesRead >= head.length + opening.length + next.length)
      client.socket.destroy()
      if (!(await settledWithin(request.state))) violations.push('next was never called')
      // The sink answers at last: a pipeline whose source ended or failed now ends.
      for (const done of held.splice(0)) done()
      if (!(await eventually(() => pipelineDone !== 'not yet'))) violations.push('the engine\'s pipeline never ended: file.stream was destroyed after it pushed its end, without an error, so pipeline() never ends the sink (an open descriptor and a partial file for a disk engine)')
      await sleep(SECOND_CALL_WINDOW_MS)
      if (request.state.calls > 1) violations.push(`next called ${request.state.calls} times`)
    } finally {
      await served.close()
    }
    for (const line of watch.since(mark)) violations.push(`uncaught: ${line}`)
    assertNone(violations, 'violations')
  })
})

describe('a custom storage engine\'s _removeFile misbehaving (fileFilter refuses the second file with an error, so the first is removed)', () => {
  const refusal = new Error('second file refused')
  const refusing: FileFilter = (_req, file, callback) => {
    if (file.fieldname === 'second') callback(refusal)
    else callback(null, true)
  }
  /** Removes the file for real (so the folder check holds), then misbehaves: at once (`now`) or once the unlink is done. */
  const removing = (then: (req: IncomingMessage, callback: (err: Error | null) => void) => void, now = false) => (): Engine['_removeFile'] => (req, file, callback) => {
    reached.add(req)
    if (now) {
      fs.rmSync(file.path, { force: true })
      then(req, callback)
      return
    }
    fs.unlink(file.path, () => { then(req, callback) })
  }
  const make = (misbehave: ReturnType<typeof removing>) => (folder: string): Middleware => {
    const base = folderEngine(folder)
    return multer({ storage: { _handleFile: base._handleFile, _removeFile: misbehave() }, fileFilter: refusing }).any() as unknown as Middleware
  }

  it('throws: next(the upload\'s error) once, no uncaught exception', async () => {
    const thrown = new Error('_removeFile threw')
    await runCase({ make: make(removing(() => { throw thrown }, true)), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectError(refusal, thrown) })
  })

  it('calls back twice: next(the upload\'s error) once', async () => {
    await runCase({ make: make(removing((_req, callback) => { callback(null); callback(null) })), contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(refusal, 500) })
  })

  it('calls back with an error: next(the upload\'s error), its storageErrors listing the removal\'s', async () => {
    const removal = new Error('could not remove')
    await runCase({
      make: make(removing((_req, callback) => { callback(removal) })),
      contentType: MULTIPART_TYPE,
      body: uploadForm(),
      expect: (err) => {
        const out = expectThrown(refusal, 500)(err)
        const listed = (err as ErrorLike | undefined)?.storageErrors
        if (!Array.isArray(listed) || !listed.includes(removal)) out.push(`storageErrors ${JSON.stringify(listed?.map(String))} do not list the removal's error`)
        return out
      }
    })
  })

  // A removal is waited for (the files are gone before next is called, which the advisories' tests pin), also when
  // the client has left meanwhile: one that never calls back holds its request, as a middleware that never calls next.
  it('calls back only after the client went away: next once, after it', async () => {
    const late = removing((_req, callback) => { setTimeout(() => { callback(null) }, 200) })
    await runCase({ make: make(late), contentType: MULTIPART_TYPE, body: uploadForm(), leaveWhen: leaveOnceReached, expect: expectError(refusal) })
  })
})

type Entry = typeof bodykit | typeof legacy
const ENTRIES: Array<[string, Entry]> = [['default', bodykit], ['legacy', legacy]]
const PARSERS: Array<{ name: 'json' | 'text' | 'raw' | 'urlencoded', type: string, body: string }> = [
  { name: 'json', type: 'application/json', body: '{"a":1}' },
  { name: 'text', type: 'text/plain', body: 'hello' },
  { name: 'raw', type: 'application/octet-stream', body: 'bytes' },
  { name: 'urlencoded', type: 'application/x-www-form-urlencoded', body: 'a=1' }
]

describe('verify, a JSON reviver and a schema that throw or reject', () => {
  for (const [entryName, entry] of ENTRIES) {
    for (const parser of PARSERS) {
      it(`${entryName} ${parser.name}(): a verify that throws gives next(the error thrown), 403 as body-parser (or the status it carries)`, async () => {
        for (const [thrown, status] of [[new Error('verify says no'), 403], [Object.assign(new Error('verify: unauthorised'), { status: 401 }), 401]] as const) {
          const factory = entry[parser.name] as (options: object) => unknown
          const mw = (): Middleware => factory({ verify: () => { throw thrown } }) as Middleware
          await runCase({ make: mw, contentType: parser.type, body: Buffer.from(parser.body), expect: expectThrown(thrown, status) })
        }
      })
    }

    it(`${entryName} json(): a reviver that throws gives next(the error thrown), 400 as body-parser`, async () => {
      const thrown = new Error('reviver threw')
      await runCase({ make: () => entry.json({ reviver: () => { throw thrown } }) as unknown as Middleware, contentType: 'application/json', body: Buffer.from('{"a":1}'), expect: expectThrown(thrown, 400) })
    })
  }

  /** A Standard Schema (an object with `'~standard'`, version 1) whose validate misbehaves. */
  const schemaThat = (validate: () => unknown): StandardSchemaV1 => ({ '~standard': { version: 1, vendor: 'faults', validate: validate as StandardSchemaV1.Props['validate'] } })
  const misbehaviours: Array<[string, (thrown: Error) => () => unknown]> = [
    ['throws', (thrown) => () => { throw thrown }],
    ['rejects', (thrown) => () => Promise.reject(thrown)]
  ]
  for (const [how, validate] of misbehaviours) {
    for (const [entryName, entry] of ENTRIES) {
      it(`${entryName} json(): a schema that ${how} gives next(the error thrown), 500 (or the status it carries)`, async () => {
        for (const [thrown, status] of [[new Error('schema ' + how), 500], [Object.assign(new Error('schema ' + how + ' with a status'), { status: 422 }), 422]] as const) {
          await runCase({ make: () => entry.json({ schema: schemaThat(validate(thrown)) }) as unknown as Middleware, contentType: 'application/json', body: Buffer.from('{"a":1}'), expect: expectThrown(thrown, status) })
        }
      })
    }

    it(`multipart() to disk: a schema that ${how} gives next(the error thrown), 500, the stored files removed before next`, async () => {
      const thrown = new Error('schema ' + how)
      await runCase({
        make: (directory) => bodykit.multipart({ files: { storage: 'disk', directory }, schema: schemaThat(validate(thrown)) }) as unknown as Middleware,
        contentType: MULTIPART_TYPE, body: uploadForm(), expect: expectThrown(thrown, 500), emptyAtNext: true
      })
    })

    it(`readJson(): a schema that ${how} rejects with the error thrown, 500`, async () => {
      const thrown = new Error('schema ' + how)
      const mw: Middleware = (req, res, next: Next) => {
        bodykit.readJson(req, { res, schema: schemaThat(validate(thrown)) }).then(() => { next() }, (err: unknown) => { next(err) })
      }
      await runCase({ make: () => mw, contentType: 'application/json', body: Buffer.from('{"a":1}'), expect: expectThrown(thrown, 500) })
    })
  }

  it('the schema helper is a Standard Schema bodykit accepts', () => {
    assert.doesNotThrow(() => bodykit.json({ schema: schemaThat(() => ({ value: 1 })) }))
  })
})
