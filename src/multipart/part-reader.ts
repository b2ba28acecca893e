// The multipart stage: the body goes through busboy (or, small and canonical, the fast path), each part is counted
// against its limit where it is crossed, fields are collected and files handed to a sink; one error ends it all
// and removes every stored file.
import type { ServerResponse } from 'http'
import { Readable } from 'stream'
import busboy from 'busboy'
import { parse as parseContentType } from 'content-type'
import type { HttpError } from 'http-errors'
import onFinished from 'on-finished'
import * as errors from '../errors'
import type { UploadedFile } from '../types'
import type { BodyStage, StageResult } from '../read'
import type { BodyRequest } from '../variants'
import { isResponse } from '../wire'
import { isSmallBody, readCanonicalForm, type CanonicalPart } from './canonical-form'
import type { FieldAssembler, FormField } from './fields'
import type { MultipartSettings } from './settings'
import { removeAll, storeInMemory, storeOnDisk, type FileInfo, type StoredFile } from './sinks'

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
  const boundary = parseContentType(header).parameters.boundary
  return typeof boundary === 'string' && boundary.length >= 1 && boundary.length <= MAX_BOUNDARY_LENGTH ? boundary : null
}

/** Builds the multipart stage for one middleware or reader. */
export function createMultipartStage (settings: MultipartSettings, assembleFields: FieldAssembler): BodyStage {
  // The fast path decodes values as UTF-8 itself; any other default charset is left to busboy.
  const fastPath = settings.defaultCharset === 'utf-8' || settings.defaultCharset === 'utf8'
  return {
    check (req) {
      return readBoundary(req.headers['content-type'] ?? '') === null ? errors.invalidBoundary() : null
    },
    readsWhole (req, limit) {
      return fastPath && isSmallBody(req, limit)
    },
    start (input, req, res, done) {
      const collector = createCollector(settings, assembleFields, res, done)
      if (!Buffer.isBuffer(input)) return readWithBusboy(settings, collector, input, req)
      const parts = readCanonicalFormSafely(input, readBoundary(req.headers['content-type'] as string) as string)
      if (parts !== null) return readCanonicalParts(settings, collector, input, parts)
      // Not canonical: busboy reads the same bytes, in one piece.
      const stream = new Readable({ read () {} })
      stream.push(input)
      stream.push(null)
      return readWithBusboy(settings, collector, stream, req)
    }
  }
}

/** The fast path's reading, or null: it can only ever send a body to busboy, never be the reason a request fails. */
function readCanonicalFormSafely (body: Buffer, boundary: string): CanonicalPart[] | null {
  try {
    return readCanonicalForm(body, boundary)
  } catch {
    return null
  }
}

/** What a part reader reports parts to: the limits, the fields, the sinks and the single outcome. */
interface Collector {
  field (name: string | undefined, value: string | undefined, truncated: boolean): void
  file (name: string | undefined, stream: Readable, filename: string | undefined, mimeType: string, encoding: string): void
  /** A whole file already in memory (the fast path): stored as a file stream's bytes would be, without the stream. */
  fileBytes (name: string, bytes: Buffer, filename: string | undefined, mimeType: string): void
  partsLimit (): void
  error (err: HttpError): void
  /** The form ended (its closing delimiter was read and the body ended). */
  end (): void
  readonly settled: boolean
  /** Stops: no outcome is reported any more; removes every stored file, then calls back. */
  abort (callback: () => void): void
}

