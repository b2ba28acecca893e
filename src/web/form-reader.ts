// The Web build's multipart/form-data reader: a form's bytes in, its fields and in-memory files (or its first error)
// out, synchronously and without Node modules, giving the answers of the Node build's busboy-backed readMultipart.
//
// Where it cannot give the Node build's answer:
// - A Content-Type busboy reads as another form type (`application/x-www-form-urlencoded; boundary=…` under a
//   `type` option that matches it): busboy would read the body as a urlencoded form; this reader refuses the
//   boundary (400 multipart.boundary.invalid), as for any type but multipart/form-data.
// - The caller orders the answers this reader knows from the header alone (startWebForm) against a declared
//   Content-Length over `limit`: in the Node build, busboy's own refusal of a Content-Type that content-type reads
//   (`boundary =X`, say) comes after the declared length's 413.
// The chunks written are kept (as views) until the form ends: a caller must not reuse their memory.
import { parse as parseContentType } from 'content-type'
import type { HttpError } from 'http-errors'
import * as errors from '../errors'
import { busboyDecoderFor } from '../multipart/charsets'
import type { FieldAssembler, FormField } from '../multipart/fields'
import type { MultipartSettings } from '../multipart/settings'
import { createPartParser, latin1Of, TOKEN, type PartHeaders } from './multipart-parser'
import { joinBytes } from './bytes'

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

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70
const BOUNDARY_PARAMETER = /;\s*boundary\s*=/gi

/**
 * The boundary the Node build reads with, or null where it refuses the header: content-type must find exactly one
 * boundary of 1 to 70 characters (security, rack CVE-2026-26961: two are refused, not one picked), and busboy's own
 * reading must be multipart/form-data with a boundary, which is the one used.
 */
export function readFormBoundary (header: string): string | null {
  BOUNDARY_PARAMETER.lastIndex = 0
  let count = 0
  while (BOUNDARY_PARAMETER.exec(header) !== null) count++
  if (count !== 1) return null
  const boundary = parseContentType(header).parameters.boundary
  if (typeof boundary !== 'string' || boundary.length < 1 || boundary.length > MAX_BOUNDARY_LENGTH) return null
  const type = readMediaType(header, 'boundary')
  return type !== null && type.mediaType === 'multipart/form-data' && type.parameter !== undefined ? type.parameter : null
}

const SEMICOLON = 0x3b
const EQUALS = 0x3d
const QUOTE = 0x22
const BACKSLASH = 0x5c
const SLASH = 0x2f

/** busboy's quoted-string characters besides `"` and `\`: HT, SP, the visible ones and obs-text. */
function isQuotedText (code: number): boolean {
  return code === 9 || (code >= 0x20 && code !== 0x7f)
}

function skipSpaces (text: string, at: number): number {
  while (at < text.length && (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 9)) at++
  return at
}

function skipToken (text: string, at: number): number {
  while (at < text.length && TOKEN[text.charCodeAt(at)] === 1) at++
  return at
}

/** A parameter's value (a token, or a quoted string read as busboy reads it) and where it ends, or null. */
function readValue (text: string, at: number): [string, number] | null {
  if (text.charCodeAt(at) !== QUOTE) {
    const end = skipToken(text, at)
    return end === at ? null : [text.slice(at, end), end]
  }
  let value = ''
  for (at++; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code === QUOTE) return [value, at + 1]
    if (code === BACKSLASH) {
      if (at + 1 === text.length) return null
      const next = text.charCodeAt(at + 1)
      // compat(busboy): only `\\` and `\"` are escapes; a backslash before anything else is kept.
      if (next === BACKSLASH || next === QUOTE) {
        value += text[++at]
        continue
      }
      value += '\\'
      continue
    }
    if (!isQuotedText(code)) return null
    value += text[at]
  }
  return null
}

