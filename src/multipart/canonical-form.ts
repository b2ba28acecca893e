// The fast path for small forms as browsers, curl and fetch write them: parts found with Buffer.indexOf and read
// in one pass, or null for anything else, which busboy then reads (test/multipart/fuzz.test.ts proves them equal).
import type { BodyRequest } from '../variants'
import { headerOf } from '../sources/source'

/** What a canonical part's headers say, as busboy would report it. */
export interface PartHeaders {
  /** The `name` parameter (UTF-8). */
  readonly name: string
  /** The file name (busboy's base name of `filename`), or undefined for a field. */
  readonly filename: string | undefined
  /** `type/subtype` in lower case; `text/plain` when the part has no Content-Type. */
  readonly mimeType: string
  /** Whether busboy counts it as a file: a file name, or the type `application/octet-stream`. */
  readonly isFile: boolean
}

/** One part of a canonical form read whole: its headers and where its data lies. */
export interface CanonicalPart extends PartHeaders {
  readonly start: number
  readonly end: number
}

/** How busboy reads names and file names: their charset (`defParamCharset`) and whether the path is kept. */
export interface NameReading {
  readonly charset: 'utf8' | 'latin1'
  readonly preservePath: boolean
}

const UTF8_BASE_NAMES: NameReading = { charset: 'utf8', preservePath: false }

const CRLF = 0x0a0d
const LINE_END = Buffer.from('\r\n')
const HEADERS_END = Buffer.from('\r\n\r\n')
const DISPOSITION = 'content-disposition:'
const CONTENT_TYPE = 'content-type:'

/**
 * Reads a whole body when it is canonical: no preamble or epilogue, CRLF line breaks, and part headers that are
 * only `Content-Disposition: form-data; name="…"[; filename="…"]` and `Content-Type: type/subtype`, with quoted
 * values free of escapes and control characters. Anything else (charsets, `filename*`, other headers, folding,
 * damage of any kind) gives null: the general parser reads it.
 */
export function readCanonicalForm (body: Buffer, boundary: string, names: NameReading = UTF8_BASE_NAMES): CanonicalPart[] | null {
  const parts: CanonicalPart[] = []
  if (body.length === 0) return parts
  const delimiter = '--' + boundary
  // Buffers, not strings: Buffer.indexOf would convert a string needle on every call.
  const needle = Buffer.from('\r\n' + delimiter, 'latin1')
  if (body.length < delimiter.length + 2 || !startsWithAt(body, delimiter, 0) || body.readUInt16LE(delimiter.length) !== CRLF) return null
  let pos = delimiter.length + 2
  for (;;) {
    const headersEnd = body.indexOf(HEADERS_END, pos)
    if (headersEnd === -1 || headersEnd - pos > 8192) return null
    const dataStart = headersEnd + 4
    const next = body.indexOf(needle, pos)
    // A delimiter inside or right after the header block is read by busboy its own way.
    if (next < dataStart) return null
    const headers = readPartHeaders(body, pos, headersEnd, names)
    if (headers === null) return null
    parts.push({ name: headers.name, filename: headers.filename, mimeType: headers.mimeType, isFile: headers.isFile, start: dataStart, end: next })
    pos = next + needle.length
    if (body.length - pos < 2) return null
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) {
      // The closing delimiter, then at most a CRLF: busboy counts delimiters after it in the same piece.
      const rest = body.length - pos - 2
      return rest === 0 || (rest === 2 && body.readUInt16LE(pos + 2) === CRLF) ? parts : null
    }
    if (body.readUInt16LE(pos) !== CRLF) return null
    pos += 2
  }
}

function startsWithAt (body: Buffer, text: string, at: number): boolean {
  if (body.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) if (body[at + i] !== text.charCodeAt(i)) return false
  return true
}

/** A part's header block (`start` to `end`, without its last CRLF and the empty line), or null when it is not canonical. */
export function readPartHeaders (body: Buffer, start: number, end: number, names: NameReading): PartHeaders | null {
  let name: string | undefined
  let filename: string | undefined
  let mimeType = 'text/plain'
  let sawType = false
  let line = start
  while (line < end) {
    let lineEnd = body.indexOf(LINE_END, line)
    if (lineEnd === -1 || lineEnd > end) lineEnd = end
    // Header names compared as bytes (ASCII case-insensitively): the line ends in CR, which matches no name's byte.
    if (name === undefined && startsWithLower(body, DISPOSITION, line)) {
      const params = readDisposition(body, line + DISPOSITION.length, lineEnd, names)
      if (params === null) return null
      ;({ name, filename } = params)
    } else if (!sawType && startsWithLower(body, CONTENT_TYPE, line)) {
      const type = readMediaType(body.toString('latin1', line + CONTENT_TYPE.length, lineEnd).toLowerCase())
      if (type === null) return null
      mimeType = type
      sawType = true
    } else {
      return null
    }
    line = lineEnd + 2
  }
  if (name === undefined) return null
  return { name, filename, mimeType, isFile: filename !== undefined || mimeType === 'application/octet-stream' }
}

