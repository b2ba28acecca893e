// The multipart fuzz model: generated bodies (valid and damaged, in pieces) and busboy's own reading of the same bytes as the oracle.
import assert from 'node:assert/strict'
import busboy from 'busboy'
import fc from 'fast-check'

export interface FieldPart { kind: 'field', name: string | null, value: Buffer, charset: string | null }
/**
 * A file part: `filename="<filename>"` (or `fallback.bin` before a readable `filename*` when `extended`), and
 * `unreadable`, a `filename*` busboy cannot read, after them (with `plain` false, no `filename` at all).
 */
export interface FilePart { kind: 'file', name: string | null, filename: string, extended: boolean, type: string | null, data: Buffer, unreadable?: string | null, plain?: boolean }
export interface BarePart { kind: 'bare', data: Buffer, headerless: boolean }
export type Part = FieldPart | FilePart | BarePart

export interface Limits {
  limit: number
  partLimit: number
  parameterLimit: number
  fieldSizeLimit: number
  fieldNameSizeLimit: number
  files: { fileSizeLimit: number, fileLimit: number, storage: 'memory' | 'disk' } | null
}

export interface MultipartInput {
  boundary: string
  parts: Part[]
  preamble: Buffer
  epilogue: Buffer
  lineBreak: '\r\n' | '\n'
  damage: 'none' | 'cut' | 'no-close' | 'header-flood' | 'junk-after-headers' | 'close-without-crlf'
  cutAt: number
  /** Where the body is split into pieces (fractions of its length). */
  splits: number[]
  /** Each limit's distance from what the body needs: null leaves the limit at a generous value. */
  limitShifts: { total: number | null, parts: number | null, fields: number | null, fieldSize: number | null, fileSize: number | null, files: number | null }
  filesOn: boolean
  storage: 'memory' | 'disk'
  /** Sent gzip-compressed (the limit holds on the wire and after inflation). */
  gzip: boolean
  /** Sent without a length (chunked): always streamed; with one, a small body is read whole (the fast path). */
  chunked: boolean
  /** multipart()'s `defaultCharset`, when given. */
  defaultCharset: string | undefined
}

const BCHARS = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=?"
const boundaryArb = fc.string({ unit: fc.constantFrom(...BCHARS.split('')), minLength: 1, maxLength: 70 })
const nameArb = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: fc.constantFrom(...'abcxyz_0189-.'.split('')), minLength: 1, maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('é', 'naïve', '名前', 'a b', 'x;y') },
  { weight: 1, arbitrary: fc.constant(null) }
)

function valueArb (boundary: string): fc.Arbitrary<Buffer> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.string({ maxLength: 60 }).map((text) => Buffer.from(text)),
    // The boundary's prefix (and the delimiter without its last character) inside the data.
    fc.nat({ max: boundary.length }).map((cut) => Buffer.from('x\r\n--' + boundary.slice(0, cut) + 'y')),
    fc.nat({ max: 3000 }).map((size) => Buffer.alloc(size, 'z'))
  )
}

/** What a `_charset_` field may say: labels busboy decodes, labels only TextDecoder knows, unknown ones, odd spacing. */
const CHARSET_LABELS = ['UTF-8', 'utf-8', 'iso-8859-1', 'windows-1252', 'shift_jis', 'utf-16le', 'no-such-charset', ' utf-8', '']

/** `filename*` values busboy cannot read (each makes busboy skip the part): drawn on about one file part in three. */
export const UNREADABLE_FILENAME_STARS = ["UTF-8''%E0%A4%A", "UTF-8''100%.txt", "no-such-charset''x.txt", "UTF-8'x.txt", "UTF-8''", '"x.txt"', "UTF-8''my file.txt"]
const unreadableArb = fc.oneof({ weight: 2, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constantFrom(...UNREADABLE_FILENAME_STARS) })

/**
 * The file name the oracle's body gives a part that has an unreadable `filename*` and no file name to fall back on:
 * where busboy's reading of it has a file of this name, bodykit must refuse the form (multipart.header.malformed).
 */
export const UNREADABLE_MARKER = 'bodykit-oracle-unreadable-filename-star'

