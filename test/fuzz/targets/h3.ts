// Fuzz target 12: bodykit/h3's readers on h3 1.x events (createEvent over a fake request: a PassThrough with headers, or
// an IncomingMessage on a fake socket, written in the drawn pieces) and h3 2.x events (an H3Event over a Request, or a
// `new H3()` app's fetch), over the Node build and the Web build, with drawn readers, Content-Types, charsets, codings,
// framings, limits (around the body's size) and form limits. Every read settles within ANSWER_MS of the body's end,
// nothing escapes, every rejection is the event's h3's error (h3 1: an H3Error; h3 2: an HTTPError) with a status of
// 400-599, and a refusal of bodykit's carries its type in `data.type` (with its status of the table). A small body within
// the limits, sent plainly (`application/json` or urlencoded, no coding, a right length or chunked), is read by readBody
// as h3's own readBody reads the same bytes on a fresh event (h3 1's for 1.x events, h3 2's for 2.x), value or status.
import { IncomingMessage, ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Duplex } from 'node:stream'
import zlib from 'node:zlib'
import * as h3v1 from 'h3'
import * as h3v2 from 'h3-2'
import { isBodyParserError } from '../../../src/errors'
import * as bodykitH3 from '../../../src/h3'
import { createH3Readers, type H3Module } from '../../../src/h3/adapter'
import { nodeBuild } from '../../../src/h3/node-build'
import type { H3Readers } from '../../../src/h3/types'
import { webBuild } from '../../../src/h3/web-build'
import {
  checkEscaped, comparable, drawSplits, Finding, FRAMINGS, framingHeaders, headerValue, nodeRequest, splitAt, turn, TYPE_STATUS, webRequest,
  withInput, withinAnswerTime, type Answers, type Source, type Wire
} from './harness'

/** The readers under test, by h3 major and build: h3 1's over the entry itself (its Node build) and over the Web build. */
const READERS: Record<'1 node' | '1 web' | '2 node' | '2 web', H3Readers> = {
  '1 node': { ...bodykitH3 },
  '1 web': createH3Readers(webBuild, h3v1 as unknown as H3Module),
  '2 node': createH3Readers(nodeBuild, h3v2 as unknown as H3Module),
  '2 web': createH3Readers(webBuild, h3v2 as unknown as H3Module)
}

const READER_NAMES = ['readBody', 'readRawBody', 'readRawBody-bytes', 'readValidatedBody', 'readFormData', 'readMultipartFormData', 'readBody-type'] as const
const CONTENT_TYPES = ['application/json', 'application/x-www-form-urlencoded', 'text/plain', 'multipart/form-data; boundary=X', 'application/json; charset=utf-8',
  'application/json; charset=latin1', 'text/plain; charset=utf-16le', 'text/plain; charset=x-bogus', 'application/x-www-form-urlencoded; charset=iso-8859-1',
  'APPLICATION/JSON', 'application/vnd.api+json', 'multipart/form-data', 'multipart/form-data; boundary="a b"', 'application/octet-stream', '']
const ENCODINGS = ['identity', 'gzip', 'deflate', 'br', 'gzip-cut', 'GZIP', 'bogus'] as const
/** The limit: h3's default (100 KiB), or one around the (inflated) body's size. */
const LIMITS = ['default', 'under', 'exact', 'over', 'tiny', '1kb'] as const
const FILES = ['default', 'off', 'small', 'one', 'big'] as const
const VALIDATE = ['true', 'false', 'value', 'throw', 'schema'] as const
const METHODS = ['POST', 'PUT', 'PATCH', 'DELETE', 'GET'] as const
const V1_REQUESTS = ['passthrough', 'incoming', 'web-bytes', 'web-stream'] as const
const V2_EVENTS = ['event-bytes', 'event-stream', 'app-bytes', 'app-stream'] as const
const THEN = ['none', 'again', 'h3-own'] as const