/** The per-request state of one form, whichever reader reads it. */
function createCollector (settings: MultipartSettings, assembleFields: FieldAssembler, res: ServerResponse | undefined,
  done: (err: HttpError | null, result?: StageResult) => void): Collector {
  const fileSettings = settings.files
  const fields: FormField[] = []
  const stored: StoredFile[] = []
  const files: Array<UploadedFile | null> = []
  let fileCount = 0
  let pendingFiles = 0
  let formEnded = false
  let settled = false

  const finish = (err: HttpError | null): void => {
    if (settled) return
    settled = true
    if (err !== null) {
      // Never from inside busboy's own call: destroying it there makes busboy throw (it goes on using its file stream).
      process.nextTick(done, err)
      return
    }
    let body: Record<string, unknown>
    try {
      body = assembleFields(fields)
    } catch (thrown) {
      removeAll(stored, () => { done(thrown as HttpError) })
      return
    }
    const accepted = files as UploadedFile[]
    const release = (): void => { removeAll(stored, noop) }
    // Disk files live as long as the response: removed once it has finished, unless the handler moved them.
    if (fileSettings?.storage === 'disk' && stored.length > 0 && isResponse(res)) onFinished(res, release)
    done(null, { fields: body, files: fileSettings === null ? null : accepted, release })
  }
  const maybeFinish = (): void => {
    if (formEnded && pendingFiles === 0) finish(null)
  }

  return {
    get settled () { return settled },
    field (name, value, truncated) {
      if (settled) return
      const problem = checkName(settings, name) ?? (
        truncated
          ? errors.fieldTooLarge(settings.fieldSizeLimit, name as string)
          : fields.length >= settings.parameterLimit ? errors.tooManyFields(settings.parameterLimit) : null
      )
      if (problem !== null) {
        finish(problem)
        return
      }
      if (value === undefined) {
        // busboy could not decode the charset the part declared.
        finish(errors.unsupportedFieldCharset(name as string))
        return
      }
      fields.push({ name: name as string, value })
    },
    file (name, stream, filename, mimeType, encoding) {
      // Every stream gets its error listener before it can emit (multer CVE-2025-7338): busboy destroys an
      // unfinished file with an error, which the parser's own 'error' reports.
      stream.on('error', noop)
      const problem = settled
        ? null
        : checkName(settings, name) ?? checkFile(settings, name as string, ++fileCount)
      if (settled || problem !== null) {
        stream.resume()
        if (problem !== null) finish(problem)
        return
      }
      const sink = fileSettings as NonNullable<typeof fileSettings>
      const fileInfo: FileInfo = { fieldName: name as string, originalName: filename ?? '', mimeType, encoding }
      const index = files.push(null) - 1
      pendingFiles++
      stream.on('limit', () => { finish(errors.fileTooLarge(sink.fileSizeLimit, name as string)) })
      const onStored = (err: Error | null, file?: UploadedFile): void => {
        if (settled) return
        if (err !== null) {
          finish(errors.storageFailed(err))
          return
        }
        files[index] = file as UploadedFile
        pendingFiles--
        maybeFinish()
      }
      stored.push(sink.storage === 'disk'
        ? storeOnDisk(sink.directory, stream, fileInfo, onStored)
        : storeInMemory(stream, fileInfo, onStored))
    },
    fileBytes (name, bytes, filename, mimeType) {
      if (settled) return
      if (fileSettings?.storage !== 'memory') {
        const stream = new Readable({ read () {} })
        this.file(name, stream, filename, mimeType, '7bit')
        if (fileSettings !== null && bytes.length > fileSettings.fileSizeLimit) stream.emit('limit')
        stream.push(bytes)
        stream.push(null)
        return
      }
      const problem = checkName(settings, name) ?? checkFile(settings, name, ++fileCount) ??
        (bytes.length > fileSettings.fileSizeLimit ? errors.fileTooLarge(fileSettings.fileSizeLimit, name) : null)
      if (problem !== null) {
        finish(problem)
        return
      }
      files.push({ fieldName: name, originalName: filename ?? '', mimeType, encoding: '7bit', size: bytes.length, buffer: bytes })
    },
    partsLimit () { finish(errors.tooManyParts(settings.partLimit)) },
    error (err) { finish(err) },
    end () {
      formEnded = true
      maybeFinish()
    },
    abort (callback) {
      settled = true
      removeAll(stored, callback)
    }
  }
}