function partArb (boundary: string): fc.Arbitrary<Part> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('field' as const), name: fc.constant('_charset_'), value: fc.constantFrom(...CHARSET_LABELS).map((label) => Buffer.from(label)), charset: fc.constantFrom(null, null, 'utf-8') }) },
    { weight: 5, arbitrary: fc.record({ kind: fc.constant('field' as const), name: nameArb, value: valueArb(boundary).map((value) => stripNonUtf8(value)), charset: fc.constantFrom(null, null, null, 'utf-8', 'latin1') }) },
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('file' as const), name: nameArb, filename: fc.constantFrom('a.txt', '', 'x/../../evil.sh', 'C:\\x\\y.png', 'naïve.txt', '名前.bin'), extended: fc.boolean(), type: fc.constantFrom(null, 'image/png', 'application/octet-stream', 'text/plain; charset=utf-8'), data: valueArb(boundary), unreadable: unreadableArb, plain: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('bare' as const), data: valueArb(boundary), headerless: fc.boolean() }) }
  )
}

/** Field values are valid UTF-8 so that a latin1-declared part and a utf-8 one are both exact. */
function stripNonUtf8 (value: Buffer): Buffer {
  return Buffer.from(value.toString('utf8').replace(/\uFFFD/g, '?'))
}

/** A limit left generous most of the time, else put at what the body needs, one less or one more. */
function shift (min: number, max: number): fc.Arbitrary<number | null> {
  return fc.oneof({ weight: 6, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min, max }) })
}

export const multipartInput: fc.Arbitrary<MultipartInput> = boundaryArb.chain((boundary) => fc.record({
  boundary: fc.constant(boundary),
  parts: fc.array(partArb(boundary), { maxLength: 7 }),
  preamble: fc.constantFrom('', '', 'preamble text\r\n', '\r\n\r\n'),
  epilogue: fc.constantFrom('', '', '\r\nepilogue', 'junk after the end'),
  lineBreak: fc.oneof({ weight: 9, arbitrary: fc.constant('\r\n' as const) }, { weight: 1, arbitrary: fc.constant('\n' as const) }),
  damage: fc.oneof(
    { weight: 14, arbitrary: fc.constant('none' as const) },
    { weight: 1, arbitrary: fc.constantFrom('cut' as const, 'no-close' as const, 'header-flood' as const, 'junk-after-headers' as const, 'close-without-crlf' as const) }
  ),
  cutAt: fc.double({ min: 0, max: 1, noNaN: true }),
  splits: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 11 }),
  limitShifts: fc.record({
    total: shift(-2, 1),
    parts: shift(-1, 1),
    fields: shift(-1, 1),
    fieldSize: shift(-1, 1),
    fileSize: shift(-1, 1),
    files: shift(-1, 1)
  }),
  filesOn: fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
  storage: fc.constantFrom('memory' as const, 'disk' as const),
  gzip: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  chunked: fc.boolean(),
  defaultCharset: fc.constantFrom(undefined, undefined, undefined, undefined, undefined, 'latin1', 'shift_jis', 'utf-16le')
}).map((input) => ({ ...input, preamble: Buffer.from(input.preamble), epilogue: Buffer.from(input.epilogue) })))