export function draw (source: Source) {
  return {
    major: source.pick('major', [1, 2] as const),
    build: source.pick('build', ['node', 'web'] as const),
    reader: source.pick('reader', READER_NAMES),
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 80)),
    encoding: source.pick('encoding', ENCODINGS),
    framing: source.pick('framing', FRAMINGS),
    limit: source.pick('limit', LIMITS),
    files: source.pick('files', FILES),
    bound: source.bool('bound'),
    strict: source.pick('strict', [undefined, true, false] as const),
    poisoning: source.pick('poisoning', [undefined, 'remove', 'error'] as const),
    validate: source.pick('validate', VALIDATE),
    method: source.pick('method', METHODS),
    v1Request: source.pick('v1Request', V1_REQUESTS),
    v2Event: source.pick('v2Event', V2_EVENTS),
    then: source.pick('then', THEN),
    splits: drawSplits(source, 8),
    payload: source.rest('payload')
  }
}

type Input = ReturnType<typeof draw>

function encode (payload: Buffer, encoding: Input['encoding']): Buffer {
  switch (encoding) {
    case 'gzip': case 'GZIP': return zlib.gzipSync(payload)
    case 'gzip-cut': {
      const gz = zlib.gzipSync(payload)
      return gz.subarray(0, Math.max(1, gz.length >> 1))
    }
    case 'deflate': return zlib.deflateSync(payload)
    case 'br': return zlib.brotliCompressSync(payload)
    default: return payload
  }
}

function wireOf (input: Input): Wire {
  const body = encode(input.payload, input.encoding)
  const headers: Record<string, string> = { ...framingHeaders(input.framing, body.length) }
  if (input.contentType !== '') headers['content-type'] = input.contentType
  if (input.encoding !== 'identity') headers['content-encoding'] = input.encoding === 'gzip-cut' ? 'gzip' : input.encoding
  return { headers, chunks: splitAt(body, input.splits) }
}

function limitOf (input: Input): number | string | undefined {
  const size = input.payload.length
  switch (input.limit) {
    case 'under': return Math.max(0, size - 1)
    case 'exact': return size
    case 'over': return size + 1
    case 'tiny': return 1
    case '1kb': return '1kb'
    default: return undefined
  }
}

function optionsOf (input: Input): Record<string, unknown> {
  const options: Record<string, unknown> = {}
  const limit = limitOf(input)
  if (limit !== undefined) options.limit = limit
  if (input.strict !== undefined) options.strict = input.strict
  if (input.poisoning !== undefined) options.onProtoPoisoning = input.poisoning
  if (input.files === 'off') options.files = false
  else if (input.files === 'small') options.files = { fileSizeLimit: 8 }
  else if (input.files === 'one') options.files = { fileLimit: 1 }
  else if (input.files === 'big') options.files = { fileSizeLimit: '100mb' }
  return options
}

/** A validation as the app gives it: a function answering true, false or a value, or throwing; or a Standard Schema. */
function validatorOf (how: Input['validate']): unknown {
  switch (how) {
    case 'true': return () => true
    case 'false': return () => false
    case 'value': return (data: unknown) => ({ validated: data === undefined ? null : typeof data })
    case 'throw': return () => { throw new Error('not valid') }
    default: return {
      '~standard': {
        version: 1,
        vendor: 'fuzz',
        validate: (value: unknown) => value !== null && typeof value === 'object' ? { value } : { issues: [{ message: 'not an object' }] }
      }
    }
  }
}

type Read = (event: never) => Promise<unknown>

/** The drawn reader, with its options per call or bound once by createBodyReaders. */
function readerOf (input: Input): Read {
  const readers = READERS[`${input.major} ${input.build}`]
  const options = optionsOf(input)
  const validate = validatorOf(input.validate)
  if (input.bound) {
    const bound = readers.createBodyReaders(options)
    switch (input.reader) {
      case 'readBody': return (event) => bound.readBody(event)
      case 'readBody-type': return (event) => bound.readBody(event, { type: 'text' })
      case 'readRawBody': return (event) => bound.readRawBody(event)
      case 'readRawBody-bytes': return (event) => bound.readRawBody(event, false)
      case 'readValidatedBody': return (event) => bound.readValidatedBody(event, validate as never)
      case 'readFormData': return (event) => bound.readFormData(event)
      case 'readMultipartFormData': return (event) => bound.readMultipartFormData(event)
    }
  }
  switch (input.reader) {
    case 'readBody': return (event) => readers.readBody(event, options)
    case 'readBody-type': return (event) => readers.readBody(event, { ...options, type: 'urlencoded' })
    case 'readRawBody': return (event) => readers.readRawBody(event, 'utf8', options)
    case 'readRawBody-bytes': return (event) => readers.readRawBody(event, false, options)
    case 'readValidatedBody': return (event) => readers.readValidatedBody(event, validate as never, options)
    case 'readFormData': return (event) => readers.readFormData(event, options)
    case 'readMultipartFormData': return (event) => readers.readMultipartFormData(event, options)
  }
}

