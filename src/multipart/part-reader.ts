// The multipart stage: the body goes through busboy (or, small and canonical, the fast path) and each part is
// reported to the policy's collector, which counts it, keeps it or refuses it. The readers are shared by
// multipart() and bodykit/multer; what a form becomes is the policy's.
import type { ServerResponse } from 'http'
import { Readable } from 'stream'
import type busboy from 'busboy'
import type { HttpError } from 'http-errors'
import { loadBusboy, loadContentType } from '../dependencies'
import type { BodyStage, StageAbort, StageResult } from '../read'
import type { StageInput } from '../stage-input'
import type { BodyRequest } from '../variants'
import { headerOf } from '../sources/source'
import { isSmallBody, readCanonicalForm, readsLikeBusboy, type CanonicalPart, type NameReading } from './canonical-form'
import { readCanonicalStream, type UsedCounts } from './canonical-stream'
import { feedBusboy, readAlikeHoweverSplit } from './busboy-feed'
import { fallBackFromUnreadableFileNames } from './filename-fallback'
import { TRUNCATED_FIELD, WHOLE_FIELD, type ParserConfig, type PartCollector } from './part-collector'

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70
const BOUNDARY_PARAMETER = /;\s*boundary\s*=/gi

/** The boundary parameter of a multipart Content-Type, or null when it is missing, empty, too long or given twice. */
export function readBoundary (header: string): string | null {
  // Security (rack CVE-2026-26961): two boundaries are refused rather than one of them picked.
  BOUNDARY_PARAMETER.lastIndex = 0
  let count = 0
  while (BOUNDARY_PARAMETER.exec(header) !== null) count++
  if (count !== 1) return null
  const boundary = loadContentType().parse(header).parameters.boundary
  return typeof boundary === 'string' && boundary.length >= 1 && boundary.length <= MAX_BOUNDARY_LENGTH ? boundary : null
}

/**
 * A policy's `defCharset` asking for the bytes of every field whose part declares no charset: such a value is
 * reported as latin1 text (`asBytes`), for the policy to decode once the whole form (and its `_charset_`) is known.
 */
export const UNDECLARED_AS_BYTES = 'bodykit:undeclared-as-bytes'

/**
 * busboy's `defCharset` for UNDECLARED_AS_BYTES. busboy decodes a field whose part declares no charset with its
 * `defCharset`, looked up first as given and then by `toLowerCase()`. This object matches no charset name, so
 * the lookup records that the field declared none and answers latin1, which keeps each byte as one character.
 * busboy emits the field right after decoding it. The charset tests of test/multipart/multipart.test.ts and the fuzz
 * suite (whose oracle tells declared parts apart from two plain busboy readings) pin this reading of busboy.
 */
class UndeclaredCharset {
  used = false
  toLowerCase (): string {
    this.used = true
    return 'latin1'
  }
}

/** What a form means: multipart()'s rules, or multer's. Fixed when the middleware is created. */
export interface FormPolicy {
  /** An error known from the headers alone (e.g. no boundary): the body is refused unread. */
  check (req: BodyRequest): HttpError | Error | null
  /** Whether a small canonical body may be read by the fast path instead of busboy. */
  readonly fastPath: boolean
  /**
   * One request's reading: busboy's configuration (charsets and the limits busboy counts) and the collector the
   * parts go to, which calls `done` once, with the error or the form. May throw (multer's `limits` function).
   */
  begin (req: BodyRequest, res: ServerResponse | undefined, done: (err: HttpError | Error | null, result?: StageResult) => void): {
    config: ParserConfig
    collector: PartCollector
  }
}

