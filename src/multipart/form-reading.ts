// One form's reading in both builds: the byte machine's header blocks, data and delimiters made into busboy 1.6's
// events (fields, files, count limits), with its configuration's limits and charsets. Synchronous and total.
import { busboyEncodingOf, type BusboyEncoding } from './charsets'
import { createPartParser, type PartHeaders, type ParserTools } from './form-parser'
import { paramDecoderFor, readDisposition, readMediaType, type NameRules } from './part-headers'

/** busboy's configuration, as bodykit's policies set it (multer hands its own options on as multer does). */
export interface ReadingConfig {
  readonly limits?: Readonly<Record<string, number | undefined>> | undefined
  /** The charset of a field whose part declares none (busboy's `utf8` when not given). */
  readonly defCharset?: string | undefined
  /**
   * bodykit's own: a field whose part declares no charset is reported as its bytes, for the policy to decode once the
   * whole form (and its `_charset_`) is known; `defCharset` is then not used.
   */
  readonly undeclaredAsBytes?: boolean | undefined
  /** The charset of names and file names (busboy's `defParamCharset`: none when not given). */
  readonly defParamCharset?: string | undefined
  readonly preservePath?: boolean | undefined
  /** The Node builds' file streams' `highWaterMark`. */
  readonly fileHwm?: number | undefined
  readonly highWaterMark?: number | undefined
}

/** What busboy says of a field part. */
export interface FieldPartInfo {
  readonly nameTruncated: boolean
  readonly valueTruncated: boolean
}

/** What busboy says of a file part. */
export interface FilePartInfo {
  readonly filename: string | undefined
  readonly encoding: string
  readonly mimeType: string
}

/** A count busboy stops at: the part after the last one allowed is reported once. */
export type CountLimit = 'parts' | 'files' | 'fields'

/** Where a file part's bytes go, as busboy's file stream takes them. */
export interface FileSink {
  /** `bytes[start..end)`: a view of the chunk written (or of a byte the machine put back), never empty. */
  data (bytes: Uint8Array, start: number, end: number): void
  /** The file reached its size limit: no more of its bytes come (busboy's 'limit', then `truncated`). */
  limit (): void
  /** The file's part ended at a delimiter. */
  end (): void
}

/** What a form's reading reports, in the order of the body's bytes. */
export interface FormEvents {
  /**
   * A field: its value decoded as busboy decodes it (undefined where busboy cannot), or, under `undeclaredAsBytes`,
   * the bytes of a value whose part declares no charset (a view of the body's chunk, or a copy of its pieces).
   */
  field (name: string | undefined, value: string | Uint8Array | undefined, info: FieldPartInfo): void
  file (name: string | undefined, info: FilePartInfo): FileSink
  countLimit (limit: CountLimit): void
  /** A part whose `filename*` cannot be read and which has no plain `filename` (RFC 6266 §4.3): skipped, the form refused. */
  unreadableFileName (name: string | undefined): void
  /** busboy's 'Malformed part header': nothing more is read. */
  malformed (): void
}

/** What a build gives a reading: its delimiter search, and text from bytes. */
export interface ByteTools extends ParserTools {
  /** `bytes[start..end)` in one of busboy's own decodings. */
  decode (bytes: Uint8Array, start: number, end: number, encoding: BusboyEncoding): string
  join (pieces: readonly Uint8Array[], size: number): Uint8Array
}

/** One form's reading, fed by its caller. Its events' throws (user code) pass through to the caller of write/end. Methods only (see PartParser). */
export interface FormReading {
  write (chunk: Uint8Array): void
  /** The body ended: whether the form was complete (its closing delimiter read), else it was cut short. */
  end (): boolean
}

const DEFAULT_FIELD_SIZE = 1024 * 1024
const WHOLE: FieldPartInfo = { nameTruncated: false, valueTruncated: false }
const TRUNCATED: FieldPartInfo = { nameTruncated: false, valueTruncated: true }

function limitOf (config: ReadingConfig, name: string, fallback: number): number {
  const value = config.limits?.[name]
  return typeof value === 'number' ? value : fallback
}