/** A value as comparable text: FormData by its entries, bytes as bytes (a Uint8Array of the Web build as a Buffer). */
function describe (value: unknown): string {
  if (value instanceof FormData) return 'FormData' + comparable([...value.entries()].map(([name, entry]) => [name, typeof entry === 'string' ? entry : `File ${entry.name} ${entry.type} ${entry.size}`]))
  if (value instanceof Uint8Array && !Buffer.isBuffer(value)) return comparable(Buffer.from(value.buffer, value.byteOffset, value.byteLength))
  if (Array.isArray(value)) return '[' + value.map(describe).join(',') + ']'
  return comparable(value)
}

interface Outcome { value?: string, error?: { status: number, type: unknown } }

/** A rejection must be the event's h3's error, with a status of 400-599, and bodykit's type (with its status) when bodykit refused. */
function checkRejection (err: unknown, major: 1 | 2, where: string): Outcome['error'] {
  const e = err as { constructor?: { __h3_error__?: unknown }, name?: unknown, statusCode?: unknown, status?: unknown, data?: { type?: unknown }, cause?: unknown, stack?: unknown }
  const described = String(e?.stack ?? err)
  if (err instanceof Finding) throw err
  const isH3 = major === 1 ? e?.constructor?.__h3_error__ === true : e?.name === 'HTTPError' && h3v2.HTTPError.isError(err)
  if (!isH3) throw new Finding(`${where}: a rejection that is not h3 ${major}'s error: ${described}`, 'foreign-error')
  const status = Number(major === 1 ? e.statusCode : e.status)
  if (!(status >= 400 && status <= 599)) throw new Finding(`${where}: an h3 error with status ${String(major === 1 ? e.statusCode : e.status)}: ${described}`, 'error-table')
  const type = e.data?.type
  if (isBodyParserError(e.cause)) {
    const cause = e.cause as { type?: unknown, status?: unknown, code?: unknown }
    // zlib's error on a damaged body is bodykit's without a type (harness.ts checkError): its h3 error has no data.type
    // either. Reported (a refusal of bodykit's whose h3 error does not say why), let through here.
    const zlibs = cause.type === undefined && cause.status === 400 && typeof cause.code === 'string'
    if (!zlibs && (typeof type !== 'string' || type !== cause.type)) throw new Finding(`${where}: bodykit's refusal ${String(e.cause.type)} as an h3 error with data.type ${String(type)}`, 'error-table')
  }
  if (type !== undefined) {
    if (typeof type !== 'string') throw new Finding(`${where}: data.type ${String(type)} is not a string`, 'error-table')
    if (TYPE_STATUS[type] !== status) throw new Finding(`${where}: data.type ${type} with status ${status}`, 'error-table')
  }
  // What only bodykit answers (a limit, a charset, a coding, a form's limits) must say why.
  if ((status === 413 || status === 415) && typeof type !== 'string') throw new Finding(`${where}: a ${status} without data.type: ${described}`, 'error-table')
  return { status, type }
}

