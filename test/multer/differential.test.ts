// bodykit/multer against multer 2.x: generated forms (valid and damaged, in pieces) with every API, storage,
// filter and limit sent to both over real sockets; req.body, the files, the error and what is left on disk must match.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import type { Readable } from 'node:stream'
import { after, before, describe, it } from 'node:test'
import { isDeepStrictEqual } from 'node:util'
import fc from 'fast-check'
import realMulter from 'multer'
import bodykitMulter from '../../src/multer'
import { multipartInput, readWithBusboy, toBody, toPieces, UNREADABLE_MARKER, type MultipartInput } from '../multipart/model'

const RUNS = Number(process.env.MULTER_FUZZ_RUNS ?? 3000)

type Multer = typeof realMulter
type Next = (err?: unknown) => void
type Middleware = (req: http.IncomingMessage, res: http.ServerResponse, next: Next) => void

/** Field names as multer's users write them: plain, nested, arrays, and names append-field keeps literally. */
const NAMES = ['f', 'g', 'a', 'a[]', 'a[b]', 'a[b][]', 'a[0]', 'a[1][c]', 'a[b][c]', 'x[', '[y]', 'a[]x', 'items[2]', 'items[x]', '__proto__', 'constructor', 'n%22q', 'a%0Ab']

export interface Scenario {
  api: 'single' | 'array' | 'fields' | 'none' | 'any'
  maxCount: number | undefined
  storage: 'memory' | 'disk' | 'custom'
  /** `sync-error-e` is not drawn: it is `async-error-e` answering at once, multer's byte-order answer (issue 45). */
  filter: 'none' | 'sync-skip-x' | 'async-accept' | 'async-error-e' | 'sync-error-e'
  limits: Record<string, number> | undefined
  limitsAsFunction: boolean
  preservePath: boolean
  defParamCharset: 'latin1' | 'utf8' | undefined
}

const limitsArb = fc.option(fc.record({
  fieldNameSize: fc.integer({ min: 0, max: 12 }),
  fieldSize: fc.integer({ min: 0, max: 400 }),
  fields: fc.integer({ min: 0, max: 6 }),
  fileSize: fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 3200 })),
  files: fc.integer({ min: 0, max: 6 }),
  parts: fc.integer({ min: 0, max: 8 }),
  headerPairs: fc.integer({ min: 1, max: 2000 }),
  fieldNestingDepth: fc.integer({ min: 0, max: 3 }),
  fieldArrayIndexLimit: fc.integer({ min: 0, max: 3 })
}, { requiredKeys: [] }), { nil: undefined })

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  api: fc.constantFrom('single' as const, 'array' as const, 'fields' as const, 'none' as const, 'any' as const),
  maxCount: fc.option(fc.integer({ min: 0, max: 4 }), { nil: undefined }),
  storage: fc.constantFrom('memory' as const, 'disk' as const, 'custom' as const),
  filter: fc.constantFrom('none' as const, 'sync-skip-x' as const, 'async-accept' as const, 'async-error-e' as const),
  limits: limitsArb,
  limitsAsFunction: fc.boolean(),
  preservePath: fc.boolean(),
  defParamCharset: fc.constantFrom('latin1' as const, 'utf8' as const, undefined)
})

/** The model's forms, with multer-style names on most parts; never compressed (multer reads no Content-Encoding). */
const inputArb = fc.tuple(multipartInput, fc.array(fc.oneof({ weight: 2, arbitrary: fc.constant('f') }, { weight: 3, arbitrary: fc.constantFrom(...NAMES) }), { minLength: 8, maxLength: 8 }),
  fc.array(fc.boolean(), { minLength: 8, maxLength: 8 }), fc.boolean())
  .map(([input, names, renames, asBrowsersSend]): MultipartInput => ({
    ...input,
    // Half the forms as browsers and curl send them (a token boundary, nothing around the parts): the fast path's input.
    ...(asBrowsersSend ? { boundary: '----WebKitFormBoundary' + input.boundary.replace(/[^0-9a-zA-Z]/g, ''), preamble: Buffer.alloc(0), epilogue: Buffer.alloc(0), lineBreak: '\r\n' as const } : {}),
    gzip: false,
    parts: input.parts
      .filter((part) => !asBrowsersSend || part.kind !== 'bare')
      .map((part) => !asBrowsersSend || part.kind === 'bare' ? part : part.kind === 'field' ? { ...part, charset: null } : { ...part, extended: false, unreadable: null, type: part.type?.split(';')[0] ?? null })
      .map((part, index) => part.kind !== 'bare' && part.name !== null && renames[index] ? { ...part, name: names[index] } : part)
  }))

