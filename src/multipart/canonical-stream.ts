// The fast path for streamed forms: canonical parts read as they arrive, their data searched with Buffer.indexOf,
// and from the first delimiter followed by anything else, busboy reads on (test/multipart/stream.test.ts proves
// the reading equal to busboy's for the same pieces).
import { Readable } from 'stream'
import type { StageInput } from '../stage-input'
import type { StageAbort } from '../read'
import { readPartHeaders, type NameReading } from './canonical-form'
import { GuardedStream } from './guarded-stream'
import { TRUNCATED_FIELD, WHOLE_FIELD, type CountLimit, type FieldPartInfo, type FilePartInfo, type ParserConfig, type PartCollector } from './part-collector'

/** The delimiters, files and fields this reader counted: busboy, reading on, takes them off its limits. */
export interface UsedCounts {
  readonly parts: number
  readonly files: number
  readonly fields: number
}

/**
 * Makes busboy read the rest of the form: `pieces` are the bytes from a delimiter on (its `--boundary` first,
 * then what followed it, in the pieces it came in), then busboy reads the source itself, reporting to
 * `collector`. Returns its abort.
 */
export type HandOver = (pieces: Buffer[], used: UsedCounts, empty: boolean, collector: PartCollector) => StageAbort

/** How a canonical form is read: its boundary, names and values as busboy would decode them. */
export interface StreamedForm {
  readonly boundary: string
  readonly names: NameReading
  readonly valuesAsBytes: boolean
}

/** A file part's data, as busboy's file stream gives it: `truncated` and a 'limit' event once cut at the size limit. */
class FilePartStream extends GuardedStream {
  truncated = false
  constructor (highWaterMark: number | undefined, private readonly onRead: () => void) {
    super(highWaterMark === undefined ? {} : { highWaterMark })
  }

  override _read (): void {
    this.onRead()
  }
}

/**
 * The collector busboy reports to once it reads on. busboy ends a form only once every file stream it made has
 * ended; the ones this reader made before are waited for the same way.
 */
class CollectorAfterHandOver implements PartCollector {
  private failed = false
  private endWaits = false
  constructor (private readonly collector: PartCollector, private readonly unendedFiles: () => number) {}
  get settled (): boolean { return this.collector.settled }
  field (name: string | undefined, value: string | undefined, info: FieldPartInfo, asBytes: boolean): void { this.collector.field(name, value, info, asBytes) }
  file (name: string | undefined, stream: Readable, info: FilePartInfo): void { this.collector.file(name, stream, info) }
  fileBytes (name: string, bytes: Buffer, filename: string | undefined, mimeType: string): void { this.collector.fileBytes(name, bytes, filename, mimeType) }
  countLimit (limit: CountLimit): void { this.collector.countLimit(limit) }
  unreadableFileName (name: string | undefined): void { this.collector.unreadableFileName(name) }
  fault (thrown: unknown): void { this.collector.fault(thrown) }
  abort (callback: (own?: Error) => void): void { this.collector.abort(callback) }
  whenJudged (callback: () => void): void { this.collector.whenJudged(callback) }
  parserError (err: Error, empty: boolean): void {
    // After an error busboy closes at once, without waiting for its file streams.
    this.failed = true
    this.collector.parserError(err, empty)
  }

  end (): void {
    if (this.failed || this.unendedFiles() === 0) this.collector.end()
    else this.endWaits = true
  }

  /** This reader's last file stream ended. */
  filesEnded (): void {
    if (!this.endWaits) return
    this.endWaits = false
    process.nextTick(() => { this.collector.end() })
  }
}

/** A header block longer than this is busboy's to read (the whole-body fast path has the same bound). */
const MAX_HEADER_BLOCK = 8192
const HEADERS_END = Buffer.from('\r\n\r\n')
const CR = 0x0d
const DASH = 0x2d

/**
 * Whether `piece` begins with `count` bytes of `bytes` from `from`. Compared by hand: Deno 2.9's Buffer#compare
 * checks the target's end against the piece's own length and throws when the piece is the shorter.
 */
function continuesAt (piece: Buffer, bytes: Buffer, from: number, count: number): boolean {
  for (let i = 0; i < count; i++) if (piece[i] !== bytes[from + i]) return false
  return true
}

/** A canonical stream's reading: its abort, and what the stage calls once the body was cut at its limit. */
export interface CanonicalReading {
  readonly abort: StageAbort
  /** Hands a header block held whole to busboy, to be judged by the bytes it has. */
  readonly judgeHeld: () => void
}