/** Runs a read, checked: settles within ANSWER_MS of the body's end, nothing escapes, a rejection is h3's. */
async function settle (reading: () => Promise<unknown>, written: Promise<void>, major: 1 | 2, where: string): Promise<Outcome> {
  let promise: Promise<unknown>
  try {
    promise = reading()
  } catch (err) {
    throw new Finding(`${where}: the reader threw: ${String((err as Error)?.stack ?? err)}`, 'threw')
  }
  // A finding is kept, not thrown, until the body is written: a rejection waiting that long would count as escaped.
  const settled = promise.then((value) => ({ value: describe(value) }), (err: unknown) => {
    try {
      return { error: checkRejection(err, major, where) }
    } catch (finding) {
      return { finding }
    }
  })
  await written
  const outcome: Outcome & { finding?: unknown } = await withinAnswerTime(settled, where)
  if (outcome.finding !== undefined) throw outcome.finding
  for (let i = 0; i < 3; i++) await turn()
  checkEscaped()
  return outcome
}

// ---------------------------------------------------------------------------
// h3 1.x events.
// ---------------------------------------------------------------------------

/** An IncomingMessage on a fake socket (as Node's server makes it), its pieces pushed one per turn of the loop. */
function incomingRequest (method: string, wire: Wire): { req: IncomingMessage, res: ServerResponse, written: Promise<void> } {
  const socket = new Duplex({ read () {}, write (_chunk, _encoding, callback) { callback() } }) as unknown as Socket
  const req = new IncomingMessage(socket)
  Object.assign(req, { method, url: '/', httpVersion: '1.1', httpVersionMajor: 1, httpVersionMinor: 1, headers: { host: 'localhost', ...wire.headers } })
  const res = new ServerResponse(req)
  res.assignSocket(socket)
  const written = (async () => {
    for (const chunk of wire.chunks) {
      await turn()
      if (req.destroyed) return
      req.push(chunk)
    }
    await turn()
    if (!req.destroyed) {
      req.complete = true
      req.push(null)
    }
  })()
  return { req, res, written }
}

/**
 * An h3 1 event and the pieces written to it: createEvent over a fake request (Node build only), or, as h3 1 makes it
 * where there is no Node (the Web build's only events), through an app's toWebHandler given a Request.
 */
type V1Kind = (typeof V1_REQUESTS)[number]
function v1KindOf (input: Input): V1Kind {
  if (input.build === 'node' || input.v1Request.startsWith('web')) return input.v1Request
  return input.v1Request === 'passthrough' ? 'web-bytes' : 'web-stream'
}

function v1Event (input: Input, wire: Wire): { event: h3v1.H3Event, written: Promise<void> } {
  if (input.v1Request === 'incoming') {
    const { req, res, written } = incomingRequest(input.method, wire)
    return { event: h3v1.createEvent(req, res), written }
  }
  const { req, written } = nodeRequest(wire)
  ;(req as { method: string }).method = input.method
  const res = new ServerResponse(req)
  return { event: h3v1.createEvent(req, res), written }
}

/** Reads through h3 1's toWebHandler (the handler records the read; the app answers): the outcome and the event. */
async function v1WebRead (input: Input, wire: Wire, read: Read, where: string): Promise<{ outcome: Outcome, event: h3v1.H3Event } | null> {
  const request = webRequestOf(wire, v1KindOf(input) === 'web-bytes', input.method)
  if (request === null) return null
  let reading: Promise<unknown> | undefined
  let seen: h3v1.H3Event | undefined
  const app = h3v1.createApp()
  app.use(h3v1.eventHandler(async (event) => {
    seen = event
    reading = read(event as never)
    await reading.catch(() => {})
    return ''
  }))
  const response = await withinAnswerTime(h3v1.toWebHandler(app)(request), where + ' (toWebHandler)')
  await response.arrayBuffer()
  if (reading === undefined || seen === undefined) throw new Finding(`${where}: the app answered ${response.status} without calling the handler`, 'wrong-value')
  return { outcome: await settle(() => reading as Promise<unknown>, turn(), 1, where), event: seen }
}

/** The wire as a Request (bytes, or a stream of its pieces), or null where a Request refuses it (a GET with a body). */
function webRequestOf (wire: Wire, asBytes: boolean, method = 'POST'): Request | null {
  try {
    const request = webRequest(wire, asBytes)
    return method === 'POST' ? request : new Request(request, { method })
  } catch {
    return null
  }
}

// ---------------------------------------------------------------------------
// h3 2.x events.
// ---------------------------------------------------------------------------

