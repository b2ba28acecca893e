// What every Jazzer.js fuzz target shares: how a fuzz input is read (and a seed written), fake requests, and the checks.
//
// An input is read through Jazzer's FuzzedDataProvider (pure JavaScript: importing it loads no native addon), so the
// same file replays the same request in `npm test` and under Jazzer. Each target draws, in a fixed order, named
// choices (`int`, `bool`, `pick`: integers read from the END of the input, one or two bytes each) and then the bytes
// (`text`/`bytes`: from the FRONT; `rest`: whatever is left, always last). A file is therefore
// [front bytes in draw order][body][choices, the first drawn last], and `writeSeed` makes one from named answers.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { PassThrough } from 'node:stream'
import { FuzzedDataProvider } from '@jazzer.js/core/dist/FuzzedDataProvider'
import { isBodyParserError } from '../../../src/index'

/** The choices a target draws, by name: the same draw function reads an input and writes a seed. */
export interface Source {
  /** An integer in [min, max] (1 byte for a range up to 256, 2 up to 65536). */
  int (label: string, min: number, max: number): number
  bool (label: string): boolean
  pick<T> (label: string, values: readonly T[]): T
  /** One of `choices`, or (one more index) a free string of up to `maxLength` latin1 bytes from the front. */
  text (label: string, choices: readonly string[], maxLength: number): string
  /** Up to `maxLength` bytes from the front. */
  bytes (label: string, maxLength: number): Buffer
  /** The bytes left: the body. Drawn last. */
  rest (label: string): Buffer
}

/** Reads a fuzz input. */
export function sourceOf (data: Buffer): Source {
  const provider = new FuzzedDataProvider(data)
  return {
    int: (_label, min, max) => provider.consumeIntegralInRange(min, max),
    bool: () => provider.consumeBoolean(),
    pick: (_label, values) => values[provider.consumeIntegralInRange(0, values.length - 1)],
    text (_label, choices, maxLength) {
      const index = provider.consumeIntegralInRange(0, choices.length)
      if (index < choices.length) return choices[index]
      return Buffer.from(provider.consumeBytes(provider.consumeIntegralInRange(0, maxLength))).toString('latin1')
    },
    bytes: (_label, maxLength) => Buffer.from(provider.consumeBytes(provider.consumeIntegralInRange(0, maxLength))),
    rest: () => Buffer.from(provider.consumeRemainingAsBytes())
  }
}

/** A seed's answers: by label, a value (or a list, taken in order, for a label drawn several times); missing: the first. */
export type Answers = Record<string, unknown>

/** Writes the input that makes `draw` take the given answers (the inverse of sourceOf for that draw). */
export function writeSeed (draw: (source: Source) => unknown, answers: Answers): Buffer {
  return seedOf(draw, answers).bytes
}

/** The input that makes `draw` take the given answers, and what `draw` returns for it. */
export function seedOf (draw: (source: Source) => unknown, answers: Answers): { bytes: Buffer, input: unknown } {
  const front: Buffer[] = []
  const tail: Buffer[] = []
  const used = new Map<string, number>()
  const answerFor = (label: string): unknown => {
    const value = answers[label]
    if (!Array.isArray(value)) return value
    const at = used.get(label) ?? 0
    used.set(label, at + 1)
    return value[at]
  }
  const writeInt = (label: string, value: number, min: number, max: number): void => {
    assert.ok(Number.isInteger(value) && value >= min && value <= max, `seed answer ${label}=${value} outside [${min}, ${max}]`)
    if (min === max) return
    const size = Math.ceil(Math.log2(max - min + 1) / 8)
    const bytes = Buffer.alloc(size)
    bytes.writeUIntLE(value - min, 0, size)
    tail.push(bytes)
  }
  const source: Source = {
    int (label, min, max) {
      const value = (answerFor(label) as number | undefined) ?? min
      writeInt(label, value, min, max)
      return value
    },
    bool (label) {
      const value = answerFor(label) === true
      writeInt(label, value ? 1 : 0, 0, 255)
      return value
    },
    pick (label, values) {
      const answer = answerFor(label)
      // Compared as JSON, so that a choice that is a list can be answered (as a one-answer list: `[['a', 'b']]`).
      const index = answer === undefined ? 0 : values.findIndex((value) => JSON.stringify(value) === JSON.stringify(answer))
      assert.ok(index >= 0, `seed answer ${label}=${String(answer)} is not one of the choices`)
      writeInt(label, index, 0, values.length - 1)
      return values[index]
    },
    text (label, choices, maxLength) {
      const value = (answerFor(label) as string | undefined) ?? choices[0]
      const index = choices.indexOf(value)
      writeInt(label, index < 0 ? choices.length : index, 0, choices.length)
      if (index >= 0) return value
      const bytes = Buffer.from(value, 'latin1')
      writeInt(label + '.length', bytes.length, 0, maxLength)
      front.push(bytes)
      return value
    },
    bytes (label, maxLength) {
      const bytes = toBuffer(answerFor(label))
      writeInt(label + '.length', bytes.length, 0, maxLength)
      front.push(bytes)
      return bytes
    },
    rest (label) {
      const bytes = toBuffer(answerFor(label))
      front.push(bytes)
      return bytes
    }
  }
  const input = draw(source)
  return { bytes: Buffer.concat([...front, ...tail.reverse()]), input }
}

