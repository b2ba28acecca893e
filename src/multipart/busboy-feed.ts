// Feeds a body to busboy so that its reading always ends: a throw while it reads is reported, not left uncaught, and
// a form it would wait on forever is reported cut short; and, where the policy says so, busboy reads nothing after
// the closing delimiter, so that the form is the same however the body is split.
import type { Readable } from 'stream'
import type busboy from 'busboy'

/** What the feed tells the part reader. */
export interface FeedEvents {
  /** A throw from busboy's write or what it calls (a collector, a file stream's listeners: user code among them). */
  fault (thrown: unknown): void
  /** The body ended, busboy has read every byte, and it still waits on a file it can never end. */
  stalled (): void
}

/**
 * compat(busboy 1.x): busboy marks a form complete (`_complete`) at its closing delimiter and then ignores later
 * writes, but still reads the rest of the write the delimiter came in: parts after it count or not depending on how
 * the body was split, and a file begun there is one busboy then waits on for good. Its delimiter search (`_bparser`,
 * a streamsearch whose callback is `_cb`) is made to report nothing once the form is complete: what follows the
 * closing delimiter is an epilogue (RFC 2046 §5.1.1), whatever the split. False, and nothing changed, when busboy's
 * internals are not as expected (test/multipart/stall.test.ts then fails).
 */
export function endAtClosingDelimiter (parser: busboy.Busboy): boolean {
  const form = parser as unknown as { _complete?: unknown, _bparser?: { _cb?: unknown } }
  const search = form._bparser
  if (typeof form._complete !== 'boolean' || search == null || typeof search._cb !== 'function') return false
  const report = search._cb as (...args: unknown[]) => void
  search._cb = function reportUntilComplete (this: unknown, ...args: unknown[]): void {
    if (form._complete !== true) report.apply(this, args)
  }
  return true
}

/**
 * Writes `leading` (pieces another reader already took from the source), then the source, to busboy as `pipe`
 * would (the source waits while busboy's buffer is full), and ends it at the source's end. `failed`: busboy reported
 * an error, after which nothing more is written. Returns the feed's stop.
 */
export function feedBusboy (parser: busboy.Busboy, source: Readable, leading: Buffer[], failed: () => boolean, events: FeedEvents): () => void {
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