function v2Request (input: Input, wire: Wire): Request | null {
  return webRequestOf(wire, input.v2Event.endsWith('bytes'))
}

/** Reads through a `new H3()` app's fetch (the handler records the outcome, the app answers 200), or on an H3Event. */
async function v2Read (input: Input, request: Request, read: Read, where: string): Promise<Outcome> {
  if (input.v2Event.startsWith('event')) {
    const event = new h3v2.H3Event(request)
    return settle(() => read(event as never), turn(), 2, where)
  }
  let reading: Promise<unknown> | undefined
  const app = new h3v2.H3().post('/', async (event) => {
    reading = read(event as never)
    await reading.catch(() => {})
    return ''
  })
  const answered = app.fetch(request)
  const response = await withinAnswerTime(Promise.resolve(answered), where + ' (app.fetch)')
  await response.arrayBuffer()
  if (reading === undefined) throw new Finding(`${where}: the app answered ${response.status} without calling the handler`, 'wrong-value')
  return settle(() => reading as Promise<unknown>, turn(), 2, where)
}

// ---------------------------------------------------------------------------
// The check.
// ---------------------------------------------------------------------------

/** Whether readBody's answer must be h3's own: a small body within the limits, sent plainly, read with h3's own switches. */
function comparesWithH3 (input: Input): boolean {
  if (input.reader !== 'readBody' || input.encoding !== 'identity') return false
  if (input.framing !== 'length' && input.framing !== 'chunked') return false
  if (input.poisoning === 'error' || input.poisoning === 'remove') return false
  if (input.major === 1 && input.method !== 'POST') return false
  const limit = limitOf(input)
  const bytes = limit === undefined ? 100 * 1024 : typeof limit === 'number' ? limit : 1024
  if (input.payload.length > bytes || input.payload.length > 4096) return false
  // h3 2's readBody takes no `strict`; h3 1's is given the same.
  if (input.major === 2 && input.strict !== undefined) return false
  return input.contentType === 'application/json' || input.contentType === 'application/x-www-form-urlencoded'
}

async function h3Own (input: Input, wire: Wire): Promise<Outcome | null> {
  const where = `h3 ${input.major}'s own readBody`
  if (input.major === 1) {
    const own = (event: never): Promise<unknown> => h3v1.readBody(event, input.strict === undefined ? {} : { strict: input.strict })
    if (v1KindOf(input).startsWith('web')) return (await v1WebRead(input, wire, own, where))?.outcome ?? null
    const { event, written } = v1Event(input, wire)
    return settle(() => own(event as never), written, 1, where)
  }
  const request = v2Request(input, wire)
  if (request === null) return null
  return settle(() => h3v2.readBody(new h3v2.H3Event(request)), turn(), 2, where)
}

