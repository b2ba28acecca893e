// The Node builds' multipart stage: the body read by the one form reading (form-reading.ts) as it arrives, each part
// reported to the policy's collector, each file as a stream that holds the body back while it is full.
import type { ServerResponse } from 'http'
import type { HttpError } from 'http-errors'
import type { BodyStage, StageReading, StageResult } from '../read'
import type { StageInput } from '../stage-input'
import type { BodyRequest } from '../variants'
import { headerOf } from '../sources/source'
import { startFormReading, type FileSink, type FormReading, type ReadingConfig } from './form-reading'
import { GuardedStream } from './guarded-stream'
import { asBuffer, NODE_BYTES } from './node-bytes'
import type { PartCollector } from './part-collector'
import { readBoundaryType } from './part-headers'

/** What a form means: multipart()'s rules, or multer's. Fixed when the middleware is created. */
export interface FormPolicy {
  /** An error known from the headers alone (e.g. no boundary): the body is refused unread. */
  check (req: BodyRequest): HttpError | Error | null
  /**
   * One request's reading: busboy's configuration (charsets and the limits it counts) and the collector the parts go
   * to, which calls `done` once, with the error or the form. May throw (multer's `limits` function).
   */
  begin (req: BodyRequest, res: ServerResponse | undefined, done: (err: HttpError | Error | null, result?: StageResult) => void): {
    config: ReadingConfig
    collector: PartCollector
  }
}

/** A file part's bytes, as busboy's file stream gives them: `truncated` and a 'limit' event once cut at the size limit. */
class FileStream extends GuardedStream {
  truncated = false
  constructor (highWaterMark: number | undefined, private readonly onRead: (stream: FileStream) => void) {
    super(highWaterMark === undefined ? {} : { highWaterMark })
  }

  override _read (): void {
    this.onRead(this)
  }
}

const NO_READING: StageReading = {
  abort: (callback) => { process.nextTick(callback) },
  judged: (callback) => { process.nextTick(callback) }
}

/** Builds the multipart stage of a policy. */
export function createMultipartStage (policy: FormPolicy): BodyStage {
  return {
    check (req) {
      return policy.check(req)
    },
    start (input, req, res, done) {
      let reading: ReturnType<FormPolicy['begin']>
      try {
        reading = policy.begin(req, res, done)
      } catch (err) {
        process.nextTick(done, err as Error)
        return NO_READING
      }
      return readForm(input, headerOf(req, 'content-type') ?? '', reading.config, reading.collector)
    }
  }
}

/**
 * Reads a body stream as a form: what it holds goes to `collector` as busboy reports it, the form's end once the body
 * has ended and every file stream was read to its end. A file stream that is full pauses the body until it is read.
 */
function readForm (input: StageInput, contentType: string, config: ReadingConfig, collector: PartCollector): StageReading {
  let received = 0
  let stopped = false
  /** File streams made and not yet read to their end: the form's end waits for them, as busboy's 'close' does. */
  let unended = 0
  let complete = false
  let current: FileStream | null = null
  let pausedFor: FileStream | null = null

  const resumeFor = (stream: FileStream): void => {
    if (pausedFor !== stream) return
    pausedFor = null
    if (!stopped) input.resume()
  }
  const endForm = (): void => { process.nextTick(() => { collector.end() }) }
  const sinkOf = (stream: FileStream): FileSink => ({
    data (bytes, start, end) {
      if (stream.destroyed) return
      // A view of the chunk; a byte the machine put back (a held delimiter's start) is its own, so it is copied.
      const chunk = Buffer.isBuffer(bytes) ? bytes.subarray(start, end) : Buffer.from(bytes.subarray(start, end))
      if (!stream.push(chunk) && pausedFor === null) {
        pausedFor = stream
        input.pause()
      }
    },
    limit () {
      // In busboy's order: 'limit' is emitted before the stream is marked truncated.
      stream.emit('limit')
      stream.truncated = true
    },
    end () {
      current = null
      stream.push(null)
    }
  })

  // busboy's own reading of the Content-Type: the policies' checks have made sure it has a boundary.
  const boundary = readBoundaryType(contentType)?.parameter
  const form: FormReading | null = boundary === undefined ? null : startFormReading(boundary, config, {
    field (name, value, info) { collector.field(name, value, info) },
    file (name, info) {
      const stream = new FileStream(config.fileHwm, resumeFor)
      unended++
      stream.once('end', () => {
        resumeFor(stream)
        if (--unended === 0 && complete) endForm()
      })
      // A stream its reader destroyed is never read again: the body goes on.
      stream.once('close', () => { resumeFor(stream) })
      current = stream
      collector.file(name, stream, info)
      return sinkOf(stream)
    },
    countLimit (limit) { collector.countLimit(limit) },
    unreadableFileName (name) { collector.unreadableFileName(name) },
    malformed () {
      stopReading()
      const err = new Error('Malformed part header')
      // A header block after a file's first bytes (a delimiter inside its own header block) is refused while the
      // file is open: busboy leaves that file stream unended, and multer waits for it for good. It ends in the error.
      if (current !== null) current.destroy(err)
      current = null
      collector.parserError(err, false)
    }
  }, NODE_BYTES)

  /** What the parts were reported to threw (user code: a fileFilter, a storage engine, a file stream's listener). */
  const fault = (thrown: unknown): void => {
    stopReading()
    collector.fault(thrown)
  }
  const onData = (chunk: Buffer): void => {
    if (stopped) return
    received += chunk.length
    try {
      (form as FormReading).write(asBuffer(chunk))
    } catch (thrown) {
      fault(thrown)
    }
  }
  const onEnd = (): void => {
    if (stopped) return
    let wasComplete: boolean
    try {
      wasComplete = (form as FormReading).end()
    } catch (thrown) {
      fault(thrown)
      return
    }
    if (stopped) return
    stopReading()
    if (wasComplete) {
      complete = true
      if (unended === 0) endForm()
      return
    }
    // Cut short: busboy destroys the file it was writing with its error, reports it, then closes.
    const err = new Error('Unexpected end of form')
    if (current !== null) current.destroy(err)
    current = null
    process.nextTick(() => {
      collector.parserError(err, received === 0)
      collector.end()
    })
  }
  /** The input's pieces are no longer read (the pipeline stops the input itself once the read has settled). */
  function stopReading (): void {
    stopped = true
  }

  if (form === null) {
    stopped = true
    process.nextTick(() => { collector.parserError(new Error('Multipart: Boundary not found'), true) })
  } else {
    input.read(onData, onEnd)
  }
  return {
    abort (callback) {
      stopReading()
      // As busboy destroyed: the file being written ends in an error.
      if (current !== null) current.destroy(new Error('Unexpected end of file'))
      current = null
      collector.abort(callback)
    },
    // Every byte the stage was given has been read: only the collector may still be deciding (user code).
    judged (callback) {
      collector.whenJudged(callback)
    }
  }
}
