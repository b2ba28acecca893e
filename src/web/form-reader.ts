// The Web build's multipart() policy: a form's bytes in, read by the one form reading (multipart/form-reading.ts), its
// fields and in-memory files (or its first error) out, synchronously, as the Node build's form collector answers.
// The chunks written are kept (as views) until the form ends: a caller must not reuse their memory.
import type { HttpError } from 'http-errors'
import * as errors from '../errors'
import type { FieldAssembler, FormField } from '../multipart/fields'
import { startFormReading, type FileSink } from '../multipart/form-reading'
import { readFormBoundary } from '../multipart/part-headers'
import { createParserConfig, type MultipartSettings } from '../multipart/settings'
import { joinBytes, WEB_BYTES } from './bytes'

/** A file read into memory by the Web build (as the Node build's memory storage, with bytes as a Uint8Array). */
export interface WebUploadedFile { fieldName: string, originalName: string, mimeType: string, encoding: string, size: number, buffer: Uint8Array }

/** A form read by the Web build: its fields as urlencoded() builds them, and its files. */
export interface WebForm { fields: Record<string, unknown>, files: WebUploadedFile[] }

/** One form's reading, fed by its caller. */
export interface WebFormReader {
  /**
   * Reads the next bytes of the body (already inflated and cut at the body's `limit` by the caller). Synchronous:
   * returns the form's first error in byte order (an HttpError with bodykit's status/type, as the Node build gives),
   * or null. Once it failed, every later write returns the same error. Never throws.
   */
  write (chunk: Uint8Array): Error | null
  /** The body ended: the form, or its first error (e.g. unexpected end of form). Never throws. */
  end (): Error | WebForm
}

const encoder = new TextEncoder()

/** A file part whose bytes are not kept. */
const IGNORED: FileSink = { data () {}, limit () {}, end () {} }

/** An error known from the Content-Type header alone (no or bad boundary: the same error as the Node build), or a reader. */
export function startWebForm (contentTypeHeader: string, settings: MultipartSettings, assemble: FieldAssembler): WebFormReader | HttpError {
  const boundary = readFormBoundary(contentTypeHeader)
  if (boundary === null) return errors.invalidBoundary()
  const fileSettings = settings.files
  const fields: FormField[] = []
  const files: WebUploadedFile[] = []
  let failure: Error | null = null
  let answer: Error | WebForm | null = null
  let received = 0
  let fileCount = 0

  const fail = (err: Error): void => {
    failure ??= err
  }

  /** A part's name must be present and within `fieldNameSizeLimit` (bytes), as the Node build checks it. */
  const checkName = (name: string | undefined): HttpError | null => {
    // Security (multer CVE-2025-48997): a part without a name is refused, never passed on without one.
    if (name === undefined) return errors.missingFieldName()
    const limit = settings.fieldNameSizeLimit
    return name.length > limit || encoder.encode(name).length > limit ? errors.fieldNameTooLarge(limit) : null
  }

  const reading = startFormReading(boundary, createParserConfig(settings), {
    field (name, value, { valueTruncated }) {
      if (failure !== null) return
      const problem = checkName(name) ?? (
        valueTruncated
          ? errors.fieldTooLarge(settings.fieldSizeLimit, name as string)
          : fields.length >= settings.parameterLimit ? errors.tooManyFields(settings.parameterLimit) : null)
      if (problem !== null) fail(problem)
      else if (value === undefined) fail(errors.unsupportedFieldCharset(name as string))
      else fields.push({ name: name as string, value, filesBefore: files.length })
    },
    file (name, { filename, mimeType, encoding }) {
      if (failure !== null) return IGNORED
      const problem = checkName(name) ?? (
        fileSettings === null || (fileSettings.fieldNames !== null && !fileSettings.fieldNames.has(name as string))
          ? errors.unexpectedFile(name as string)
          : ++fileCount > fileSettings.fileLimit ? errors.tooManyFiles(fileSettings.fileLimit, name as string) : null)
      if (problem !== null) {
        fail(problem)
        return IGNORED
      }
      const pieces: Uint8Array[] = []
      let size = 0
      return {
        data (bytes, start, end) {
          pieces.push(bytes.subarray(start, end))
          size += end - start
        },
        limit () { fail(errors.fileTooLarge((fileSettings as NonNullable<typeof fileSettings>).fileSizeLimit, name as string)) },
        end () {
          if (failure !== null) return
          files.push({ fieldName: name as string, originalName: filename ?? '', mimeType, encoding, size, buffer: joinBytes(pieces, size) })
        }
      }
    },
    countLimit () { fail(errors.tooManyParts(settings.partLimit)) },
    unreadableFileName (name) { fail(checkName(name) ?? errors.malformedPartHeader(name)) },
    malformed () { fail(errors.malformedPartHeader()) }
  }, WEB_BYTES)

  function finish (): Error | WebForm {
    let complete = false
    if (failure === null) {
      try {
        complete = reading.end()
      } catch (thrown) {
        failure = thrown as Error
      }
    }
    if (failure !== null) return failure
    // An empty body is an empty form (as an empty urlencoded body is `{}`), not a form cut short.
    if (received === 0) return { fields: assemble([]), files }
    if (!complete) return errors.unexpectedEndOfForm()
    try {
      return { fields: assemble(fields), files }
    } catch (thrown) {
      return thrown as Error
    }
  }

  return {
    write (chunk) {
      if (failure === null && answer === null) {
        received += chunk.length
        try {
          reading.write(chunk)
        } catch (thrown) {
          // A bug of this reader's, never the body's: answered, not thrown at the caller.
          failure = thrown as Error
        }
      }
      return failure
    },
    end () {
      return (answer ??= finish())
    }
  }
}