export async function check (input: Input): Promise<void> {
  const wire = wireOf(input)
  const read = readerOf(input)
  const where = `bodykit/h3 ${input.reader} (h3 ${input.major}, ${input.build} build${input.bound ? ', createBodyReaders' : ''})`
  let outcome: Outcome
  let again: Outcome | undefined
  if (input.major === 1) {
    let event: h3v1.H3Event
    if (v1KindOf(input).startsWith('web')) {
      const run = await v1WebRead(input, wire, read, where)
      if (run === null) return
      outcome = run.outcome
      event = run.event
    } else {
      const made = v1Event(input, wire)
      event = made.event
      outcome = await settle(() => read(event as never), made.written, 1, where)
    }
    // On a toWebHandler event h3 1 reads the Request's stream each time, not its cache: a second read finds it used
    // and answers an empty body, h3's own readers as bodykit's. Read again on createEvent's events only.
    if (input.then === 'again' && !v1KindOf(input).startsWith('web')) again = await settle(() => read(event as never), turn(), 1, where + ', read again')
    else if (input.then === 'h3-own' && outcome.value !== undefined && input.reader === 'readBody') {
      // h3's own readBody after bodykit's, on the same event: h3 1 answers from the body bodykit cached.
      again = await settle(() => h3v1.readBody(event), turn(), 1, where + ', then h3\'s own readBody')
    }
  } else {
    const request = v2Request(input, wire)
    if (request === null) return
    outcome = await v2Read(input, request, read, where)
  }
  // A read again answers the same (h3 1 reads its cached body again).
  if (again !== undefined && input.then === 'again' && input.reader !== 'readValidatedBody' && JSON.stringify(again) !== JSON.stringify(outcome)) {
    throw new Finding(`${where}: read twice, two answers:\n  ${JSON.stringify(outcome)}\n  ${JSON.stringify(again)}`, 'differ')
  }
  if (again !== undefined && input.then === 'h3-own' && JSON.stringify(again) !== JSON.stringify(outcome)) {
    throw new Finding(`${where}: h3's own readBody on the same event answered otherwise:\n  ${JSON.stringify(outcome)}\n  ${JSON.stringify(again)}`, 'differ')
  }
  if (!comparesWithH3(input)) return
  const expected = await h3Own(input, wire)
  if (expected === null) return
  // h3's own answer: its value, or its status (its errors have no type; bodykit's parse error is 400 as h3's).
  const same = expected.value !== undefined ? outcome.value === expected.value : outcome.error?.status === expected.error?.status
  if (!same) throw new Finding(`${where} against h3 ${input.major}'s own readBody:\n  got      ${JSON.stringify(outcome)}\n  expected ${JSON.stringify(expected)}`, 'differ')
}

export const fuzz = (data: Buffer): Promise<void> => withInput('h3', data, draw, check)