function toBuffer (value: unknown): Buffer {
  if (value === undefined) return Buffer.alloc(0)
  return Buffer.isBuffer(value) ? value : Buffer.from(String(value), 'latin1')
}

/** A request as the wire carries it: its headers and the pieces its body arrives in. */
export interface Wire {
  headers: Record<string, string>
  chunks: Buffer[]
}

/** How Content-Length is sent: the body's length, a wrong one, or none (then `Transfer-Encoding: chunked`). */
export type Framing = 'length' | 'short' | 'long' | 'chunked'
export const FRAMINGS: readonly Framing[] = ['length', 'chunked', 'short', 'long']

/** The framing headers of a body. */
export function framingHeaders (framing: Framing, length: number): Record<string, string> {
  switch (framing) {
    case 'length': return { 'content-length': String(length) }
    case 'short': return { 'content-length': String(Math.max(0, length - 1)) }
    case 'long': return { 'content-length': String(length + 1) }
    default: return { 'transfer-encoding': 'chunked' }
  }
}

/** Up to `most` split points, drawn before the body (its length is not known yet), applied with splitAt. */
export function drawSplits (source: Source, most: number): number[] {
  const count = source.int('pieces', 1, most)
  const points: number[] = []
  for (let i = 1; i < count; i++) points.push(source.int('split', 0, 65535))
  return points
}

/** The body cut at the drawn points (each taken modulo the body's length + 1). */
export function splitAt (body: Buffer, points: readonly number[]): Buffer[] {
  const cuts = [...new Set(points.map((point) => point % (body.length + 1)))].filter((cut) => cut > 0 && cut < body.length).sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let at = 0
  for (const cut of cuts) {
    chunks.push(body.subarray(at, cut))
    at = cut
  }
  if (at < body.length || chunks.length === 0) chunks.push(body.subarray(at))
  return chunks
}

/**
 * A header value as Node's HTTP parser would hand it on (and `Headers` accepts): no control characters but tab,
 * no leading or trailing white space.
 */
export function headerValue (value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\x00-\x08\x0a-\x1f\x7f]/g, '').replace(/^[ \t]+|[ \t]+$/g, '')
}

/** A fake request as users' tests build one: a PassThrough with `headers`, written in its pieces, one per turn of the loop. */
export function nodeRequest (wire: Wire): { req: IncomingMessage, written: Promise<void> } {
  const req = Object.assign(new PassThrough(), { method: 'POST', url: '/', headers: { host: 'localhost', ...wire.headers } })
  const written = (async () => {
    for (const chunk of wire.chunks) {
      await turn()
      // A refused body may be destroyed before it is all sent: what a client cut short sees.
      if (req.destroyed) return
      req.write(chunk)
    }
    await turn()
    if (!req.destroyed) req.end()
  })()
  return { req: req as unknown as IncomingMessage, written }
}

