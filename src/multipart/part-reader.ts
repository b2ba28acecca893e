// The multipart stage: the body stream goes through busboy, each part is counted against its limit where it is
// crossed, fields are collected and files handed to a sink; one error ends it all and removes every stored file.
import type { ServerResponse } from 'http'
import type { Readable } from 'stream'
import busboy from 'busboy'
import { parse as parseContentType } from 'content-type'
import type { HttpError } from 'http-errors'
import onFinished from 'on-finished'
import * as errors from '../errors'
import type { UploadedFile } from '../types'
import type { BodyStage, StageResult } from '../read'
import type { BodyRequest } from '../variants'
import { isResponse } from '../wire'
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
  return {
    check (req) {
      return readBoundary(req.headers['content-type'] ?? '') === null ? errors.invalidBoundary() : null
    },
    start (source, req, res, done) {
      return readParts(settings, assembleFields, source, req, res, done)
    }
  }
}

/** Reads the parts of one body. Returns the stage's abort: stop reading, remove every stored file, then call back. */
function readParts (settings: MultipartSettings, assembleFields: FieldAssembler, source: Readable, req: BodyRequest,
  res: ServerResponse | undefined, done: (err: HttpError | null, result?: StageResult) => void): (callback: () => void) => void {
  const fileSettings = settings.files
  let parser: busboy.Busboy
  try {
    parser = createParser(settings, req)
  } catch {
    // busboy's own reading of the Content-Type found no boundary where readBoundary did.
    process.nextTick(done, errors.invalidBoundary())
    return (callback) => { process.nextTick(callback) }
  }
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
    source.removeListener('data', onData)
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

  parser.on('field', (name: string | undefined, value: string | undefined, info: busboy.FieldInfo) => {
    if (settled) return
    const problem = checkName(settings, name) ?? (
      info.valueTruncated
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
  })

  parser.on('file', (name: string | undefined, stream: Readable, info: busboy.FileInfo) => {
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
    const fileInfo: FileInfo = {
      fieldName: name as string,
      originalName: info.filename ?? '',
      mimeType: info.mimeType,
      encoding: info.encoding
    }
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
  })

  let empty = true
  const onData = (): void => { empty = false }
  source.once('data', onData)
  parser.on('partsLimit', () => { finish(errors.tooManyParts(settings.partLimit)) })
  parser.on('error', (err: Error) => {
    // An empty body is an empty form (as an empty urlencoded body is `{}`), not a form cut short.
    if (empty && err.message === 'Unexpected end of form') {
      formEnded = true
      maybeFinish()
      return
    }
    finish(describeParserError(err))
  })
  parser.on('close', () => {
    formEnded = true
    maybeFinish()
  })
  source.pipe(parser)

  return function abort (callback) {
    settled = true
    source.removeListener('data', onData)
    source.unpipe(parser)
    // Destroying the parser destroys the file stream it is writing; errors after this point are latched out.
    parser.on('error', noop)
    parser.destroy()
    removeAll(stored, callback)
  }
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