function headerValue (text: string): string {
  return text.replace(/["\r\n]/g, '_')
}

/**
 * The body's bytes. `oracle`: the body busboy is asked about instead, for the one documented difference (RFC 6266
 * §4.3): each unreadable `filename*` left out (busboy then reads the part under its plain `filename`), and a part with
 * no file name to fall back on named UNREADABLE_MARKER. A cut body is cut at the same place (inside a header block
 * that differs, before that block's end: busboy reads neither block whole).
 */
export function toBody (input: MultipartInput, oracle = false): Buffer {
  const nl = input.lineBreak
  const pieces: Buffer[] = [input.preamble]
  /** For the oracle: the header pieces that differ (their index) and the oracle's bytes for them. */
  const oracleHeaders = new Map<number, Buffer>()
  for (const part of input.parts) {
    pieces.push(Buffer.from((pieces.length === 1 && input.preamble.length === 0 ? '' : nl) + '--' + input.boundary + nl))
    let headers = ''
    if (part.kind === 'field') {
      headers += 'Content-Disposition: form-data' + (part.name === null ? '' : '; name="' + headerValue(part.name) + '"') + nl
      if (part.charset !== null) headers += 'Content-Type: text/plain; charset=' + part.charset + nl
    } else if (part.kind === 'file') {
      const plain = part.extended ? 'fallback.bin' : headerValue(part.filename)
      const named = 'Content-Disposition: form-data' + (part.name === null ? '' : '; name="' + headerValue(part.name) + '"')
      const names = (part.plain === false ? '' : '; filename="' + plain + '"') + (part.extended ? "; filename*=UTF-8''" + encodeURIComponent(part.filename) : '')
      const unreadable = part.unreadable ?? null
      headers += named + names + (unreadable === null ? '' : '; filename*=' + unreadable) + nl
      // An empty file name written as `filename*=UTF-8''` at the end of the header is unreadable too (no value).
      const emptyStar = part.extended && part.filename === ''
      if (unreadable !== null || emptyStar) {
        const readableStar = part.extended && !emptyStar
        const noFileName = !readableStar && (part.plain === false || plain === '')
        const left = (part.plain === false ? '' : '; filename="' + plain + '"') + (readableStar ? "; filename*=UTF-8''" + encodeURIComponent(part.filename) : '')
        let other = named + (noFileName ? '; filename="' + UNREADABLE_MARKER + '"' : left) + nl
        if (part.type !== null) other += 'Content-Type: ' + part.type + nl
        if (input.damage === 'header-flood' && part === input.parts[0]) other += ('X-Flood: ' + 'a'.repeat(100) + nl).repeat(200)
        oracleHeaders.set(pieces.length, Buffer.from(other + nl))
      }
      if (part.type !== null) headers += 'Content-Type: ' + part.type + nl
    } else if (!part.headerless) {
      // A part without Content-Disposition is skipped; one without any header is malformed to busboy.
      headers += 'Content-Type: text/plain' + nl
    }
    if (input.damage === 'header-flood' && part === input.parts[0]) headers += ('X-Flood: ' + 'a'.repeat(100) + nl).repeat(200)
    pieces.push(Buffer.from(headers + nl))
    if (input.damage === 'junk-after-headers' && part === input.parts[0]) pieces.push(Buffer.from('--' + input.boundary + '--'))
    pieces.push(part.kind === 'field' ? fieldBytes(part) : part.data)
  }
  if (input.damage !== 'no-close') {
    const before = input.damage === 'close-without-crlf' || (input.parts.length === 0 && input.preamble.length === 0) ? '' : nl
    pieces.push(Buffer.from(before + '--' + input.boundary + '--' + nl))
    pieces.push(input.epilogue)
  }
  const body = Buffer.concat(pieces)
  const cutAt = input.damage === 'cut' ? Math.floor(body.length * input.cutAt) : body.length
  if (!oracle || oracleHeaders.size === 0) return body.subarray(0, cutAt)
  const kept: Buffer[] = []
  let at = 0
  for (let index = 0; index < pieces.length && at < cutAt; index++) {
    const piece = pieces[index]
    const cut = Math.min(piece.length, cutAt - at)
    const replacement = oracleHeaders.get(index)
    if (replacement === undefined) kept.push(piece.subarray(0, cut))
    else kept.push(cut === piece.length ? replacement : replacement.subarray(0, Math.min(cut, replacement.length - 1)))
    at += piece.length
  }
  return Buffer.concat(kept)
}

function fieldBytes (part: FieldPart): Buffer {
  return part.charset === 'latin1' ? Buffer.from(part.value.toString('utf8'), 'latin1') : part.value
}

/** The body in up to 12 pieces, split anywhere (inside the boundary too). */
export function toPieces (input: MultipartInput, body: Buffer): Buffer[] {
  const cuts = [...new Set(input.splits.map((at) => Math.floor(at * body.length)))].filter((at) => at > 0 && at < body.length).sort((a, b) => a - b)
  const pieces: Buffer[] = []
  let start = 0
  for (const cut of cuts) {
    pieces.push(body.subarray(start, cut))
    start = cut
  }
  pieces.push(body.subarray(start))
  return pieces
}

/** What busboy read from the bytes, with no limit of its own besides its fixed header caps. */
export interface Reading {
  events: Array<{ kind: 'field', name: string | undefined, value: string, truncated: boolean } | { kind: 'file', name: string | undefined, filename: string | undefined, mimeType: string, data: Buffer }>
  /** busboy's error message, if it failed. */
  error: string | null
  parts: number
}

/** busboy's reading of the whole body at once: the oracle. */
export function readWithBusboy (body: Buffer, contentType: string, fieldSizeLimit: number, defCharset?: string): Promise<Reading> {
  return new Promise((resolve) => {
    const reading: Reading = { events: [], error: null, parts: 0 }
    const files: Array<Promise<void>> = []
    let parser: busboy.Busboy
    try {
      parser = busboy({ headers: { 'content-type': contentType }, defParamCharset: 'utf8', defCharset, limits: { fieldSize: fieldSizeLimit + 1 } })
    } catch (err) {
      resolve({ ...reading, error: (err as Error).message })
      return
    }
    let ended = false
    const end = (): void => {
      if (ended) return
      ended = true
      void Promise.all(files).then(() => { resolve(reading) })
    }
    parser.on('field', (name, value, info) => {
      reading.parts++
      reading.events.push({ kind: 'field', name, value, truncated: info.valueTruncated })
    })
    parser.on('file', (name, stream, info) => {
      reading.parts++
      const chunks: Buffer[] = []
      const event = { kind: 'file' as const, name, filename: info.filename, mimeType: info.mimeType, data: Buffer.alloc(0) }
      reading.events.push(event)
      files.push(new Promise((done) => {
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('error', () => { done() })
        stream.on('close', () => { event.data = Buffer.concat(chunks); done() })
      }))
    })
    parser.on('error', (err: Error) => {
      if (reading.error === null) reading.error = err.message
      end()
    })
    parser.on('close', end)
    parser.end(body)
  })
}

/**
 * The fields multipart() must give, in order: a value whose part declares a charset as busboy decodes it, any
 * other one decoded with the first `_charset_` field's charset when one is known, else with `defaultCharset`.
 * Which parts declare a charset is read from busboy alone: two readings with different default charsets give
 * the same text exactly for them (latin1 gives n characters for n bytes, utf-16le n/2).
 */
export async function decodedFields (body: Buffer, contentType: string, defaultCharset = 'utf-8'): Promise<Array<{ name: string | undefined, value: string }>> {
  const asLatin1 = (await readWithBusboy(body, contentType, 10 * 1024 * 1024, 'latin1')).events
  const asUtf16 = (await readWithBusboy(body, contentType, 10 * 1024 * 1024, 'utf16le')).events
  const fields = asLatin1.flatMap((event, index) => {
    if (event.kind !== 'field') return []
    const other = asUtf16[index]
    const declared = other.kind === 'field' && other.value === event.value
    return [{ name: event.name, value: event.value, bytes: declared ? null : Buffer.from(event.value, 'latin1') }]
  })
  const charsetField = fields.find((field) => field.name === '_charset_')
  const decode = (charsetField !== undefined ? decoderOf(charsetField.value) : null) ?? decoderOf(defaultCharset)
  return fields.map((field) => ({ name: field.name, value: field.bytes === null ? field.value : (decode as (bytes: Buffer) => string)(field.bytes) }))
}

/**
 * How a charset label decodes: as busboy decodes a one-field form whose part declares it, else by TextDecoder
 * (whose labels busboy cannot decode), else null.
 */
function decoderOf (label: string): ((bytes: Buffer) => string) | null {
  const declaring = (bytes: Buffer): string | undefined => {
    // The model's values never hold this delimiter (only their own form's boundary).
    assert.ok(!bytes.includes('--' + ORACLE_BOUNDARY))
    return readOneField(Buffer.concat([
      Buffer.from('--' + ORACLE_BOUNDARY + '\r\nContent-Disposition: form-data; name="x"\r\nContent-Type: text/plain; charset="' + label + '"\r\n\r\n'),
      bytes,
      Buffer.from('\r\n--' + ORACLE_BOUNDARY + '--\r\n')
    ]))
  }
  if (declaring(Buffer.from('probe')) !== undefined) return (bytes) => declaring(bytes) as string
  try {
    const decoder = new TextDecoder(label)
    return (bytes) => decoder.decode(bytes)
  } catch {
    return null
  }
}

const ORACLE_BOUNDARY = 'bodykit-oracle-boundary-5a0c1e9d'

/** The value busboy gives the one field of a form (it emits while it is written to): undefined when it cannot decode it. */
function readOneField (form: Buffer): string | undefined {
  let value: string | undefined
  const parser = busboy({ headers: { 'content-type': 'multipart/form-data; boundary=' + ORACLE_BOUNDARY } })
  parser.on('field', (_name, text: string | undefined) => { value = text })
  parser.on('error', () => {})
  parser.write(form)
  return value
}

/** The limits of one run: generous, or shifted around what the body needs so that each is met, missed or passed by one. */
export function limitsFor (input: MultipartInput, body: Buffer, reading: Reading): Limits {
  const fields = reading.events.filter((event) => event.kind === 'field')
  const files = reading.events.filter((event) => event.kind === 'file')
  const largestField = Math.max(0, ...fields.map((event) => Buffer.byteLength(event.value)))
  const largestFile = Math.max(0, ...files.map((event) => event.kind === 'file' ? event.data.length : 0))
  const shifts = input.limitShifts
  const around = (shift: number | null, need: number, generous: number, min: number): number => shift === null ? generous : Math.max(min, need + shift)
  const totalParts = input.parts.length
  return {
    limit: around(shifts.total, body.length, 10 * 1024 * 1024, 0),
    partLimit: around(shifts.parts, totalParts, 1000, 1),
    parameterLimit: around(shifts.fields, fields.length, 1000, 1),
    fieldSizeLimit: around(shifts.fieldSize, largestField, 1024 * 1024, 0),
    fieldNameSizeLimit: 256,
    files: input.filesOn
      ? { fileSizeLimit: around(shifts.fileSize, largestFile, 10 * 1024 * 1024, 0), fileLimit: around(shifts.files, files.length, 100, 1), storage: input.storage }
      : null
  }
}

/**
 * The error types a correct reading may end with, given busboy's reading: any limit the body passes and any
 * malformation busboy reports (pieces may make one be seen before another). Empty: the body must be accepted.
 */
export function allowedErrors (reading: Reading, limits: Limits, bodyLength: number, fieldNameOk: (name: string) => boolean): Set<string> {
  const allowed = new Set<string>()
  if (bodyLength > limits.limit) allowed.add('entity.too.large')
  if (reading.error !== null) allowed.add(reading.error === 'Malformed part header' ? 'multipart.header.malformed' : 'multipart.unexpected.end')
  let fields = 0
  let files = 0
  for (const event of reading.events) {
    // The documented difference: a part with an unreadable filename* and nothing to fall back on is refused.
    if (event.kind === 'file' && event.filename === UNREADABLE_MARKER) allowed.add('multipart.header.malformed')
    if (event.name === undefined || event.name === '') allowed.add('multipart.field.name.missing')
    else if (!fieldNameOk(event.name)) allowed.add('multipart.field.name.too.large')
    if (event.kind === 'field') {
      // busboy read with fieldSizeLimit + 1 truncates exactly the values over the limit (in raw bytes).
      if (event.truncated) allowed.add('multipart.field.too.large')
      if (++fields > limits.parameterLimit) allowed.add('multipart.fields.too.many')
    } else {
      if (limits.files === null) {
        allowed.add('multipart.file.unexpected')
        continue
      }
      if (++files > limits.files.fileLimit) allowed.add('multipart.files.too.many')
      if (event.data.length > limits.files.fileSizeLimit) allowed.add('multipart.file.too.large')
    }
  }
  return allowed
}

/**
 * The parts busboy counts against its part limit: one per delimiter (`CRLF--boundary`, the body read as if it
 * began with CRLF) after the first, up to the closing one, whatever the part holds (bare parts included).
 * `pastTheEnd`: also the delimiters after the closing one, which busboy still counts when they arrive in the
 * same piece as it (it stops reading only at the next piece).
 */
export function countParts (body: Buffer, boundary: string, pastTheEnd = false): number {
  const text = '\r\n' + body.toString('latin1')
  const needle = '\r\n--' + boundary
  let delimiters = 0
  let at = text.indexOf(needle)
  while (at !== -1) {
    delimiters++
    if (!pastTheEnd && text.startsWith('--', at + needle.length)) break
    at = text.indexOf(needle, at + needle.length)
  }
  return Math.max(0, delimiters - 1)
}