/** Builds the multipart stage of a policy. */
export function createMultipartStage (policy: FormPolicy): BodyStage {
  return {
    check (req) {
      return policy.check(req)
    },
    readsWhole (req, limit) {
      return policy.fastPath && isSmallBody(req, limit)
    },
    start (input, req, res, done) {
      let reading: ReturnType<FormPolicy['begin']>
      try {
        reading = policy.begin(req, res, done)
      } catch (err) {
        process.nextTick(done, err as Error)
        return { abort: (callback) => { process.nextTick(callback) }, judged: (callback) => { process.nextTick(callback) } }
      }
      const { config, collector } = reading
      // The busboy parser reading the body, once there is one: its held writes are bytes not judged yet.
      const parsing: Parsing = { parser: null }
      const judged = (callback: () => void): void => { whenParsed(parsing, () => { collector.whenJudged(callback) }) }
      const form = policy.fastPath ? readsLikeBusboy(headerOf(req, 'content-type') as string, config, UNDECLARED_AS_BYTES) : null
      if (!Buffer.isBuffer(input)) {
        if (form === null) return { abort: readWithBusboy(config, collector, input, req, parsing), judged }
        const canonical = readCanonicalStream(input, form, config, collector, (pieces, used, empty, readingOn) =>
          readWithBusboy(withCountsUsed(config, used), readingOn, input, req, parsing, pieces, empty))
        return { abort: canonical.abort, judged: (callback) => { canonical.judgeHeld(); judged(callback) } }
      }
      return { abort: readWholeBody(config, collector, input, req, form), judged }
    }
  }
}

/** A body read whole: the fast path's reading when the form is canonical, else busboy's, in one piece. Returns the abort. */
function readWholeBody (config: ParserConfig, collector: PartCollector, input: Buffer, req: BodyRequest, form: ReturnType<typeof readsLikeBusboy>): StageAbort {
  // An empty body is the policy's to judge (an empty form to multipart(), busboy's error to multer): busboy says which.
  const parts = form === null || input.length === 0 ? null : readCanonicalFormSafely(input, form.boundary, form.names)
  if (parts !== null) {
    try {
      return readCanonicalParts(config, collector, input, parts, form?.valuesAsBytes === true)
    } catch (thrown) {
      // What the parts were reported to threw (user code: a fileFilter, a storage engine).
      collector.fault(thrown)
      return (callback) => { collector.abort(callback) }
    }
  }
  // Not canonical: busboy reads the same bytes, in one piece.
  const stream = new Readable({ read () {} })
  stream.push(input)
  stream.push(null)
  return readWithBusboy(config, collector, stream, req, { parser: null })
}

/** The busboy parser of one request's reading, set once it is made. */
interface Parsing {
  parser: busboy.Busboy | null
}

/**
 * Calls `then` once busboy has parsed every byte written to it (it holds a write while a file stream it feeds is
 * full: the bytes after it wait) and what it found was reported (its errors come on the next tick).
 */
function whenParsed (parsing: Parsing, then: () => void): void {
  const { parser } = parsing
  if (parser === null || parser.destroyed || parser.writableLength === 0) setImmediate(then)
  else setTimeout(whenParsed, 1, parsing, then)
}

/** The fast path's reading, or null: it can only ever send a body to busboy, never be the reason a request fails. */
function readCanonicalFormSafely (body: Buffer, boundary: string, names: NameReading): CanonicalPart[] | null {
  try {
    return readCanonicalForm(body, boundary, names)
  } catch {
    return null
  }
}

/** busboy's configuration for reading on after the counts another reader used: its limits less those counts. */
function withCountsUsed (config: ParserConfig, used: UsedCounts): ParserConfig {
  const limits = config.limits ?? {}
  const less = (limit: number | undefined, count: number): number | undefined => limit === undefined ? undefined : limit - count
  return { ...config, limits: { ...limits, parts: less(limits.parts, used.parts), files: less(limits.files, used.files), fields: less(limits.fields, used.fields) } }
}

/**
 * Reads a body stream with busboy: first the `leading` pieces (the rest of a form another reader began, from a
 * delimiter on), then the source. `empty`: whether no byte of the body has arrived yet. Returns the stage's abort.
 */