/** A storage engine of the user's own: asynchronous, with its own property, recording removals. */
function customStorage (removed: string[]): realMulter.StorageEngine {
  return {
    _handleFile (_req, file, callback) {
      let size = 0
      const stream = (file as unknown as { stream: Readable }).stream
      stream.on('data', (chunk: Buffer) => { size += chunk.length })
      stream.on('end', () => { setImmediate(() => { callback(null, { size, custom: 'kept:' + file.fieldname } as never) }) })
    },
    _removeFile (_req, file, callback) {
      removed.push(file.fieldname)
      setImmediate(callback, null)
    }
  }
}

/** The `*-error-e` filters' verdict: a file whose name has an `e` is refused. */
function refuseE (file: { originalname: string }, callback: (err: Error | null, accept?: boolean) => void): void {
  if (file.originalname.includes('e')) callback(new Error('refused by filter'))
  else callback(null, true)
}

/** The scenario with its fileFilter answering at once (multer's own default filter accepts at once). */
function filterAtOnce (scenario: Scenario): Scenario {
  return { ...scenario, filter: scenario.filter === 'async-error-e' ? 'sync-error-e' : 'none' }
}

/** The same middleware from either library, for a scenario. */
function buildMiddleware (library: Multer, scenario: Scenario, dir: string, removed: string[]): Middleware {
  const storage = scenario.storage === 'memory'
    ? library.memoryStorage()
    : scenario.storage === 'disk' ? library.diskStorage({ destination: dir }) : customStorage(removed)
  const fileFilter = scenario.filter === 'none'
    ? undefined
    : (_req: unknown, file: { originalname: string }, callback: (err: Error | null, accept?: boolean) => void): void => {
        if (scenario.filter === 'sync-skip-x') callback(null, !file.originalname.includes('x'))
        else if (scenario.filter === 'async-accept') setImmediate(callback, null, true)
        else if (scenario.filter === 'sync-error-e') refuseE(file, callback)
        else setImmediate(refuseE, file, callback)
      }
  const limits = scenario.limits
  const upload = library({
    storage,
    fileFilter: fileFilter as never,
    limits: (scenario.limitsAsFunction && limits !== undefined ? () => limits : limits) as never,
    preservePath: scenario.preservePath,
    defParamCharset: scenario.defParamCharset
  })
  switch (scenario.api) {
    case 'single': return upload.single('f') as unknown as Middleware
    case 'array': return upload.array('f', scenario.maxCount) as unknown as Middleware
    case 'fields': return upload.fields([{ name: 'f', maxCount: scenario.maxCount }, { name: 'a[]' }, { name: 'g', maxCount: 1 }]) as unknown as Middleware
    case 'none': return upload.none() as unknown as Middleware
    default: return upload.any() as unknown as Middleware
  }
}

/** What one library made of one request, in comparable form. */
interface Outcome {
  error: Record<string, unknown> | null
  body: unknown
  file: unknown
  files: unknown
  onDisk: number
  removed: string[]
}

/** A file as comparable: random names by shape, buffers as hex, paths relative to the case's folder. */
function describeFile (file: Record<string, unknown>, dir: string): Record<string, unknown> {
  const described: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(file)) {
    if (Buffer.isBuffer(value)) described[key] = value.toString('hex')
    else if (key === 'filename' && typeof value === 'string' && /^[0-9a-f]{32}$/.test(value)) described[key] = '<random>'
    else if (key === 'destination') described[key] = value === dir ? '<dir>' : value
    else if (key === 'path' && typeof value === 'string') described[key] = value === path.join(dir, String(file.filename)) ? '<dir>/<filename>' : value
    else described[key] = value
  }
  return described
}

function describeFiles (files: unknown, dir: string): unknown {
  if (files === undefined) return undefined
  if (Array.isArray(files)) return files.map((file) => describeFile(file as Record<string, unknown>, dir))
  return Object.fromEntries(Object.entries(files as Record<string, unknown[]>).map(([name, list]) => [name, list.map((file) => describeFile(file as Record<string, unknown>, dir))]))
}

