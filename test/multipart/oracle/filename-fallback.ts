// The reader bodykit had before its own (test oracle): RFC 6266 §4.3 on busboy, a `filename*` that busboy cannot read
// giving way to the plain `filename`, where busboy alone skips the whole part (and its file) without a word.
import { createRequire } from 'node:module'
import type busboy from 'busboy'

/** A parameter value's decoder, as busboy makes it: the text, or undefined when it cannot be decoded. */
type ParamDecoder = (value: string, hint: number) => string | undefined

/** The functions of busboy's lib/utils.js the oracle calls (busboy 1.x exports them; it ships no types for them). */
interface BusboyUtils {
  getDecoder: (charset: string) => ParamDecoder
  parseDisposition: (header: string, decodeParam: ParamDecoder) => { type: string, params: Record<string, string | undefined> } | undefined
}
const busboyUtils = createRequire(__filename)('busboy/lib/utils.js') as BusboyUtils
const loadBusboyUtils = (): BusboyUtils => busboyUtils

/** What is left of a Content-Disposition once its unreadable `filename*` parameters are ignored. */
export type FileNameFallback =
  /** The header with them made harmless: busboy reads the part under its plain `filename` (or a readable `filename*`). */
  | { readonly kind: 'fallback', readonly disposition: string }
  /** No file name is left to fall back on: the part's `name`, as busboy decodes it (undefined when it has none). */
  | { readonly kind: 'unreadable', readonly name: string | undefined }

// compat(busboy 1.x): its own Content-Disposition parser (loadBusboyUtils), so that what it reads is decided by busboy alone.

const SEMICOLON = 0x3b
const EQUALS = 0x3d
const STAR = 0x2a
const APOSTROPHE = 0x27
const PERCENT = 0x25
const QUOTE = 0x22
const BACKSLASH = 0x5c

/** A lookup table of the letters, the digits and the given punctuation (by char code). */
function charClass (punctuation: string): Uint8Array {
  const table = new Uint8Array(256)
  const members = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz' + punctuation
  for (let i = 0; i < members.length; i++) table[members.charCodeAt(i)] = 1
  return table
}

/** RFC 7230 tchar: parameter names and plain values. */
const TOKEN = charClass("!#$%&'*+-.^_`|~")
/** RFC 5987 mime-charsetc: the charset of an extended value. */
const CHARSET = charClass('!#$%&+-^_`{}~')
/** RFC 5987 attr-char: an extended value's characters besides its %-escapes. */
const ATTR_CHAR = charClass('!#$&+-.^_`|~')
const HEX = new Uint8Array(256)
for (const digit of '0123456789abcdefABCDEF') HEX[digit.charCodeAt(0)] = 1

/** A quoted string's own characters, as busboy takes them: HT, SP and the visible ones but `"` and `\`, and obs-text. */
function isQuotedText (code: number): boolean {
  return code === 0x09 || code === 0x20 || code === 0x21 || (code >= 0x23 && code <= 0x7e && code !== BACKSLASH) || (code >= 0x80 && code <= 0xff)
}

const MENTIONS_FILENAME_STAR = /filename\*/i
/** What an unreadable `filename*` parameter becomes: busboy reads only `name`, `filename` and `filename*`. */
const IGNORED_PARAMETER = 'bodykit-unreadable-filename=""'

/**
 * Reads a part's Content-Disposition (latin1 text, as busboy's header parser gives it) under RFC 6266 §4.3: each
 * `filename*` parameter whose extended value busboy cannot read (bad syntax, an unknown charset) is ignored (its
 * text up to the next `;` becomes a parameter busboy ignores). Null when there is none, or when the rest of the header is something busboy refuses
 * too (busboy's verdict then stands: the part is skipped, as it always was). Otherwise busboy's own reading of
 * what is left decides: a file name in it (a readable `filename*`, else `filename`) means fallback.
 * `decodeParam` is busboy's decoder for plain values (its `defParamCharset`).
 */
export function readFileNameFallback (disposition: string, decodeParam: ParamDecoder): FileNameFallback | null {
  if (!MENTIONS_FILENAME_STAR.test(disposition)) return null
  const text = disposition
  const kept: string[] = []
  let keptFrom = 0
  let at = 0
  while (at < text.length && TOKEN[text.charCodeAt(at)] === 1) at++
  for (;;) {
    at = skipSpaces(text, at)
    if (at === text.length) break
    if (text.charCodeAt(at) !== SEMICOLON) return null
    at = skipSpaces(text, at + 1)
    const nameStart = at
    while (at < text.length && TOKEN[text.charCodeAt(at)] === 1) at++
    if (at === text.length || text.charCodeAt(at) !== EQUALS) return null
    const name = text.slice(nameStart, at)
    at++
    if (name.charCodeAt(name.length - 1) !== STAR) {
      at = plainValueEnd(text, at)
      if (at === -1) return null
      continue
    }
    const end = extendedValueEnd(text, at)
    if (name.toLowerCase() !== 'filename*') {
      if (end === -1) return null
      at = end
    } else if (end !== -1 && loadBusboyUtils().parseDisposition('form-data; filename*=' + text.slice(at, end) + '; a=b', decodeParam) !== undefined) {
      // Its syntax is sound: busboy decodes it alone as in its place (a parameter after it, as an empty value has).
      at = end
    } else {
      // An extended value holds no `;`: the unreadable one ends at the next. It gives way to a parameter busboy
      // ignores, so that the others are read exactly as in their place (an empty value before the end, say).
      const next = text.indexOf(';', at)
      kept.push(text.slice(keptFrom, nameStart), IGNORED_PARAMETER)
      keptFrom = at = next === -1 ? text.length : next
    }
  }
  if (kept.length === 0) return null
  kept.push(text.slice(keptFrom))
  const rest = kept.join('')
  const reading = loadBusboyUtils().parseDisposition(rest, decodeParam)
  if (reading === undefined || reading.type !== 'form-data') return null
  // As busboy: an empty value is no file name.
  if (reading.params['filename*'] || reading.params.filename) return { kind: 'fallback', disposition: rest }
  return { kind: 'unreadable', name: reading.params.name || undefined }
}