/** Starts reading a form with `boundary` (busboy's reading of the Content-Type), reporting to `events`. */
export function startFormReading (boundary: string, config: ReadingConfig, events: FormEvents, bytes: ByteTools): FormReading {
  const fieldSizeLimit = limitOf(config, 'fieldSize', DEFAULT_FIELD_SIZE)
  const fileSizeLimit = limitOf(config, 'fileSize', Infinity)
  const filesLimit = limitOf(config, 'files', Infinity)
  const fieldsLimit = limitOf(config, 'fields', Infinity)
  const partsLimit = limitOf(config, 'parts', Infinity)
  const names: NameRules = { decodeParam: paramDecoderFor(config.defParamCharset), preservePath: config.preservePath === true }
  const undeclared = config.defCharset || 'utf8'
  const keepsBytes = config.undeclaredAsBytes === true

  // busboy's counts: the first delimiter opens the first part.
  let parts = -1
  let files = 0
  let fields = 0
  let filesHit = false
  let fieldsHit = false
  // The part being read: a file (its sink), a field (its bytes), or neither (skipped, or before the first delimiter).
  let skip = false
  let sink: FileSink | null = null
  let size = 0
  // A field's bytes: its first piece where it lies (most fields come in one), then any others as views.
  let inField = false
  let first: Uint8Array | null = null
  let firstStart = 0
  let firstEnd = 0
  let more: Uint8Array[] | null = null
  let truncated = false
  let name: string | undefined
  let charset: string | null = null
  let encoding = '7bit'
  let mimeType = 'text/plain'

  function readPart (headers: PartHeaders): boolean {
    skip = false
    truncated = false
    charset = null
    mimeType = 'text/plain'
    encoding = '7bit'
    const disposition = readDisposition(headers.disposition, names)
    name = disposition?.name
    if (disposition === null || disposition.unreadable) {
      skip = true
      if (disposition !== null) events.unreadableFileName(name)
      return false
    }
    if (headers.type !== undefined) {
      const type = readMediaType(headers.type, 'charset')
      if (type !== null) {
        mimeType = type.mediaType
        if (type.parameter !== undefined) charset = type.parameter.toLowerCase()
      }
    }
    if (headers.encoding !== undefined) encoding = headers.encoding.toLowerCase()
    const fileName = disposition.fileName
    if (mimeType === 'application/octet-stream' || fileName !== undefined) {
      if (files === filesLimit) return countOver('files')
      files++
      size = 0
      sink = events.file(name, { filename: fileName, encoding, mimeType })
    } else {
      if (fields === fieldsLimit) return countOver('fields')
      fields++
      size = 0
      inField = true
      first = more = null
    }
    return false
  }

  /** A file or field past its count: skipped, the count's limit reported the first time. */
  function countOver (kind: 'files' | 'fields'): false {
    skip = true
    if (kind === 'files' ? !filesHit : !fieldsHit) {
      if (kind === 'files') filesHit = true
      else fieldsHit = true
      events.countLimit(kind)
    }
    return false
  }

  function readData (chunk: Uint8Array, start: number, end: number): boolean {
    if (skip) return false
    if (sink !== null) {
      const taken = Math.min(end - start, fileSizeLimit - size)
      size += taken
      if (size === fileSizeLimit) {
        if (taken > 0) sink.data(chunk, start, start + taken)
        skip = true
        sink.limit()
      } else {
        sink.data(chunk, start, end)
      }
    } else if (inField) {
      const taken = Math.min(end - start, fieldSizeLimit - size)
      size += taken
      // compat(busboy): an empty piece too, so that a field cut at a size limit of 0 is decoded (as '').
      if (first === null) {
        first = chunk
        firstStart = start
        firstEnd = start + taken
      } else {
        more ??= [first.subarray(firstStart, firstEnd)]
        more.push(chunk.subarray(start, start + taken))
      }
      if (size === fieldSizeLimit) {
        skip = true
        truncated = true
      }
    }
    return false
  }

  function endPart (): boolean {
    closePart()
    if (++parts === partsLimit) events.countLimit('parts')
    // compat(busboy): past the part count, no header block is read, and nothing of a part.
    if (parts >= partsLimit) parser.ignoreHeaders()
    return false
  }

  /** The part being read ends: a file's sink is ended, a field reported. */
  function closePart (): void {
    if (sink !== null) {
      const ended = sink
      sink = null
      ended.end()
    } else if (inField) {
      inField = false
      const info = truncated ? TRUNCATED : WHOLE
      // As busboy: a field that got no data is '' without being decoded (so not reported as bytes either).
      if (first === null) events.field(name, '', info)
      else {
        const bytesOf = more === null ? first : bytes.join(more, size)
        const start = more === null ? firstStart : 0
        const end = more === null ? firstEnd : size
        first = more = null
        if (charset === null && keepsBytes) events.field(name, more === null ? bytesOf.subarray(start, end) : bytesOf, info)
        else {
          const known = busboyEncodingOf(charset ?? undeclared)
          events.field(name, known === null ? undefined : bytes.decode(bytesOf, start, end, known), info)
        }
      }
    }
  }

  const parser = createPartParser(boundary, {
    headers: readPart,
    data: readData,
    delimiter: endPart,
    malformed () {
      events.malformed()
      return true
    }
  }, bytes)

  return {
    write (chunk) { parser.write(chunk) },
    end () {
      const complete = parser.end()
      // A part whose header block held its delimiter (busboy reads on in the block) opened after that delimiter, and
      // the form's closing `--` can follow its block. busboy drops such a field, as here; such a file it leaves open
      // for good (multer never answers): here it ends with the form.
      if (complete && sink !== null) closePart()
      return complete
    }
  }
}