/** Reads a body stream with busboy. Returns the stage's abort. */
function readWithBusboy (settings: MultipartSettings, collector: Collector, source: Readable, req: BodyRequest): (callback: () => void) => void {
  let parser: busboy.Busboy
  try {
    parser = createParser(settings, req)
  } catch {
    // busboy's own reading of the Content-Type found no boundary where readBoundary did.
    collector.error(errors.invalidBoundary())
    return (callback) => { collector.abort(callback) }
  }
  parser.on('field', (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
    collector.field(name, value, info.valueTruncated)
  })
  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
    collector.file(name, stream, info.filename, info.mimeType, info.encoding)
  })
  let empty = true
  const onData = (): void => { empty = false }
  source.once('data', onData)
  parser.on('partsLimit', () => { collector.partsLimit() })
  parser.on('error', (err: Error) => {
    source.removeListener('data', onData)
    // An empty body is an empty form (as an empty urlencoded body is `{}`), not a form cut short.
    if (empty && err.message === 'Unexpected end of form') collector.end()
    else collector.error(describeParserError(err))
  })
  parser.on('close', () => {
    source.removeListener('data', onData)
    collector.end()
  })
  source.pipe(parser)

  return function abort (callback) {
    source.removeListener('data', onData)
    source.unpipe(parser)
    // Destroying the parser destroys the file stream it is writing; errors after this point are latched out.
    parser.on('error', noop)
    parser.destroy()
    collector.abort(callback)
  }
}

/**
 * Reports the parts of a canonical form as busboy would: each field or file in order, busboy's part count (its
 * limit is passed at the part after the last allowed), a file over its limit as busboy's 'limit'. Returns the abort.
 */
function readCanonicalParts (settings: MultipartSettings, collector: Collector, body: Buffer, parts: CanonicalPart[]): (callback: () => void) => void {
  let count = 0
  for (const part of parts) {
    if (collector.settled) break
    const size = part.end - part.start
    if (part.isFile) {
      collector.fileBytes(part.name, body.subarray(part.start, part.end), part.filename, part.mimeType)
    } else if (size > settings.fieldSizeLimit) {
      collector.field(part.name, '', true)
    } else {
      collector.field(part.name, body.toString('utf8', part.start, part.end), false)
    }
    if (++count === settings.partLimit + 1) collector.partsLimit()
  }
  // As from busboy, the end of the form is reported after the parts, not during the caller's own call.
  process.nextTick(() => { collector.end() })
  return (callback) => { collector.abort(callback) }
}

/** busboy, with the limits it enforces itself. */
function createParser (settings: MultipartSettings, req: BodyRequest): busboy.Busboy {
  return busboy({
    headers: { 'content-type': req.headers['content-type'] as string },
    defCharset: settings.defaultCharset,
    // Browsers send names and file names as raw UTF-8.
    defParamCharset: 'utf8',
    limits: {
      // busboy reports a limit when it is reached, not passed: one more byte or part means "over".
      fieldSize: settings.fieldSizeLimit + 1,
      fileSize: settings.files === null ? Infinity : settings.files.fileSizeLimit + 1,
      parts: settings.partLimit + 1
    }
  })
}

/** A part's name must be present and within `fieldNameSizeLimit` (bytes). */
function checkName (settings: MultipartSettings, name: string | undefined): HttpError | null {
  // Security (multer CVE-2025-48997): a part without a name is refused, never passed on without one.
  if (name === undefined || name === '') return errors.missingFieldName()
  if (name.length > settings.fieldNameSizeLimit || Buffer.byteLength(name) > settings.fieldNameSizeLimit) {
    return errors.fieldNameTooLarge(settings.fieldNameSizeLimit)
  }
  return null
}

/** Whether a file may be stored: files on, its field allowed, and within the count. */
function checkFile (settings: MultipartSettings, name: string, count: number): HttpError | null {
  const files = settings.files
  if (files === null || (files.fieldNames !== null && !files.fieldNames.has(name))) return errors.unexpectedFile(name)
  if (count > files.fileLimit) return errors.tooManyFiles(files.fileLimit, name)
  return null
}

/** busboy's errors for a malformed body, as bodykit's typed errors. */
function describeParserError (err: Error): HttpError {
  if (err.message === 'Malformed part header') return errors.malformedPartHeader()
  if (err.message === 'Unexpected end of form' || err.message === 'Unexpected end of file') return errors.unexpectedEndOfForm()
  return errors.readFailed(err)
}

function noop (): void {}