function skipSpaces (text: string, at: number): number {
  while (at < text.length && (text.charCodeAt(at) === 0x20 || text.charCodeAt(at) === 0x09)) at++
  return at
}

/** Where a plain value (a token, or a quoted string with `\` escapes) ends, or -1 where busboy finds it malformed. */
function plainValueEnd (text: string, at: number): number {
  if (at === text.length) return -1
  if (text.charCodeAt(at) !== QUOTE) {
    const start = at
    while (at < text.length && TOKEN[text.charCodeAt(at)] === 1) at++
    return at === start ? -1 : at
  }
  for (at++; at < text.length; at++) {
    let code = text.charCodeAt(at)
    if (code === QUOTE) return at + 1
    if (code === BACKSLASH) {
      if (++at === text.length) return -1
      code = text.charCodeAt(at)
      if (code === QUOTE || code === BACKSLASH) continue
    }
    if (!isQuotedText(code)) return -1
  }
  return -1
}

/**
 * Where an RFC 5987 extended value (`charset'language'value`, the value of attr-chars and %-escapes) ends, or -1
 * where busboy finds it malformed: bad syntax, or anything but spaces and then `;` or the end after it.
 */
function extendedValueEnd (text: string, at: number): number {
  while (at < text.length && CHARSET[text.charCodeAt(at)] === 1) at++
  if (at === text.length || text.charCodeAt(at) !== APOSTROPHE) return -1
  // busboy takes any character in the language, `;` included, up to the next apostrophe.
  at = text.indexOf("'", at + 1)
  if (at === -1 || ++at === text.length) return -1
  for (; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (ATTR_CHAR[code] === 1) continue
    if (code !== PERCENT) break
    if (at + 2 >= text.length || HEX[text.charCodeAt(at + 1)] !== 1 || HEX[text.charCodeAt(at + 2)] !== 1) return -1
    at += 2
  }
  const after = skipSpaces(text, at)
  return after === text.length || text.charCodeAt(after) === SEMICOLON ? at : -1
}

/** The part of busboy's header parser that the fallback needs: the callback it hands each part's header block to. */
interface HeaderParser {
  cb: (header: Record<string, string[] | undefined>) => void
}

/**
 * Makes a busboy parser read each part's Content-Disposition with {@link readFileNameFallback}: on fallback,
 * busboy is handed the header without the unreadable `filename*`; with no file name left, `onUnreadable` gets the
 * part's name, and busboy skips the part as it would have. `paramCharset` is busboy's `defParamCharset`.
 */
export function fallBackFromUnreadableFileNames (parser: busboy.Busboy, paramCharset: string | undefined,
  onUnreadable: (name: string | undefined) => void): void {
  // compat(busboy 1.x): busboy keeps one header parser per form and sets it as `_hparser` when a part's headers
  // begin; it is taken there, once. test/multipart/filename-star.test.ts fails if busboy's internals change.
  const target = parser as unknown as { _hparser: HeaderParser | null }
  if (!Object.prototype.hasOwnProperty.call(target, '_hparser')) return
  // As busboy: without a `defParamCharset`, plain values are kept as they came.
  const decodeParam: ParamDecoder = typeof paramCharset === 'string' && paramCharset !== '' ? loadBusboyUtils().getDecoder(paramCharset) : (value) => value
  let current = target._hparser
  Object.defineProperty(target, '_hparser', {
    configurable: true,
    enumerable: true,
    get: () => current,
    set (headerParser: HeaderParser | null) {
      if (headerParser === null || typeof headerParser.cb !== 'function') {
        current = headerParser
        return
      }
      const readHeader = headerParser.cb
      headerParser.cb = (header) => {
        const values = header['content-disposition']
        const fallback = values === undefined ? null : readFileNameFallback(values[0], decodeParam)
        if (fallback?.kind === 'fallback') (values as string[])[0] = fallback.disposition
        else if (fallback !== null) onUnreadable(fallback.name)
        readHeader(header)
      }
      Object.defineProperty(target, '_hparser', { configurable: true, enumerable: true, writable: true, value: headerParser })
    }
  })
}