/** The same request as a Web `Request`: its body whole (bytes) or a ReadableStream giving the same pieces. */
export function webRequest (wire: Wire, asBytes: boolean): Request {
  const headers = { ...wire.headers }
  if (asBytes) return new Request('http://localhost/', { method: 'POST', headers, body: Buffer.concat(wire.chunks) })
  const queue = [...wire.chunks]
  const body = new ReadableStream<Uint8Array>({
    pull (controller) {
      const chunk = queue.shift()
      if (chunk === undefined) controller.close()
      else controller.enqueue(new Uint8Array(chunk))
    }
  })
  return new Request('http://localhost/', { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
}

export const turn = (): Promise<void> => new Promise((resolve) => { setImmediate(resolve) })

/**
 * How long a reader may take after the body's end before it counts as a hang: 2 s while fuzzing (npm run fuzz sets
 * FUZZ_ANSWER_MS), where a hang must be told quickly; 30 s when npm test replays the corpus beside other test files,
 * where a loaded machine may be slow but a reader that never answers still fails.
 */
export const ANSWER_MS = Number(process.env.FUZZ_ANSWER_MS ?? 30_000)

/** What kind of finding: a class a run may be told to log and pass (FUZZ_KNOWN), e.g. a hang already reported. */
export type FindingKind = 'hang' | 'next-twice' | 'escaped' | 'threw' | 'foreign-error' | 'error-table' | 'differ' | 'wrong-value' | 'left-behind'

/** A finding: the target throws it, and Jazzer saves the input. */
export class Finding extends Error {
  override name = 'Finding'
  readonly kind: FindingKind
  constructor (message: string, kind: FindingKind = 'wrong-value') {
    super(message)
    this.kind = kind
  }
}

// Errors that escape the code under test: recorded here, reported by the input that is running (or the next one).
const escaped: unknown[] = []
let installed = false
/** Installs the process handlers that record uncaught exceptions and unhandled rejections. */
export function watchProcess (): void {
  if (installed) return
  installed = true
  process.on('uncaughtException', (err) => { escaped.push(err) })
  process.on('unhandledRejection', (err) => { escaped.push(err) })
}

/**
 * Takes what escaped since the last check without reporting it: for a reference library run before the code under
 * test, whose own uncaught errors (documented, e.g. docs/koa.md) are not findings.
 */
export function takeEscaped (): unknown[] {
  return escaped.splice(0)
}

/** Throws what escaped since the last check: an uncaught exception, an unhandled rejection, a late second `next`. */
export function checkEscaped (): void {
  if (escaped.length === 0) return
  const [first] = escaped.splice(0)
  throw new Finding('escaped the code under test: ' + describeThrown(first), 'escaped')
}

function describeThrown (err: unknown): string {
  return err instanceof Error ? (err.stack ?? err.message) : String(err)
}

/** What a reading came to, comparable across deliveries: the error's status, type and message, or the value. */
export interface Answer {
  error?: { status: unknown, type: unknown, message: string }
  value?: unknown
}

/** Every bodykit error `type` and its status (src/errors.ts). */
export const TYPE_STATUS: Readonly<Record<string, number>> = {
  'charset.unsupported': 415,
  'encoding.unsupported': 415,
  'entity.parse.failed': 400,
  'entity.too.large': 413,
  'entity.validation.failed': 400,
  'entity.verify.failed': 403,
  'multipart.boundary.invalid': 400,
  'multipart.field.name.missing': 400,
  'multipart.field.name.too.large': 413,
  'multipart.field.too.large': 413,
  'multipart.fields.too.large': 413,
  'multipart.fields.too.many': 413,
  'multipart.file.too.large': 413,
  'multipart.file.unexpected': 400,
  'multipart.files.too.large': 413,
  'multipart.files.too.many': 413,
  'multipart.header.malformed': 400,
  'multipart.parts.too.many': 413,
  'multipart.storage.failed': 500,
  'multipart.unexpected.end': 400,
  'parameters.too.many': 413,
  'querystring.parse.rangeError': 400,
  'request.aborted': 400,
  'request.length.invalid': 400,
  'request.size.invalid': 400,
  'stream.encoding.set': 500,
  'stream.not.readable': 500
}

/** An error bodykit passed on must be its own, with a type and status of the table (zlib's: no type, 400, a code). */
export function checkError (err: unknown, where: string): void {
  const e = err as { status?: unknown, type?: unknown, code?: unknown, message?: unknown }
  if (!isBodyParserError(err)) throw new Finding(`${where}: an error that is not bodykit's: ${describeThrown(err)}`, 'foreign-error')
  if (e.type === undefined) {
    if (e.status !== 400 || typeof e.code !== 'string') throw new Finding(`${where}: an untyped error other than zlib's 400: status ${String(e.status)}, code ${String(e.code)}, ${String(e.message)}`, 'error-table')
    return
  }
  if (TYPE_STATUS[String(e.type)] !== e.status) throw new Finding(`${where}: error type ${String(e.type)} with status ${String(e.status)}: ${String(e.message)}`, 'error-table')
}

export function answerOfError (err: unknown): Answer {
  const e = err as { status?: unknown, type?: unknown, message?: unknown }
  return { error: { status: e.status, type: e.type, message: String(e.message) } }
}

/**
 * A value as a comparable string: prototypes (null or not), -0, Buffers, undefined and own `__proto__` keys (read
 * through their descriptor, not as the prototype) all told apart. A value nested too deep to walk gives a marker.
 */
export function comparable (value: unknown): string {
  try {
    return describeValue(value)
  } catch (err) {
    if (err instanceof RangeError) return '<nested too deep to compare>'
    throw err
  }
}

function describeValue (value: unknown): string {
  if (value === undefined) return 'undefined'
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value)
  if (value === null || typeof value !== 'object') return typeof value + ':' + JSON.stringify(value)
  if (Buffer.isBuffer(value)) return 'Buffer<' + value.toString('hex') + '>'
  const proto = Object.getPrototypeOf(value)
  const kind = Array.isArray(value) ? 'array' : proto === null ? 'null-proto' : proto === Object.prototype ? 'object' : 'other'
  return kind + '{' + Object.keys(value).map((key) => JSON.stringify(key) + ':' + describeValue(Object.getOwnPropertyDescriptor(value, key)?.value)).join(',') + '}'
}

/**
 * Runs a middleware on a fake request: resolves with what it passed to `next` and the request after it, once the
 * body has been written and a few turns of the loop passed (a second `next` in that time is a finding, and one
 * later still is reported by checkEscaped). No `next` within ANSWER_MS of the body's end is a finding.
 */
export async function runMiddleware (
  middleware: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void,
  wire: Wire,
  where: string
): Promise<{ err: unknown, called: boolean, req: IncomingMessage & Record<string, unknown> }> {
  const { req, written } = nodeRequest(wire)
  let calls = 0
  let first: unknown
  let answered!: () => void
  const answer = new Promise<void>((resolve) => { answered = resolve })
  const res = {} as ServerResponse
  try {
    middleware(req, res, (err) => {
      calls++
      if (calls === 1) {
        first = err
        answered()
      } else {
        escaped.push(new Finding(`${where}: next called ${calls} times (${describeThrown(err)})`, 'next-twice'))
      }
    })
  } catch (err) {
    throw new Finding(`${where}: the middleware threw: ${describeThrown(err)}`, 'threw')
  }
  await written
  await withinAnswerTime(answer, where)
  for (let i = 0; i < 3; i++) await turn()
  checkEscaped()
  return { err: first, called: calls > 0, req: req as IncomingMessage & Record<string, unknown> }
}

/** Waits for `answer`, at most ANSWER_MS from now (the body's end). */
export async function withinAnswerTime<T> (answer: Promise<T>, where: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const hang = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => { reject(new Finding(`${where}: no answer within ${ANSWER_MS} ms of the body's end`, 'hang')) }, ANSWER_MS)
  })
  try {
    return await Promise.race([answer, hang])
  } finally {
    clearTimeout(timer)
  }
}