const HEX = /^[0-9a-f]{2}$/i
/** RFC 5987 attr-char (busboy's extended value characters besides `%`). */
const ATTR_CHAR = /[!#$&+\-.^_`|~0-9a-z]/i
/** RFC 5987 mime-charsetc (busboy's charset characters). */
const CHARSET_CHAR = /[!#$%&+\-^_`{}~0-9a-z]/i

/**
 * An RFC 5987 extended value from `at` (after `=`), as busboy reads and decodes it, and where it ends; null when
 * busboy cannot read it (bad syntax, or a charset it has no decoder for).
 */
function readExtendedValue (text: string, at: number): [string, number] | null {
  const start = at
  while (at < text.length && CHARSET_CHAR.test(text[at])) at++
  if (text.charCodeAt(at) !== 0x27) return null
  const charset = text.slice(start, at)
  // busboy takes any character in the language, `;` included, up to the next apostrophe.
  at = text.indexOf("'", at + 1) + 1
  if (at === 0 || at === text.length) return null
  let value = ''
  for (; at < text.length; at++) {
    const char = text[at]
    if (char === '%') {
      const hex = text.slice(at + 1, at + 3)
      if (at + 2 >= text.length || !HEX.test(hex)) return null
      value += String.fromCharCode(parseInt(hex, 16))
      at += 2
    } else if (ATTR_CHAR.test(char)) value += char
    else break
  }
  // compat(busboy): an empty value is empty in any charset, one it cannot decode too.
  if (value === '') return [value, at]
  const decode = busboyDecoderFor(charset)
  return decode === null ? null : [decode(value), at]
}

/** A UTF-8 `name`/`filename` as busboy reads it (`defParamCharset: 'utf8'`): latin1 text to its UTF-8 reading. */
function decodeUtf8 (text: string): string {
  return (busboyDecoderFor('utf-8') as (bytes: string) => string)(text)
}

/** The lower-cased `type/subtype` of busboy's reading of a Content-Type, and one parameter's value. */
interface MediaType { mediaType: string, parameter: string | undefined }

/** busboy's reading of a Content-Type (`parseContentType`), or null where it finds it malformed. */
function readMediaType (text: string, wanted: string): MediaType | null {
  const slash = skipToken(text, 0)
  if (slash === 0 || text.charCodeAt(slash) !== SLASH) return null
  const end = skipToken(text, slash + 1)
  if (end === slash + 1) return null
  const params = readParameters(text, end, false)
  return params === null ? null : { mediaType: text.slice(0, end).toLowerCase(), parameter: params[wanted] }
}

/** A parameter list read as busboy reads it (first of a name wins), or null where busboy finds it malformed. */
type Parameters = Record<string, string> & { readonly unreadableFileName?: boolean }

/**
 * busboy's parameter list from `at`. With `disposition`, as Content-Disposition's: `name*` parameters hold RFC 5987
 * values and plain values are UTF-8; and RFC 6266 §4.3, as the Node build adds it: a `filename*` busboy cannot read
 * (up to the next `;`) is left out rather than making busboy skip the part, and `unreadableFileName` says so.
 */
function readParameters (text: string, at: number, disposition: boolean): Parameters | null {
  const params: Record<string, string | boolean> = Object.create(null)
  for (;;) {
    at = skipSpaces(text, at)
    if (at === text.length) return params as Parameters
    if (text.charCodeAt(at) !== SEMICOLON) return null
    at = skipSpaces(text, at + 1)
    const nameStart = at
    at = skipToken(text, at)
    if (at === text.length || text.charCodeAt(at) !== EQUALS) return null
    const name = text.slice(nameStart, at++).toLowerCase()
    let read: [string, number] | null
    if (disposition && name.endsWith('*')) {
      read = readExtendedValue(text, at)
      const after = read === null ? -1 : skipSpaces(text, read[1])
      if (name === 'filename*' && (after === -1 || (after < text.length && text.charCodeAt(after) !== SEMICOLON))) {
        // As busboy's reading of the header would fail there: up to the next `;` (an extended value holds none).
        params.unreadableFileName = true
        const next = text.indexOf(';', at)
        at = next === -1 ? text.length : next
        continue
      }
    } else {
      read = at === text.length ? null : readValue(text, at)
      if (read !== null && disposition) read[0] = decodeUtf8(read[0])
    }
    if (read === null) return null
    if (params[name] === undefined) params[name] = read[0]
    at = read[1]
  }
}

/** busboy's base name: the part after the last `/` or `\`, and no `.` or `..`. */
function baseName (path: string): string {
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
  return name === '.' || name === '..' ? '' : name
}

const encoder = new TextEncoder()

/** An error known from the Content-Type header alone (no or bad boundary: the same error as the Node build), or a reader. */
export function startWebForm (contentTypeHeader: string, settings: MultipartSettings, assemble: FieldAssembler): WebFormReader | HttpError {
  const boundary = readFormBoundary(contentTypeHeader)
  if (boundary === null) return errors.invalidBoundary()
  const fileSettings = settings.files
  const fileSizeLimit = fileSettings === null ? Infinity : fileSettings.fileSizeLimit
  const fields: FormField[] = []
  const files: WebUploadedFile[] = []
  let failure: Error | null = null
  let answer: Error | WebForm | null = null
  let received = 0
  let fileCount = 0
  // busboy counts delimiters, the first one included: a count of parts, skipped ones too.
  let parts = -1
  // The current part: 0 none (or skipped), 1 a field, 2 a file.
  let kind = 0
  let skipped = false
  let truncated = false
  let size = 0
  let pieces: Uint8Array[] = []
  let name: string | undefined
  let charset: string | null = null
  let file: Omit<WebUploadedFile, 'size' | 'buffer'> | null = null

  const fail = (err: Error): true => {
    failure = err
    return true
  }

  /** A part's name must be present and within `fieldNameSizeLimit` (bytes), as the Node build checks it. */
  const checkName = (): HttpError | null => {
    // Security (multer CVE-2025-48997): a part without a name is refused, never passed on without one.
    if (name === undefined) return errors.missingFieldName()
    const limit = settings.fieldNameSizeLimit
    return name.length > limit || encoder.encode(name).length > limit ? errors.fieldNameTooLarge(limit) : null
  }

  const parser = createPartParser(boundary, {
    headers (headers: PartHeaders) {
      skipped = truncated = false
      kind = size = 0
      pieces = []
      name = undefined
      charset = null
      let mimeType = 'text/plain'
      const text = headers.disposition ?? ''
      const typeEnd = skipToken(text, 0)
      const params = text === '' ? null : readParameters(text, typeEnd, true)
      if (params === null || text.slice(0, typeEnd).toLowerCase() !== 'form-data') {
        skipped = true
        return false
      }
      name = params.name || undefined
      const fileName = params['filename*'] || params.filename || undefined
      if (params.unreadableFileName === true && fileName === undefined) {
        // RFC 6266 §4.3: no file name to fall back on; busboy would skip the part without a word.
        return fail(checkName() ?? errors.malformedPartHeader(name))
      }
      if (headers.type !== undefined && headers.type !== '') {
        const type = readMediaType(headers.type, 'charset')
        if (type !== null) {
          mimeType = type.mediaType
          if (type.parameter !== undefined) charset = type.parameter.toLowerCase()
        }
      }
      if (mimeType !== 'application/octet-stream' && fileName === undefined) {
        kind = 1
        return false
      }
      const problem = checkName() ?? (
        fileSettings === null || (fileSettings.fieldNames !== null && !fileSettings.fieldNames.has(name as string))
          ? errors.unexpectedFile(name as string)
          : ++fileCount > fileSettings.fileLimit ? errors.tooManyFiles(fileSettings.fileLimit, name as string) : null)
      if (problem !== null) return fail(problem)
      kind = 2
      file = {
        fieldName: name as string,
        originalName: fileName === undefined ? '' : baseName(fileName),
        mimeType,
        encoding: headers.encoding === undefined ? '7bit' : headers.encoding.toLowerCase()
      }
      return false
    },
    data (bytes, start, end) {
      if (skipped || kind === 0) return false
      const more = end - start
      if (kind === 2) {
        if (size + more > fileSizeLimit) return fail(errors.fileTooLarge(fileSizeLimit, name as string))
      } else if (size + more > settings.fieldSizeLimit) {
        // The Node build learns it at the part's end (busboy marks the field truncated).
        truncated = skipped = true
        pieces = []
        return false
      }
      pieces.push(bytes.subarray(start, end))
      size += more
      return false
    },
    delimiter () {
      if (kind === 2) files.push({ ...(file as NonNullable<typeof file>), size, buffer: joinBytes(pieces, size) })
      else if (kind === 1) {
        const problem = checkName() ?? (
          truncated
            ? errors.fieldTooLarge(settings.fieldSizeLimit, name as string)
            : fields.length >= settings.parameterLimit ? errors.tooManyFields(settings.parameterLimit) : null)
        if (problem !== null) return fail(problem)
        const bytes = latin1Of(joinBytes(pieces, size))
        // A part without a charset keeps its bytes for the form's `_charset_`; busboy decodes a declared one.
        const decode = charset === null || size === 0 ? null : busboyDecoderFor(charset)
        if (charset !== null && size > 0 && decode === null) return fail(errors.unsupportedFieldCharset(name as string))
        fields.push({ name: name as string, value: decode === null ? bytes : decode(bytes), asBytes: charset === null && size > 0 })
      }
      kind = 0
      pieces = []
      // busboy's count reaches the limit (partLimit + 1) at the delimiter after one part too many.
      return ++parts === settings.partLimit + 1 ? fail(errors.tooManyParts(settings.partLimit)) : false
    },
    malformed () {
      return fail(errors.malformedPartHeader())
    }
  })

  function finish (): Error | WebForm {
    if (failure === null) {
      try {
        parser.end()
      } catch (thrown) {
        failure = thrown as Error
      }
    }
    if (failure !== null) return failure
    // An empty body is an empty form (as an empty urlencoded body is `{}`), not a form cut short.
    if (received > 0) {
      // A file begun after the closing delimiter's header block is one busboy waits on for good: the Node build's stall.
      if (!parser.complete || kind === 2) return errors.unexpectedEndOfForm()
    }
    try {
      return { fields: assemble(received === 0 ? [] : fields), files }
    } catch (thrown) {
      return thrown as Error
    }
  }

  return {
    write (chunk) {
      if (failure === null && answer === null) {
        received += chunk.length
        try {
          parser.write(chunk)
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