function describeError (err: unknown): Record<string, unknown> {
  const error = err as Error & Record<string, unknown>
  return {
    class: error.constructor.name,
    name: error.name,
    code: error.code,
    field: error.field,
    filename: error.filename,
    message: error.message,
    storageErrors: Array.isArray(error.storageErrors) ? error.storageErrors.length : error.storageErrors
  }
}

/** One server per library; each request names its case, whose middleware and recorder are registered here. */
interface Case {
  middleware: Middleware
  dir: string
  removed: string[]
  resolve: (outcome: Outcome) => void
}

function startServer (cases: Map<string, Case>): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const entry = cases.get(String(req.headers['x-case'])) as Case
    entry.middleware(req, res, (err) => {
      const request = req as typeof req & { body?: unknown, file?: Record<string, unknown>, files?: unknown }
      entry.resolve({
        error: err === undefined ? null : describeError(err),
        body: err === undefined ? JSON.parse(JSON.stringify(request.body ?? null)) : null,
        file: err === undefined && request.file !== undefined ? describeFile(request.file, entry.dir) : undefined,
        files: err === undefined ? describeFiles(request.files, entry.dir) : undefined,
        onDisk: fs.readdirSync(entry.dir).length,
        removed: [...entry.removed]
      })
      res.statusCode = err === undefined ? 200 : 400
      res.end()
    })
  })
  return new Promise((resolve) => { server.listen(0, '127.0.0.1', () => { resolve(server) }) })
}

/** Sends the pieces; resolves once the socket is done (a refused upload may be cut short: that is not an outcome). */
function send (port: number, id: string, input: MultipartInput, body: Buffer): Promise<void> {
  return new Promise((resolve) => {
    const headers: Record<string, string | number> = { 'content-type': 'multipart/form-data; boundary=' + input.boundary, 'x-case': id }
    if (!input.chunked) headers['content-length'] = body.length
    const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers, agent: false }, (res) => {
      res.resume()
      res.on('end', resolve)
      res.on('error', () => { resolve() })
    })
    req.on('error', () => { resolve() })
    for (const piece of toPieces(input, body)) req.write(piece)
    req.end()
  })
}

let nextId = 0

/**
 * The one difference docs/multer.md lists for these requests: bodykit/multer ends a file at its fileSize limit (so
 * the 413 need not wait for the rest of the upload). When the body then ends short, multer's engine only ever gets
 * busboy's error and is never asked to remove the file; bodykit/multer's engine may have finished the file first,
 * and `_removeFile` then removes it. Returns `actual` with that one removal taken out, or null when it does not apply.
 */
function withoutRemovalOfFileEndedAtLimit (actual: Outcome, expected: Outcome, input: MultipartInput, scenario: Scenario): Outcome | null {
  if (scenario.storage !== 'custom' || input.damage === 'none' || expected.error?.code !== 'LIMIT_FILE_SIZE') return null
  if (actual.removed.length !== expected.removed.length + 1) return null
  for (let at = 0; at < actual.removed.length; at++) {
    if (actual.removed[at] !== expected.error.field) continue
    const removed = [...actual.removed.slice(0, at), ...actual.removed.slice(at + 1)]
    if (JSON.stringify(removed) === JSON.stringify(expected.removed)) return { ...actual, removed }
  }
  return null
}