/** Runs a promise reader on a request: its value, or its error (checked against the table). */
export async function runReader (read: () => Promise<unknown>, written: Promise<void>, where: string): Promise<Answer> {
  let reading: Promise<unknown>
  try {
    reading = read()
  } catch (err) {
    throw new Finding(`${where}: the reader threw: ${describeThrown(err)}`, 'threw')
  }
  const settled = reading.then((value) => ({ value: comparable(value) }), (err: unknown) => {
    checkError(err, where)
    return answerOfError(err)
  })
  await written
  const answer = await withinAnswerTime(settled, where)
  for (let i = 0; i < 3; i++) await turn()
  checkEscaped()
  return answer
}

/** Two answers for one body must be the same. */
export function sameAnswer (actual: Answer, expected: Answer, what: string): void {
  try {
    assert.deepStrictEqual(actual, expected)
  } catch {
    throw new Finding(`${what}: two answers for one body:\n  ${JSON.stringify(actual)}\n  ${JSON.stringify(expected)}`, 'differ')
  }
}

/** A middleware's answer: its error (checked against the table) or the body it set. */
export function answerOfMiddleware (run: { err: unknown, called: boolean, req: Record<string, unknown> }, where: string): Answer {
  if (run.err) {
    checkError(run.err, where)
    return answerOfError(run.err)
  }
  return { value: comparable(run.req.body) }
}

