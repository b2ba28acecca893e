// The reader bodykit had before its own (test oracle): feeds a body to busboy so that its reading always ends: a throw while it reads is reported, not left uncaught, and
// a form it would wait on forever is reported cut short; and makes busboy read a form the same however its body is
// split (nothing after the closing delimiter, every delimiter before it).
import type { Readable } from 'stream'
import type busboy from 'busboy'

/** The body as the old reader read it: a Readable's events (the pipeline's input is no longer one). */
type StageInput = Pick<Readable, 'on' | 'once' | 'removeListener' | 'pause' | 'resume' | 'readableEnded'>

/** What the feed tells the part reader. */
export interface FeedEvents {
  /** A throw from busboy's write or what it calls (a collector, a file stream's listeners: user code among them). */
  fault (thrown: unknown): void
  /** The body ended, busboy has read every byte, and it still waits on a file it can never end. */
  stalled (): void
}

/**
 * compat(busboy 1.x): busboy's reading of a form depends on how its writes are cut; this makes it the same for every
 * split, or returns false, changing nothing, when busboy's internals are not as expected (test/multipart/stall.test.ts
 * then fails). busboy's delimiter search (`_bparser`, a streamsearch) reports to `_cb` the bytes between delimiters
 * and each delimiter found, sometimes with the bytes before it in the same call and sometimes not, depending on the
 * split; busboy reads three things differently by that:
 * - it marks the form complete (`_complete`) at its closing delimiter, yet still reads the rest of the write the
 *   delimiter came in: parts after it count or not, and a file begun there is one busboy then waits on for good.
 *   Once the form is complete the search reports nothing: what follows is an epilogue (RFC 2046 §5.1.1).
 * - a delimiter reported in one call with a single `\r` or `-` before it (`--X\r\r\n--X`) is lost: busboy, still
 *   reading what follows the previous delimiter, returns before it looks at the match. Each match is reported alone,
 *   after its bytes: busboy then reads every delimiter.
 * - its part-header parser (`_hparser`), given bytes that end inside a header value, says it read one byte more than
 *   it was given, and busboy then reads the byte after them (the next delimiter's, or none) as what follows a
 *   delimiter. The parser's answer is kept within what it was given.
 */
export function readAlikeHoweverSplit (parser: busboy.Busboy): boolean {
  const form = parser as unknown as { _complete?: unknown, _bparser?: { _cb?: unknown }, _hparser?: unknown }
  const search = form._bparser
  if (typeof form._complete !== 'boolean' || search == null || typeof search._cb !== 'function' || !('_hparser' in form)) return false
  const report = search._cb as (isMatch: boolean, data: Buffer | undefined, start: number, end: number, isDataSafe: boolean) => void
  let headerParserKept = false
  search._cb = function reportAlike (this: unknown, isMatch: boolean, data: Buffer | undefined, start: number, end: number, isDataSafe: boolean): void {
    if (form._complete === true) return
    // busboy sets `_hparser` to its one header parser when the first part's headers begin, and reads with it at once;
    // a byte read past its piece matters only after a later delimiter, so the parser is kept within at the next call.
    if (!headerParserKept && form._hparser != null) {
      keepWithin(form._hparser as HeaderParser)
      headerParserKept = true
    }
    if (!isMatch || data === undefined || start === end) {
      report.call(this, isMatch, data, start, end, isDataSafe)
      return
    }
    report.call(this, false, data, start, end, isDataSafe)
    if (form._complete !== true) report.call(this, true, undefined, 0, 0, true)
  }
  return true
}

/** busboy's part-header parser: `push` returns where the bytes after the headers start, or -1 when malformed. */
interface HeaderParser {
  push: (chunk: Buffer, start: number, end: number) => number
}

/** Makes the parser's `push` answer at most the end of the bytes it was given. */
function keepWithin (headerParser: HeaderParser): void {
  const push = headerParser.push
  headerParser.push = function pushWithin (chunk: Buffer, start: number, end: number): number {
    const read = push.call(this, chunk, start, end)
    return read > end ? end : read
  }
}

/**
 * Writes `leading` (pieces another reader already took from the source), then the source, to busboy as `pipe`
 * would (the source waits while busboy's buffer is full), and ends it at the source's end. `failed`: busboy reported
 * an error, after which nothing more is written. Returns the feed's stop.
 */
export function feedBusboy (parser: busboy.Busboy, source: StageInput, leading: Buffer[], failed: () => boolean, events: FeedEvents): () => void {
  let ended = false
  let stopped = false
  const openFiles = new Set<Readable>()

  /** Writes one piece; false when busboy asks the writer to wait. */
  const write = (piece: Buffer): boolean => {
    try {
      return parser.write(piece)
    } catch (thrown) {
      stop()
      events.fault(thrown)
      return true
    }
  }

  const endParser = (): void => {
    if (ended) return
    ended = true
    source.removeListener('data', feedData)
    source.removeListener('end', endParser)
    parser.removeListener('drain', resume)
    try {
      parser.end()
    } catch (thrown) {
      stop()
      events.fault(thrown)
      return
    }
    checkLater()
  }

  const feedData = (chunk: Buffer): void => {
    if (ended || stopped) return
    if (failed()) {
      stop()
      return
    }
    if (!write(chunk)) {
      source.pause()
      parser.once('drain', resume)
    }
  }
  const resume = (): void => {
    if (!stopped && !ended) source.resume()
  }

  // busboy ends a file stream only at a delimiter or in an error: one still open once busboy has read every byte
  // (its last write done, its end called) is one it will wait on for good (busboy 1.6 does, after a closing delimiter
  // that was not the last in its piece). The file streams' own reading releases busboy's held writes: checked then.
  const onFile = (_name: string, stream: Readable): void => {
    openFiles.add(stream)
    const push = stream.push
    stream.push = function pushTracked (chunk: unknown, encoding?: BufferEncoding): boolean {
      if (chunk === null) openFiles.delete(stream)
      return push.call(stream, chunk, encoding)
    }
    // A read of the stream releases a write busboy held for it: busboy may then read on, and end.
    const read = stream._read
    stream._read = function readTracked (size: number): void {
      read.call(stream, size)
      checkLater()
    }
    stream.once('close', () => { openFiles.delete(stream) })
    stream.once('end', checkLater)
  }
  let checking = false
  function checkLater (): void {
    if (!ended || checking || stopped) return
    checking = true
    setImmediate(() => {
      checking = false
      if (stopped || failed() || parser.writableFinished || parser.destroyed || parser.writableLength > 0) return
      for (const stream of openFiles) {
        if (stream.destroyed) continue
        stop()
        events.stalled()
        return
      }
    })
  }

  function stop (): void {
    if (stopped) return
    stopped = true
    source.removeListener('data', feedData)
    source.removeListener('end', endParser)
    parser.removeListener('drain', resume)
    parser.removeListener('file', onFile)
  }

  parser.on('file', onFile)
  let index = 0
  const writeLeading = (): void => {
    while (index < leading.length) {
      if (stopped || ended || failed()) return
      if (!write(leading[index++])) {
        parser.once('drain', writeLeading)
        return
      }
    }
    if (stopped || ended || failed()) return
    // The source may have ended while another reader read it: then busboy ends after the pieces.
    if (source.readableEnded) {
      endParser()
      return
    }
    source.on('data', feedData)
    source.once('end', endParser)
    source.resume()
  }
  // Held until busboy has taken the pieces: what the source brings meanwhile waits in its buffer.
  if (leading.length > 0) source.pause()
  writeLeading()
  return stop
}