/** The outcome of one library for one input and scenario. */
async function runOne (library: Multer, server: http.Server, cases: Map<string, Case>, input: MultipartInput, scenario: Scenario, body: Buffer): Promise<Outcome> {
  const id = String(nextId++)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-multer-diff-'))
  const removed: string[] = []
  try {
    let resolve!: (outcome: Outcome) => void
    const outcome = new Promise<Outcome>((done) => { resolve = done })
    cases.set(id, { middleware: buildMiddleware(library, scenario, dir, removed), dir, removed, resolve })
    await send((server.address() as { port: number }).port, id, input, body)
    return await outcome
  } finally {
    cases.delete(id)
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe('bodykit/multer against multer 2.x: generated forms, every API, storage, filter and limit', () => {
  const realCases = new Map<string, Case>()
  const ourCases = new Map<string, Case>()
  let realServer: http.Server
  let ourServer: http.Server
  before(async () => {
    realServer = await startServer(realCases)
    ourServer = await startServer(ourCases)
  })
  after(() => {
    realServer.close()
    ourServer.close()
  })

  it(`gives multer's answer (${RUNS} generated requests)`, async () => {
    let accepted = 0
    const refusals = new Map<string, number>()
    let removedAfterEndAtLimit = 0
    let unreadableKept = 0
    let unreadableRefused = 0
    let byteOrder = 0
    await fc.assert(fc.asyncProperty(inputArb, scenarioArb, async (input, scenario) => {
      const body = toBody(input)
      // multer is asked about the oracle's body: the documented RFC 6266 difference (an unreadable filename*) applied.
      const oracleBody = toBody(input, true)
      const expected = await runOne(realMulter, realServer, realCases, input, scenario, oracleBody)
      let actual = await runOne(bodykitMulter as unknown as Multer, ourServer, ourCases, input, scenario, body)
      /**
       * Documented difference (docs/multer.md, issue 45): a busboy error arriving while an async fileFilter is pending
       * (in the same write) is multer's answer, though the filter's verdict on the earlier file (its error, or the
       * file's LIMIT_FILE_SIZE) is of an earlier byte. bodykit/multer answers in byte order: what multer answers when
       * the same filter answers at once. Nothing is left on disk either way. Whether this applied (and held).
       */
      const answeredInByteOrder = async (): Promise<boolean> => {
        if (!scenario.filter.startsWith('async') || actual.error === null || expected.error === null || isDeepStrictEqual(actual.error, expected.error)) return false
        const atOnce = await runOne(realMulter, realServer, realCases, input, filterAtOnce(scenario), oracleBody)
        assert.deepStrictEqual(actual.error, atOnce.error, 'an async fileFilter\'s answer in byte order')
        assert.equal(actual.onDisk, 0)
        byteOrder++
        return true
      }
      const differs = !oracleBody.equals(body)
      const reading = !differs ? null : await readWithBusboy(oracleBody, 'multipart/form-data; boundary=' + input.boundary, 10 * 1024 * 1024)
      const unreadable = reading?.events.find((event) => event.kind === 'file' && event.filename === UNREADABLE_MARKER)
      if (unreadable !== undefined) {
        // A part with an unreadable filename* and nothing to fall back on was reached: refused with a 400, unless
        // multer's own answer was an error before it; nothing is left on disk either way. Such a part without a
        // name is refused as every nameless part (MISSING_FIELD_NAME) when its header is read, before busboy would
        // count it as a file (so a `files` limit it would have crossed is not what is reported).
        unreadableRefused++
        assert.ok(actual.error !== null, 'accepted a part with an unreadable filename* and no filename')
        const namelessRefused = unreadable.name === undefined && actual.error.code === 'MISSING_FIELD_NAME'
        if (/^Malformed filename\* in field "/.test(String(actual.error.message))) assert.equal(actual.error.class, 'Error')
        else if (!namelessRefused && !await answeredInByteOrder()) assert.deepStrictEqual(actual.error, expected.error)
        assert.equal(actual.onDisk, 0)
        return
      }
      if (differs) unreadableKept++
      const documented = withoutRemovalOfFileEndedAtLimit(actual, expected, input, scenario)
      if (documented !== null) {
        removedAfterEndAtLimit++
        actual = documented
      }
      if (await answeredInByteOrder()) return
      try {
        assert.deepStrictEqual(actual, expected)
      } catch (err) {
        // fast-check reports the input; the difference is printed here.
        console.log('bodykit/multer ' + JSON.stringify(actual) + '\nmulter         ' + JSON.stringify(expected))
        throw err
      }
      if (expected.error === null) accepted++
      else refusals.set(String(expected.error.code ?? expected.error.message), (refusals.get(String(expected.error.code ?? expected.error.message)) ?? 0) + 1)
    }), { numRuns: RUNS })
    // The generator must reach both outcomes often, or the comparison proves little.
    assert.ok(accepted > RUNS / 5, `only ${accepted} of ${RUNS} requests accepted`)
    assert.ok(accepted < RUNS, "no request refused")
    console.log(`multer differential: ${accepted} of ${RUNS} accepted; refused: ${JSON.stringify(Object.fromEntries(refusals))}; ${removedAfterEndAtLimit} with the documented removal of a file ended at its limit; ${byteOrder} answered in byte order where multer's async fileFilter lost to a later error; unreadable filename*: ${unreadableKept} compared under the plain filename, ${unreadableRefused} refused`)
    // The fast path (a small canonical form with a length) is a second way to the same answer: it must be drawn often.
  })
})