/** A short JSON description of a drawn request, printed with a finding. */
export function describeInput (input: Record<string, unknown>): string {
  return JSON.stringify(input, (_key, value: unknown) => {
    if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer') return Buffer.from((value as { data: number[] }).data).toString('latin1')
    return value
  })
}

/**
 * Finding classes to log and pass, as `target:kind` (FUZZ_KNOWN=multipart:hang): a run can go on past a class already
 * reported. Each is appended to FUZZ_KNOWN_LOG (the runner's findings folder) with its input, base64.
 */
const KNOWN = new Set((process.env.FUZZ_KNOWN ?? '').split(',').filter(Boolean))

/** Runs one input of a target, adding the drawn request to a finding's message. */
export async function withInput<T extends Record<string, unknown>> (target: string, data: Buffer, draw: (source: Source) => T, check: (input: T) => Promise<void>): Promise<void> {
  watchProcess()
  checkEscaped()
  const input = draw(sourceOf(data))
  try {
    await check(input)
  } catch (err) {
    if (!(err instanceof Finding)) throw err
    err.message += '\n  input: ' + describeInput(input)
    if (KNOWN.has(`${target}:${err.kind}`)) {
      if (process.env.FUZZ_KNOWN_LOG) fs.appendFileSync(process.env.FUZZ_KNOWN_LOG, JSON.stringify({ kind: err.kind, message: err.message, data: data.toString('base64') }) + '\n')
      return
    }
    throw err
  }
}

/** One body delivered three ways: whole with its length (the fast path), in the drawn pieces with it, and chunked. */
export function deliveriesOf (headers: Record<string, string>, body: Buffer, points: readonly number[]): { name: string, wire: Wire }[] {
  const pieces = splitAt(body, points)
  return [
    { name: 'whole, with Content-Length', wire: { headers: { ...headers, ...framingHeaders('length', body.length) }, chunks: [body] } },
    { name: 'in pieces, with Content-Length', wire: { headers: { ...headers, ...framingHeaders('length', body.length) }, chunks: pieces } },
    { name: 'in pieces, chunked', wire: { headers: { ...headers, ...framingHeaders('chunked', body.length) }, chunks: pieces } }
  ]
}

/**
 * A charset iconv-lite does not know is learnt when the body's decoder is made, after raw-body's length check, as in
 * body-parser: a declared length over the limit gets 413, the same body without a length 415. Not a difference.
 */
function isLengthBeforeCharset (a: Answer, b: Answer): boolean {
  const types = [a.error?.type, b.error?.type].sort()
  return types[0] === 'charset.unsupported' && types[1] === 'entity.too.large'
}

/** Runs a middleware (a new one per delivery) on each delivery: every answer must be the first's, which is returned. */
export async function sameAcross (
  create: () => (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void,
  deliveries: readonly { name: string, wire: Wire }[],
  what: string
): Promise<Answer> {
  let first: Answer | undefined
  for (const delivery of deliveries) {
    const where = `${what}, ${delivery.name}`
    const answer = answerOfMiddleware(await runMiddleware(create(), delivery.wire, where), where)
    if (first === undefined) first = answer
    else if (!isLengthBeforeCharset(answer, first)) sameAnswer(answer, first, `${where} against ${deliveries[0].name}`)
  }
  return first as Answer
}