const form = '--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\nfile\r\n--X--\r\n'
const v2 = { major: 2 }
export const seeds: Record<string, Answers> = {
  'v1-json': { payload: '{"a":[1,2],"b":{"c":null}}' },
  'v1-json-pieces': { pieces: 3, split: [3, 9], payload: '{"pieces":"' + 'p'.repeat(30) + '"}' },
  'v1-json-toWebHandler': { v1Request: 'web-stream', pieces: 2, split: [3], payload: '{"web":1}' },
  'v1-form-toWebHandler-bytes': { v1Request: 'web-bytes', contentType: 'application/x-www-form-urlencoded', payload: 'w=1&w=2' },
  'v1-json-incoming-chunked': { v1Request: 'incoming', framing: 'chunked', pieces: 2, split: [4], payload: '{"chunked":true}' },
  'v1-json-bad': { payload: '{"a":' },
  'v1-json-proto': { payload: '{"__proto__":{"x":1},"a":1}' },
  'v1-json-proto-error': { poisoning: 'error', payload: '{"__proto__":{"x":1}}' },
  'v1-json-string-not-strict': { strict: false, payload: 'just text' },
  'v1-json-limit-under': { limit: 'under', payload: '{"a":"over"}' },
  'v1-json-limit-exact': { limit: 'exact', payload: '{"a":"exact"}' },
  'v1-json-gzip': { encoding: 'gzip', payload: '{"gz":"' + 'z'.repeat(60) + '"}' },
  'v1-json-gzip-cut': { encoding: 'gzip-cut', payload: '{"cut":"' + 'c'.repeat(60) + '"}' },
  'v1-json-br-over': { encoding: 'br', limit: 'tiny', payload: '{"br":1}' },
  'v1-json-bogus-coding': { encoding: 'bogus', payload: '{}' },
  'v1-json-short': { framing: 'short', payload: '{"s":1}' },
  'v1-json-long': { framing: 'long', payload: '{"l":1}' },
  'v1-json-latin1': { contentType: 'application/json; charset=latin1', payload: '{"caf\xe9":1}' },
  'v1-text-bogus-charset': { contentType: 'text/plain; charset=x-bogus', payload: 'b' },
  'v1-text-utf16': { contentType: 'text/plain; charset=utf-16le', payload: Buffer.from('odd', 'utf16le') },
  'v1-form': { contentType: 'application/x-www-form-urlencoded', payload: 'a=1&a=2&b=%20c&d' },
  'v1-form-latin1': { contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', payload: 'a=\xe9' },
  'v1-get': { method: 'GET', payload: '{"get":1}' },
  'v1-raw': { reader: 'readRawBody', payload: 'raw text' },
  'v1-raw-bytes-web': { reader: 'readRawBody-bytes', build: 'web', payload: Buffer.from([0, 1, 2, 0xff]) },
  'v1-validated': { reader: 'readValidatedBody', validate: 'false', payload: '{"v":1}' },
  'v1-validated-schema': { reader: 'readValidatedBody', validate: 'schema', payload: '[1]' },
  'v1-then-h3-own': { then: 'h3-own', payload: '{"cached":true}' },
  'v1-again-form': { then: 'again', reader: 'readMultipartFormData', contentType: 'multipart/form-data; boundary=X', payload: form },
  'v1-multipart': { reader: 'readMultipartFormData', contentType: 'multipart/form-data; boundary=X', pieces: 4, split: [10, 50, 90], payload: form },
  'v1-multipart-small-files': { reader: 'readMultipartFormData', files: 'small', contentType: 'multipart/form-data; boundary=X', payload: form },
  'v1-multipart-no-boundary': { reader: 'readMultipartFormData', contentType: 'multipart/form-data', payload: form },
  'v1-form-data': { reader: 'readFormData', contentType: 'multipart/form-data; boundary=X', payload: form },
  'v1-form-data-damaged': { reader: 'readFormData', contentType: 'multipart/form-data; boundary=X', payload: form.slice(0, 60) },
  'v1-form-data-urlencoded': { reader: 'readFormData', bound: true, contentType: 'application/x-www-form-urlencoded', payload: 'x=1&y=2' },
  'v2-json': { ...v2, payload: '{"a":[1,2]}' },
  'v2-json-app': { ...v2, v2Event: 'app-bytes', payload: '{"app":true}' },
  'v2-json-stream': { ...v2, v2Event: 'event-stream', pieces: 3, split: [2, 6], payload: '{"stream":1}' },
  'v2-json-app-stream-web': { ...v2, build: 'web', v2Event: 'app-stream', pieces: 2, split: [5], payload: '{"web":1}' },
  'v2-json-bad': { ...v2, payload: '{bad' },
  'v2-json-bom': { ...v2, payload: '\xef\xbb\xbf{"bom":1}' },
  'v2-json-proto': { ...v2, payload: '{"__proto__":{"x":1}}' },
  'v2-json-limit': { ...v2, limit: 'under', payload: '{"a":"over"}' },
  'v2-json-gzip-stream': { ...v2, v2Event: 'event-stream', encoding: 'gzip', payload: '{"gz":"' + 'g'.repeat(80) + '"}' },
  'v2-json-gzip-cut-web': { ...v2, build: 'web', encoding: 'gzip-cut', payload: '{"cut":"' + 'c'.repeat(60) + '"}' },
  'v2-form': { ...v2, contentType: 'application/x-www-form-urlencoded', payload: 'a=1&a=2&b' },
  'v2-body-type': { ...v2, reader: 'readBody-type', contentType: 'text/plain', payload: 'a=1' },
  'v2-raw': { ...v2, reader: 'readRawBody', payload: '' },
  'v2-validated': { ...v2, reader: 'readValidatedBody', validate: 'throw', payload: '{"v":1}' },
  'v2-multipart': { ...v2, reader: 'readMultipartFormData', contentType: 'multipart/form-data; boundary=X', payload: form },
  'v2-multipart-one-file-web': { ...v2, build: 'web', reader: 'readMultipartFormData', files: 'one', contentType: 'multipart/form-data; boundary=X', payload: form.replace('name="a"', 'name="g"; filename="g.txt"') },
  'v2-form-data-off': { ...v2, reader: 'readFormData', files: 'off', contentType: 'multipart/form-data; boundary=X', payload: form },
  'v2-form-data-text': { ...v2, reader: 'readFormData', contentType: 'text/plain', payload: 'not a form' },
  'v2-latin1-charset': { ...v2, contentType: 'application/json; charset=latin1', payload: '{"caf\xe9":1}' },
  'v2-bogus-charset': { ...v2, contentType: 'text/plain; charset=x-bogus', reader: 'readRawBody', payload: 'x' }
}