function readWithBusboy (config: ParserConfig, collector: PartCollector, source: StageInput, req: BodyRequest, parsing: Parsing,
  leading: Buffer[] = [], emptySoFar = true): StageAbort {
  let parser: busboy.Busboy
  const undeclared = config.defCharset === UNDECLARED_AS_BYTES ? new UndeclaredCharset() : null
  const contentType = headerOf(req, 'content-type') as string
  try {
    parser = loadBusboy()({
      ...config,
      ...(undeclared === null ? {} : { defCharset: undeclared as unknown as string }),
      headers: { 'content-type': contentType }
    })
  } catch (err) {
    // busboy's own reading of the Content-Type found no boundary where the policy's check did.
    collector.parserError(err as Error, false)
    return (callback) => { collector.abort(callback) }
  }
  parsing.parser = parser
  // RFC 6266 §4.3: an unreadable `filename*` falls back to `filename` (busboy alone skips the part without a word).
  fallBackFromUnreadableFileNames(parser, config.defParamCharset, (name) => { collector.unreadableFileName(name) })
  parser.on('field', (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
    const asBytes = undeclared?.used === true
    if (asBytes) undeclared.used = false
    collector.field(name, value, info, asBytes)
  })
  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
    collector.file(name, stream, info)
  })
  let empty = emptySoFar
  const onData = (): void => { empty = false }
  if (empty) source.once('data', onData)
  parser.on('partsLimit', () => { collector.countLimit('parts') })
  parser.on('filesLimit', () => { collector.countLimit('files') })
  parser.on('fieldsLimit', () => { collector.countLimit('fields') })
  let failed = false
  // Set once the feed has begun: busboy may fail on the first pieces, within the feed's own first call.
  let stopFeed = noop
  parser.on('error', (err: Error) => {
    if (failed) return
    failed = true
    stopFeed()
    source.removeListener('data', onData)
    collector.parserError(err, empty)
  })
  parser.on('close', () => {
    source.removeListener('data', onData)
    collector.end()
  })
  // One form however the body is split (busboy alone reads on past the closing delimiter, loses some delimiters and
  // reads past a cut header value). After the file-name fallback: both take busboy's header parser, this one first.
  readAlikeHoweverSplit(parser)
  stopFeed = feedBusboy(parser, source, leading, () => failed, {
    fault (thrown) {
      failed = true
      source.removeListener('data', onData)
      collector.fault(thrown)
    },
    // The form can never end: answered as cut short, through busboy's own error (which ends its file stream).
    stalled () { parser.destroy(new Error('Unexpected end of form')) }
  })

  return function abort (callback) {
    stopFeed()
    source.removeListener('data', onData)
    // Destroying the parser destroys the file stream it is writing; errors after this point are latched out.
    parser.on('error', noop)
    parser.destroy()
    collector.abort(callback)
  }
}

/**
 * Reports the parts of a canonical form as busboy would with the same limits: each field or file in order, the
 * files and fields over their counts skipped (reported once), the part count's limit at the part after the last
 * allowed, a field over its size as truncated. Values are UTF-8, or their bytes (`valuesAsBytes`): a canonical
 * part declares no charset. Returns the abort.
 */
function readCanonicalParts (config: ParserConfig, collector: PartCollector, body: Buffer, parts: CanonicalPart[], valuesAsBytes: boolean): StageAbort {
  const limits = config.limits ?? {}
  const fieldSizeLimit = limits.fieldSize ?? 1024 * 1024
  const partsLimit = limits.parts ?? Infinity
  const valueEncoding = valuesAsBytes ? 'latin1' : 'utf8'
  const counts = { files: 0, fields: 0 }
  const reached = { files: false, fields: false }
  let count = 0
  for (const part of parts) {
    if (collector.settled) break
    const kind = part.isFile ? 'files' : 'fields'
    if (counts[kind] === (limits[kind] ?? Infinity)) {
      if (!reached[kind]) {
        reached[kind] = true
        collector.countLimit(kind)
      }
    } else {
      counts[kind]++
      const size = part.end - part.start
      if (part.isFile) {
        collector.fileBytes(part.name, body.subarray(part.start, part.end), part.filename, part.mimeType)
      } else if (size > 0 && size >= fieldSizeLimit) {
        // busboy marks a field truncated once its size reaches the limit, which an empty field never does.
        collector.field(part.name, body.toString(valueEncoding, part.start, part.start + fieldSizeLimit), TRUNCATED_FIELD, valuesAsBytes)
      } else {
        collector.field(part.name, body.toString(valueEncoding, part.start, part.end), WHOLE_FIELD, valuesAsBytes)
      }
    }
    if (++count === partsLimit) collector.countLimit('parts')
  }
  // As from busboy, the end of the form is reported after the parts, not during the caller's own call.
  process.nextTick(() => { collector.end() })
  return (callback) => { collector.abort(callback) }
}

function noop (): void {}
