// A multipart body's Content-Type and each part's Content-Disposition and Content-Type, read as busboy 1.6 reads them
// (its lib/utils.js), with RFC 6266 §4.3's fallback from a `filename*` it cannot read; no Node module, for both builds.
import { parse as parseContentType } from 'content-type'
import { busboyDecoderFor } from './charsets'
import { TOKEN as TOKEN_BYTES } from './form-parser'

/** RFC 9110 tchar by byte, as a module constant (an imported binding is a property read in each loop). */
const TOKEN = TOKEN_BYTES

/** RFC 2046 §5.1.1: a boundary is 1 to 70 characters. */
const MAX_BOUNDARY_LENGTH = 70
const BOUNDARY_PARAMETER = /;\s*boundary\s*=/gi

let lastBoundaryHeader: string | undefined
let lastBoundary: string | null = null

/**
 * The boundary a form is read with, or null where the header is refused: content-type must find exactly one boundary
 * of 1 to 70 characters (security, rack CVE-2026-26961: two are refused, not one picked), and busboy's own reading
 * must be multipart/form-data with a boundary, which is the one used. The last header's answer is kept: the policy's
 * check and the reader ask it of one request's header.
 */
export function readFormBoundary (header: string): string | null {
  if (header !== lastBoundaryHeader) {
    lastBoundary = findFormBoundary(header)
    lastBoundaryHeader = header
  }
  return lastBoundary
}

function findFormBoundary (header: string): string | null {
  BOUNDARY_PARAMETER.lastIndex = 0
  let count = 0
  while (BOUNDARY_PARAMETER.exec(header) !== null) count++
  if (count !== 1) return null
  let boundary: unknown
  try {
    boundary = parseContentType(header).parameters.boundary
  } catch {
    return null
  }
  if (typeof boundary !== 'string' || boundary.length < 1 || boundary.length > MAX_BOUNDARY_LENGTH) return null
  const type = readBoundaryType(header)
  return type !== null && type.mediaType === 'multipart/form-data' && type.parameter !== undefined ? type.parameter : null
}

/** The last Content-Type read for its boundary, and what busboy's reading found: a request's check and its read ask alike. */
let lastHeader: string | undefined
let lastType: MediaType | null = null

/** busboy's reading of a Content-Type and its `boundary` (the policies' checks, then the stage, ask it of one header). */
export function readBoundaryType (header: string): MediaType | null {
  if (header !== lastHeader) {
    lastType = readMediaType(header, 'boundary')
    lastHeader = header
  }
  return lastType
}

const SEMICOLON = 0x3b
const STAR = 0x2a
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

/** The value the last readValue or readExtendedValue read (one per call, so that reading allocates no pair). */
let valueRead = ''

/** Reads a parameter's value (a token, or a quoted string read as busboy reads it) into `valueRead`: where it ends, or -1. */
function readValue (text: string, at: number): number {
  if (text.charCodeAt(at) !== QUOTE) {
    const end = skipToken(text, at)
    valueRead = text.slice(at, end)
    return end === at ? -1 : end
  }
  let value = ''
  let from = ++at
  for (; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code === QUOTE) {
      valueRead = value + text.slice(from, at)
      return at + 1
    }
    if (code === BACKSLASH) {
      if (at + 1 === text.length) return -1
      const next = text.charCodeAt(at + 1)
      // compat(busboy): only `\\` and `\"` are escapes; a backslash before anything else is kept.
      if (next === BACKSLASH || next === QUOTE) {
        value += text.slice(from, at)
        from = ++at
      }
      continue
    }
    if (!isQuotedText(code)) return -1
  }
  return -1
}