/**
 * Reads a streamed form as busboy would, for as long as it is canonical: parts (after any preamble, which busboy
 * ignores too) whose headers the whole-body fast path accepts, within busboy's counts, and a closing delimiter
 * after which busboy would find nothing more. The first delimiter followed by anything else is handed to busboy with what came
 * after it. A body that ends inside a part's data is cut short, as busboy says. Returns the stage's abort, and the
 * judgement of a header block it holds.
 */
export function readCanonicalStream (source: StageInput, form: StreamedForm, config: ParserConfig, collector: PartCollector, handOver: HandOver): CanonicalReading {
  const limits = config.limits ?? {}
  const partsLimit = limits.parts ?? Infinity
  const filesLimit = limits.files ?? Infinity
  const fieldsLimit = limits.fields ?? Infinity
  const fieldSizeLimit = limits.fieldSize ?? 1024 * 1024
  const fileSizeLimit = limits.fileSize ?? Infinity
  const valueEncoding = form.valuesAsBytes ? 'latin1' : 'utf8'
  const delimiter = Buffer.from('--' + form.boundary, 'latin1')
  // busboy searches for CRLF + delimiter, and reads the body as if a CRLF came before it.
  const needle = Buffer.from('\r\n--' + form.boundary, 'latin1')

  let state: 'data' | 'delimiter' | 'complete' | 'handed' | 'stopped' = 'data'
  /** Pieces waiting to be read: a piece's rest goes back here when the state changes within it. */
  const queue: Buffer[] = []
  /** After a delimiter, what followed it, in the pieces it came in (for busboy, if it reads on). */
  let pending: Buffer[] = []
  let pendingLength = 0
  /** In a part's data, the start of a delimiter at the end of the last piece. The body's start counts as after a CRLF. */
  let carry: Buffer | null = Buffer.from('\r\n')
  // busboy's counts: `parts` starts at -1, as the first delimiter opens the first part.
  let parts = -1
  let files = 0
  let fields = 0
  let empty = true
  let sourceEnded = false
  let busboyAbort: StageAbort | null = null
  let afterHandOver: CollectorAfterHandOver | null = null

  // The part being read: a file (its stream), a field (its bytes), or neither (before the first delimiter).
  let fileStream: FilePartStream | null = null
  let fileSize = 0
  let fieldName: string | null = null
  let fieldChunks: Buffer[] = []
  let fieldSize = 0
  /** busboy's skipPart: the part was cut at its size limit; the rest of its data is dropped. */
  let skipping = false
  let truncated = false

  let unendedFiles = 0
  let pausedFor: FilePartStream | null = null

  const onData = (chunk: Buffer): void => {
    empty = false
    queue.push(chunk)
    try {
      drain()
    } catch (thrown) {
      // What the parts are reported to threw (user code: a fileFilter, a storage engine, a file stream's listener).
      stopReading()
      collector.fault(thrown)
    }
  }
  const onEnd = (): void => {
    sourceEnded = true
    if (state === 'delimiter') handOverToBusboy()
    else if (state === 'data') endCutShort()
    else if (state === 'complete') endIfFilesEnded()
  }
  source.on('data', onData)
  source.on('end', onEnd)

  function drain (): void {
    while (queue.length > 0) {
      const piece = queue.shift() as Buffer
      if (state === 'data') {
        const rest = readData(piece)
        if (rest !== null && rest.length > 0) queue.unshift(rest)
      } else if (state === 'delimiter') {
        pending.push(piece)
        pendingLength += piece.length
        readAfterDelimiter()
      } else if (state !== 'complete') {
        // Handed over or stopped: nothing more is read here.
        queue.length = 0
      }
    }
  }

  /** Reads a piece of a part's data. Returns what follows a delimiter found in it (the state is then 'delimiter'), else null. */
  function readData (piece: Buffer): Buffer | null {
    if (carry !== null) {
      const need = needle.length - carry.length
      const seen = Math.min(need, piece.length)
      if (continuesAt(piece, needle, carry.length, seen)) {
        if (seen < need) {
          carry = Buffer.concat([carry, piece])
          return null
        }
        carry = null
        endPart()
        return piece.subarray(need)
      }
      // Not a delimiter after all: those bytes were data (a delimiter holds one CR, at its start, so none begins inside them).
      const bytes = carry
      carry = null
      writeData(bytes)
    }
    const at = piece.indexOf(needle)
    if (at !== -1) {
      writeData(piece.subarray(0, at))
      endPart()
      return piece.subarray(at + needle.length)
    }
    const kept = delimiterStartAtEnd(piece)
    writeData(piece.subarray(0, kept))
    if (kept < piece.length) carry = Buffer.from(piece.subarray(kept))
    return null
  }

  /** Where the piece ends with the start of a delimiter (copied, as busboy keeps it aside), else its length. */
  function delimiterStartAtEnd (piece: Buffer): number {
    // Only the last CR within a delimiter's length of the end can start one (a delimiter holds one CR, at its
    // start); searched by hand, as lastIndexOf would scan the whole piece when it holds none.
    const from = Math.max(0, piece.length - needle.length + 1)
    let at = piece.length - 1
    while (at >= from && piece[at] !== CR) at--
    if (at < from) return piece.length
    return piece.compare(needle, 0, piece.length - at, at) === 0 ? at : piece.length
  }

  /** A part's data, as busboy counts it against the size limits (bytes past a limit are dropped). */
  function writeData (bytes: Buffer): void {
    if (bytes.length === 0 || skipping) return
    if (fileStream !== null) {
      const chunk = bytes.length > fileSizeLimit - fileSize ? bytes.subarray(0, fileSizeLimit - fileSize) : bytes
      fileSize += chunk.length
      if (fileSize === fileSizeLimit) {
        if (chunk.length > 0) fileStream.push(chunk)
        // In busboy's order: 'limit' is emitted before the stream is marked truncated.
        fileStream.emit('limit')
        fileStream.truncated = true
        skipping = true
      } else if (!fileStream.push(chunk) && pausedFor === null) {
        // busboy holds its write until the file stream is read: the source waits the same way.
        pausedFor = fileStream
        source.pause()
      }
    } else if (fieldName !== null) {
      const chunk = bytes.length > fieldSizeLimit - fieldSize ? bytes.subarray(0, fieldSizeLimit - fieldSize) : bytes
      fieldSize += chunk.length
      fieldChunks.push(chunk)
      if (fieldSize === fieldSizeLimit) {
        skipping = true
        truncated = true
      }
    }
  }

  /** A delimiter was found: the part before it ends (a file's stream ends, a field is reported). */
  function endPart (): void {
    if (fileStream !== null) {
      fileStream.push(null)
      fileStream = null
    } else if (fieldName !== null) {
      // As busboy: a field that got no data is '' without being decoded (so not reported as bytes either).
      const decoded = fieldChunks.length > 0
      const value = !decoded ? '' : fieldChunks.length === 1
        ? fieldChunks[0].toString(valueEncoding)
        : Buffer.concat(fieldChunks, fieldSize).toString(valueEncoding)
      const name = fieldName
      fieldName = null
      fieldChunks = []
      collector.field(name, value, truncated ? TRUNCATED_FIELD : WHOLE_FIELD, form.valuesAsBytes && decoded)
    }
    skipping = false
    truncated = false
    state = 'delimiter'
    pending = []
    pendingLength = 0
  }

  /** After a delimiter: the closing one, or a canonical part's headers, are read here; anything else goes to busboy. */
  function readAfterDelimiter (): void {
    // busboy would report the part count's limit at this delimiter: it counts it itself.
    if (parts + 1 === partsLimit) return handOverToBusboy()
    if (pendingLength < 2) return
    const first = pending[0].length >= 2 ? pending[0] : Buffer.concat(pending)
    if (first[0] === DASH && first[1] === DASH) return readClosing()
    if (first[0] !== CR || first[1] !== 0x0a) return handOverToBusboy()
    const bytes = pending.length === 1 ? pending[0] : Buffer.concat(pending, pendingLength)
    const headersEnd = bytes.indexOf(HEADERS_END)
    if (headersEnd === -1) {
      if (pendingLength > MAX_HEADER_BLOCK + needle.length) handOverToBusboy()
      return
    }
    // The block runs from after the delimiter's CRLF to its last line's CRLF; none at all is busboy's to read.
    if (headersEnd < 2 || headersEnd - 2 > MAX_HEADER_BLOCK) return handOverToBusboy()
    // A delimiter may begin at the empty line's CRLF (busboy would end the block there): as busboy's search, wait
    // until the bytes after it are a whole delimiter (busboy's to read) or differ from one (the block ends).
    const emptyLine = headersEnd + 2
    const seen = Math.min(bytes.length - emptyLine, needle.length)
    if (bytes.compare(needle, 0, seen, emptyLine, emptyLine + seen) === 0) {
      if (seen === needle.length) handOverToBusboy()
      return
    }
    // A delimiter that begins before the block's end lies inside the block (a delimiter holds one CR, at its start).
    // Only the block is searched: the data after it is searched once, as data.
    if (bytes.subarray(0, headersEnd - 1 + needle.length).indexOf(needle) !== -1) return handOverToBusboy()
    const dataStart = headersEnd + 4
    const headers = readPartHeaders(bytes, 2, headersEnd, form.names)
    if (headers === null) return handOverToBusboy()
    // A part over the file or field count is busboy's to report.
    if (headers.isFile ? files === filesLimit : fields === fieldsLimit) return handOverToBusboy()
    parts++
    state = 'data'
    carry = null
    if (headers.isFile) {
      files++
      fileSize = 0
      const stream = new FilePartStream(config.fileHwm, () => { resumeFor(stream) })
      unendedFiles++
      stream.once('end', () => {
        resumeFor(stream)
        unendedFiles--
        if (state === 'complete' && sourceEnded) endIfFilesEnded()
        else if (afterHandOver !== null && unendedFiles === 0) afterHandOver.filesEnded()
      })
      fileStream = stream
      collector.file(headers.name, stream, { filename: headers.filename, encoding: '7bit', mimeType: headers.mimeType })
    } else {
      fields++
      fieldName = headers.name
      fieldSize = 0
    }
    // The data that came with the headers is read next, in the pieces it came in.
    queue.unshift(...piecesFrom(pending, dataStart))
    pending = []
    pendingLength = 0
  }

  /**
   * The closing delimiter. busboy ignores what follows it, except that it goes on counting delimiters (and reading
   * parts after them) in the rest of the piece its last dash came in: such a rest is busboy's to read.
   */
  function readClosing (): void {
    let offset = 1
    let index = 0
    while (offset >= pending[index].length) offset -= pending[index++].length
    if (pending[index].indexOf(needle, offset + 1) !== -1) return handOverToBusboy()
    parts++
    state = 'complete'
    pending = []
    pendingLength = 0
    if (sourceEnded) endIfFilesEnded()
  }

  /** busboy reads on from the last delimiter, with this reader's counts taken off its limits. */
  function handOverToBusboy (): void {
    state = 'handed'
    source.removeListener('data', onData)
    source.removeListener('end', onEnd)
    const pieces = [delimiter, ...pending, ...queue.splice(0)]
    pending = []
    pausedFor = null
    afterHandOver = new CollectorAfterHandOver(collector, () => unendedFiles)
    busboyAbort = handOver(pieces, { parts: parts + 1, files, fields }, empty, afterHandOver)
  }

  /** The body ended inside a part's data (or before the first delimiter): busboy's 'Unexpected end of form'. */
  function endCutShort (): void {
    stopReading()
    // busboy reads the start of a delimiter it had kept aside as data before it fails.
    if (carry !== null) writeData(carry)
    carry = null
    const err = new Error('Unexpected end of form')
    if (fileStream !== null) {
      fileStream.destroy(err)
      fileStream = null
    }
    // busboy's 'error', then its 'close', which the part reader reports as the end.
    process.nextTick(() => {
      collector.parserError(err, empty)
      collector.end()
    })
  }

  /** The form is complete: its end is reported once the body has ended and every file stream was read to its end, as busboy's 'close'. */
  function endIfFilesEnded (): void {
    if (unendedFiles > 0 || state !== 'complete') return
    stopReading()
    process.nextTick(() => { collector.end() })
  }

  function resumeFor (stream: FilePartStream): void {
    if (pausedFor !== stream) return
    pausedFor = null
    if (state !== 'handed' && state !== 'stopped') source.resume()
  }

  function stopReading (): void {
    state = 'stopped'
    source.removeListener('data', onData)
    source.removeListener('end', onEnd)
  }

  /**
   * The body was cut at its limit (the 413 waits for the form's judgement of the bytes before it): a header block
   * held whole before it is read goes to busboy now, which judges its bytes as they are (a malformed line within the
   * limit is the answer), not once the block is complete, which it never will be.
   */
  function judgeHeld (): void {
    if (state === 'delimiter') handOverToBusboy()
  }

  const abort: StageAbort = function abort (callback) {
    if (busboyAbort !== null) return busboyAbort(callback)
    stopReading()
    if (fileStream !== null) {
      // As busboy destroyed: the file being written ends in an error.
      fileStream.destroy(new Error('Unexpected end of file'))
      fileStream = null
    }
    collector.abort(callback)
  }
  return { abort, judgeHeld }
}

/** The pieces' bytes from `offset` on, still in the pieces they came in. */
function piecesFrom (pieces: Buffer[], offset: number): Buffer[] {
  const rest: Buffer[] = []
  for (const piece of pieces) {
    if (offset >= piece.length) {
      offset -= piece.length
      continue
    }
    rest.push(offset === 0 ? piece : piece.subarray(offset))
    offset = 0
  }
  return rest
}