/** ` form-data; name="…"` and an optional `; filename="…"`, the values as busboy decodes them (its charset, base name). */
function readDisposition (body: Buffer, from: number, to: number, names: NameReading): { name: string, filename: string | undefined } | null {
  let pos = skipSpaces(body, from, to)
  if (!startsWithLower(body, 'form-data; name="', pos)) return null
  pos += 17
  const nameEnd = quotedEnd(body, pos, to)
  if (nameEnd === -1 || nameEnd === pos) return null
  const name = body.toString(names.charset, pos, nameEnd)
  pos = nameEnd + 1
  if (pos === to) return { name, filename: undefined }
  if (!startsWithLower(body, '; filename="', pos)) return null
  pos += 12
  const fileEnd = quotedEnd(body, pos, to)
  if (fileEnd === -1 || fileEnd + 1 !== to) return null
  // compat: an empty file name (a browser's empty file input) is no file name to busboy: the part is a file only
  // by its type (application/octet-stream, as browsers send it), else a field.
  if (fileEnd === pos) return { name, filename: undefined }
  const filename = body.toString(names.charset, pos, fileEnd)
  return { name, filename: names.preservePath ? filename : baseName(filename) }
}

function skipSpaces (body: Buffer, pos: number, to: number): number {
  while (pos < to && (body[pos] === 0x20 || body[pos] === 0x09)) pos++
  return pos
}

function startsWithLower (body: Buffer, text: string, at: number): boolean {
  if (body.length < at + text.length) return false
  for (let i = 0; i < text.length; i++) {
    const code = body[at + i]
    if ((code >= 0x41 && code <= 0x5a ? code + 0x20 : code) !== text.charCodeAt(i)) return false
  }
  return true
}

/** Where a quoted value that holds no escape, quote or control character ends (at its closing quote), or -1. */
function quotedEnd (body: Buffer, pos: number, to: number): number {
  for (; pos < to; pos++) {
    const code = body[pos]
    if (code === 0x22) return pos
    if (code === 0x5c || code < 0x20 || code === 0x7f) return -1
  }
  return -1
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+\/[!#$%&'*+.^_`|~0-9a-z-]+$/

/** `type/subtype` (already lower-cased) with optional spaces before it and no parameter, or null. */
function readMediaType (value: string): string | null {
  const type = value.replace(/^[ \t]+/, '')
  return type.length <= 255 && TOKEN.test(type) ? type : null
}

/** The last segment of a path, as busboy keeps it: after the last `/` or `\`; `.` and `..` give ''. */
function baseName (path: string): string {
  let cut = path.length
  while (cut > 0 && path.charCodeAt(cut - 1) !== 0x2f && path.charCodeAt(cut - 1) !== 0x5c) cut--
  const base = path.slice(cut)
  return base === '.' || base === '..' ? '' : base
}

/** busboy's charsets for names that the fast path decodes the same way. */
const NAME_CHARSETS: Readonly<Record<string, NameReading['charset']>> = { utf8: 'utf8', 'utf-8': 'utf8', latin1: 'latin1' }

/**
 * A Content-Type that busboy and content-type read alike: the type and a boundary of the characters that are
 * both RFC 2046 boundary characters and token characters, unquoted (as browsers, curl and undici send it).
 */
const PLAIN_FORM_TYPE = /^multipart\/form-data; ?boundary=([0-9a-zA-Z'+_.-]{1,70})$/i

/**
 * How busboy would read names with this configuration, or null when the fast path cannot read this form as
 * busboy would: another charset for names or values, or a Content-Type that is not plain. Values are UTF-8, or
 * left as bytes when `defCharset` is the part reader's UNDECLARED_AS_BYTES (`bytesCharset`).
 */
export function readsLikeBusboy (contentType: string, config: { defCharset?: string, defParamCharset?: string, preservePath?: boolean }, bytesCharset?: string): { boundary: string, names: NameReading, valuesAsBytes: boolean } | null {
  const match = PLAIN_FORM_TYPE.exec(contentType)
  const charset = NAME_CHARSETS[config.defParamCharset ?? '']
  const values = config.defCharset ?? 'utf8'
  const valuesAsBytes = values === bytesCharset
  if (match === null || charset === undefined || (values !== 'utf8' && values !== 'utf-8' && !valuesAsBytes)) return null
  return { boundary: match[1], names: { charset, preservePath: config.preservePath === true }, valuesAsBytes }
}

/** Bodies up to this size are read whole first (memory bounded by it), larger ones stream. */
const FAST_PATH_MAX_BYTES = 64 * 1024

/** Whether a request's body is small enough to be read whole and tried on the fast path. */
export function isSmallBody (req: BodyRequest, limit: number): boolean {
  const length = headerOf(req, 'content-length')
  if (length === undefined || headerOf(req, 'transfer-encoding') !== undefined) return false
  const declared = Number(length)
  return Number.isInteger(declared) && declared <= FAST_PATH_MAX_BYTES && declared <= limit
}
