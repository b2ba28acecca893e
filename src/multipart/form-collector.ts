// multipart()'s policy: fields counted and assembled as urlencoded() builds a form, files to memory or disk with
// finite limits, every limit its own typed error, and every stored file removed on any error.
import type { ServerResponse } from 'http'
import type { HttpError } from 'http-errors'
import onFinished from 'on-finished'
import * as errors from '../errors'
import type { UploadedFile } from '../types'
import type { StageResult } from '../read'
import { headerOf } from '../sources/source'
import type { BodyRequest } from '../variants'
import { isResponse } from '../wire'
import type { FieldAssembler, FormField } from './fields'
import type { PartCollector } from './part-collector'
import { readFormBoundary } from './part-headers'
import type { FormPolicy } from './part-reader'
import { createParserConfig, type MultipartSettings } from './settings'
import { removeAll, storeInMemory, storeOnDisk, type FileInfo, type FileStore, type StoredFile } from './sinks'

/** multipart()'s policy for one middleware or reader: its disk files live as long as the response. */
export function createFormPolicy (settings: MultipartSettings, assembleFields: FieldAssembler): FormPolicy {
  const config = createParserConfig(settings)
  return {
    check: checkBoundary,
    begin: (_req, res, done) => ({ config, collector: createFormCollector(settings, assembleFields, res, done, null) })
  }
}

/** A multipart body without a usable boundary is refused unread. */
export function checkBoundary (req: BodyRequest): HttpError | null {
  return readFormBoundary(headerOf(req, 'content-type') ?? '') === null ? errors.invalidBoundary() : null
}

/**
 * The per-request state of one form, whichever reader reads it. Disk files live as long as `res` when it is given (else
 * they are the caller's once handed on); `store`, when given, stores accepted files in place of memory or disk storage.
 */
export function createFormCollector (settings: MultipartSettings, assembleFields: FieldAssembler, res: ServerResponse | undefined,
  done: (err: HttpError | Error | null, result?: StageResult) => void, store: FileStore | null): PartCollector {
  const fileSettings = settings.files
  const fields: FormField[] = []
  const stored: StoredFile[] = []
  const files: Array<UploadedFile | null> = []
  let fileCount = 0
  let pendingFiles = 0
  let formEnded = false

  const finish = (err: HttpError | Error | null): void => {
    if (collector.settled) return
    collector.settled = true
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
    const release = (callback: () => void): void => { removeAll(stored, callback) }
    // Disk files live as long as the response: removed once it has finished, unless the handler moved them.
    if (fileSettings?.storage === 'disk' && stored.length > 0 && isResponse(res)) onFinished(res, () => { release(noop) })
    done(null, { fields: body, files: fileSettings === null ? null : accepted, release })
  }
  const maybeFinish = (): void => {
    if (formEnded && pendingFiles === 0) finish(null)
  }

  // `settled` is a data property, not a getter: an object literal with a getter gets a hidden class of its own
  // on every request (the getter is a new closure each time), which filled old space with them and cost a full
  // garbage collection every few thousand forms.
  const collector: PartCollector & { settled: boolean } = {
    settled: false,
    // Nothing here waits on user code: every part is judged as it is reported.
    whenJudged (callback) {
      process.nextTick(callback)
    },
    field (name, value, { valueTruncated: truncated }) {
      if (collector.settled) return
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
      fields.push({ name: name as string, value, filesBefore: files.length })
    },
    file (name, stream, { filename, mimeType, encoding }) {
      // Every stream gets its error listener before it can emit (multer CVE-2025-7338): busboy destroys an
      // unfinished file with an error, which the parser's own 'error' reports.
      stream.on('error', noop)
      const problem = collector.settled
        ? null
        : checkName(settings, name) ?? checkFile(settings, name as string, ++fileCount)
      if (collector.settled || problem !== null) {
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
        if (collector.settled) return
        if (err !== null) {
          finish(errors.storageFailed(err))
          return
        }
        files[index] = file as UploadedFile
        pendingFiles--
        maybeFinish()
      }
      stored.push(store !== null
        ? store(stream, fileInfo, onStored, (answer) => { finish(answer as Error) })
        : sink.storage === 'disk'
          ? storeOnDisk(sink.directory, stream, fileInfo, onStored)
          : storeInMemory(stream, fileInfo, onStored))
    },
    unreadableFileName (name) {
      if (collector.settled) return
      finish(checkName(settings, name) ?? errors.malformedPartHeader(name))
    },
    countLimit () {
      // busboy counts only the parts for multipart(): fields and files are counted here, with their own errors.
      finish(errors.tooManyParts(settings.partLimit))
    },
    fault (thrown) {
      finish(errors.thrownByUser(thrown) as Error)
    },
    parserError (err, empty) {
      // An empty body is an empty form (as an empty urlencoded body is `{}`), not a form cut short.
      if (empty && err.message === 'Unexpected end of form') this.end()
      else finish(describeParserError(err))
    },
    end () {
      formEnded = true
      maybeFinish()
    },
    abort (callback) {
      collector.settled = true
      removeAll(stored, callback)
    }
  }
  return collector
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
  switch (err.message) {
    case 'Unexpected end of form':
    case 'Unexpected end of file':
      return errors.unexpectedEndOfForm()
    // busboy's reading of the Content-Type, stricter than content-type's in places (its constructor's errors).
    case 'Malformed content type':
    case 'Multipart: Boundary not found':
      return errors.invalidBoundary()
    // 'Malformed part header', and anything else busboy may say of a body it cannot read.
    default:
      return err.message.startsWith('Unsupported content type') ? errors.invalidBoundary() : errors.malformedPartHeader()
  }
}

function noop (): void {}