const HEX = /^[0-9a-f]{2}$/i
/** RFC 5987 attr-char (busboy's extended value characters besides `%`). */
const ATTR_CHAR = /[!#$&+\-.^_`|~0-9a-z]/i
/** RFC 5987 mime-charsetc (busboy's charset characters). */
const CHARSET_CHAR = /[!#$%&+\-^_`{}~0-9a-z]/i

/**
 * Reads an RFC 5987 extended value from `at` (after `=`) into `valueRead`, as busboy reads and decodes it: where it
 * ends, or -1 where busboy cannot read it (bad syntax, or a charset it has no decoder for).
 */
function readExtendedValue (text: string, at: number): number {
  const start = at
  while (at < text.length && CHARSET_CHAR.test(text[at])) at++
  if (text.charCodeAt(at) !== 0x27) return -1
  const charset = text.slice(start, at)
  // busboy takes any character in the language, `;` included, up to the next apostrophe.
  at = text.indexOf("'", at + 1) + 1
  if (at === 0 || at === text.length) return -1
  let value = ''
  for (; at < text.length; at++) {
    const char = text[at]
    if (char === '%') {
      const hex = text.slice(at + 1, at + 3)
      if (at + 2 >= text.length || !HEX.test(hex)) return -1
      value += String.fromCharCode(parseInt(hex, 16))
      at += 2
    } else if (ATTR_CHAR.test(char)) value += char
    else break
  }
  // compat(busboy): an empty value is empty in any charset, one it cannot decode too.
  if (value === '') {
    valueRead = value
    return at
  }
  const decode = busboyDecoderFor(charset)
  if (decode === null) return -1
  valueRead = decode(value)
  return at
}

/**
 * How plain parameter values (a part's `name`, `filename`) are decoded: busboy's `defParamCharset` (latin1 text to
 * the text its bytes are in that charset), undefined where busboy has no decoder for a non-empty value.
 */
export type ParamDecoder = (text: string) => string | undefined

/** busboy's decoder for `defParamCharset`: none (the text as it is) unless it is a non-empty string. */
export function paramDecoderFor (charset: unknown): ParamDecoder {
  if (typeof charset !== 'string' || charset === '') return (text) => text
  const decode = busboyDecoderFor(charset)
  // compat(busboy): its decoder of last resort fails on every non-empty value (see charsets.ts).
  return decode ?? ((text) => text === '' ? '' : undefined)
}

/** The lower-cased `type/subtype` of busboy's reading of a Content-Type, and one parameter's value. */
export interface MediaType { mediaType: string, parameter: string | undefined }

/** busboy's reading of a Content-Type (`parseContentType`), or null where it finds it malformed. */
export function readMediaType (text: string, wanted: string): MediaType | null {
  const slash = skipToken(text, 0)
  if (slash === 0 || text.charCodeAt(slash) !== SLASH) return null
  const end = skipToken(text, slash + 1)
  if (end === slash + 1) return null
  const params = readParameters(text, end, null, wanted)
  return params === null ? null : { mediaType: text.slice(0, end).toLowerCase(), parameter: params.wanted }
}

/** What bodykit reads of a parameter list: the first value of each name it needs, as busboy keeps the first. */
interface Parameters {
  /** A Content-Type's wanted parameter. */
  wanted: string | undefined
  name: string | undefined
  filename: string | undefined
  filenameStar: string | undefined
  /** A `filename*` busboy could not read was left out. */
  unreadableFileName: boolean
}

/**
 * busboy's parameter list from `at`, or null where busboy finds it malformed. With `decodeParam`, as
 * Content-Disposition's: `name*` parameters hold RFC 5987 values, plain values are decoded with it; and RFC 6266
 * §4.3: a `filename*` busboy cannot read (up to the next `;`) is left out rather than making busboy skip the part.
 * Without it, as a Content-Type's: the value of `wanted`.
 */
function readParameters (text: string, at: number, decodeParam: ParamDecoder | null, wanted = ''): Parameters | null {
  const params: Parameters = { wanted: undefined, name: undefined, filename: undefined, filenameStar: undefined, unreadableFileName: false }
  for (;;) {
    at = skipSpaces(text, at)
    if (at === text.length) return params
    if (text.charCodeAt(at) !== SEMICOLON) return null
    at = skipSpaces(text, at + 1)
    const nameStart = at
    at = skipToken(text, at)
    if (at === text.length || text.charCodeAt(at) !== EQUALS) return null
    const nameEnd = at++
    if (decodeParam !== null && text.charCodeAt(nameEnd - 1) === STAR) {
      const isFileName = isNamed(text, nameStart, nameEnd, 'filename*')
      const end = readExtendedValue(text, at)
      const after = end === -1 ? -1 : skipSpaces(text, end)
      if (isFileName && (after === -1 || (after < text.length && text.charCodeAt(after) !== SEMICOLON))) {
        // As busboy's reading of the header would fail there: up to the next `;` (an extended value holds none).
        params.unreadableFileName = true
        const next = text.indexOf(';', at)
        at = next === -1 ? text.length : next
        continue
      }
      if (end === -1) return null
      at = end
      if (isFileName) params.filenameStar ??= valueRead
      continue
    }
    at = at === text.length ? -1 : readValue(text, at)
    if (at === -1) return null
    if (decodeParam === null) {
      if (isNamed(text, nameStart, nameEnd, wanted)) params.wanted ??= valueRead
      continue
    }
    const decoded = decodeParam(valueRead)
    if (decoded === undefined) return null
    if (isNamed(text, nameStart, nameEnd, 'name')) params.name ??= decoded
    else if (isNamed(text, nameStart, nameEnd, 'filename')) params.filename ??= decoded
  }
}

/**
 * Whether the parameter name `text[start..end)` (token characters) is `lower`, in any case: compared in place, no
 * text made of it. A token character | 0x20 is a lower-case letter only when it is that letter ('-', '*' stay).
 */
function isNamed (text: string, start: number, end: number, lower: string): boolean {
  if (end - start !== lower.length) return false
  for (let i = 0; i < lower.length; i++) if ((text.charCodeAt(start + i) | 0x20) !== lower.charCodeAt(i)) return false
  return true
}

/** busboy's base name: the part after the last `/` or `\`, and no `.` or `..`. */
function baseName (path: string): string {
  const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
  return name === '.' || name === '..' ? '' : name
}

/** How a form's names are read: busboy's `defParamCharset` decoder, and whether a file name keeps its path. */
export interface NameRules {
  readonly decodeParam: ParamDecoder
  readonly preservePath: boolean
}

/**
 * What a part's Content-Disposition says, as busboy reads it; null for a part busboy skips without a word (not a
 * `form-data` disposition it can read). `unreadable`: a `filename*` it cannot read and no plain `filename` to fall
 * back on (the part is skipped and the form refused).
 */
export interface Disposition {
  readonly name: string | undefined
  readonly fileName: string | undefined
  readonly unreadable: boolean
}

export function readDisposition (text: string | undefined, rules: NameRules): Disposition | null {
  if (text === undefined || text === '') return null
  const typeEnd = skipToken(text, 0)
  const params = readParameters(text, typeEnd, rules.decodeParam)
  if (params === null || !isNamed(text, 0, typeEnd, 'form-data')) return null
  const name = params.name || undefined
  const fileName = params.filenameStar || params.filename || undefined
  if (params.unreadableFileName === true && fileName === undefined) return { name, fileName, unreadable: true }
  return { name, fileName: fileName === undefined || rules.preservePath ? fileName : baseName(fileName), unreadable: false }
}
