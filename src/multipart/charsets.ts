// Field value charsets: a part's own (busboy decodes it), else the form's `_charset_` field, else defaultCharset.
// A charset is decoded as busboy decodes a part that declares it, and by TextDecoder where busboy has no decoder.
// With no Node module and no Buffer, so that the Web build shares it (TextDecoder is a global in Node 20 and browsers).

/** Turns a value's bytes, given as latin1 text (one character per byte), into the text they encode. */
export type Decode = (bytes: string) => string

/** Whether the text is all ASCII (no byte of UTF-8 text to decode); a loop, cheaper than a regular expression on names. */
function isAscii (text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) return false
  return true
}

/** The decodings busboy has of its own (Node's Buffer encodings); it has none that works for any other label. */
export type BusboyEncoding = 'utf8' | 'latin1' | 'utf16le' | 'base64'

/** The labels busboy decodes with Node's own decoders (a label is matched in lower case, untrimmed, as busboy does). */
const BUSBOY_DECODERS = new Map<string, BusboyEncoding>([
  ['utf-8', 'utf8'], ['utf8', 'utf8'],
  // compat(busboy): windows-1252 and ascii read as latin1, one character per byte.
  ...['latin1', 'ascii', 'us-ascii', 'iso-8859-1', 'iso8859-1', 'iso88591', 'iso_8859-1', 'windows-1252',
    'iso_8859-1:1987', 'cp1252', 'x-cp1252'].map((label): [string, BusboyEncoding] => [label, 'latin1']),
  ...['utf16le', 'utf-16le', 'ucs2', 'ucs-2'].map((label): [string, BusboyEncoding] => [label, 'utf16le']),
  ['base64', 'base64']
])

/** latin1 text as its bytes (each character's low byte, as Buffer.from(text, 'latin1')). */
function latin1Bytes (text: string): Uint8Array {
  const bytes = new Uint8Array(text.length)
  for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i)
  return bytes
}

// As Buffer's toString('utf8'): a leading BOM is kept.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })

/** Buffer's toString('utf16le'): byte pairs as code units, an odd last byte dropped, a BOM kept. */
function decodeUtf16le (bytes: string): string {
  let text = ''
  for (let i = 1; i < bytes.length; i += 2) text += String.fromCharCode(bytes.charCodeAt(i - 1) | (bytes.charCodeAt(i) << 8))
  return text
}

const BUSBOY_DECODE: Readonly<Record<BusboyEncoding, Decode>> = {
  // The bytes are already latin1 text; ASCII reads the same in UTF-8, and most values are ASCII.
  latin1: (bytes) => bytes,
  utf8: (bytes) => isAscii(bytes) ? bytes : utf8.decode(latin1Bytes(bytes)),
  utf16le: decodeUtf16le,
  // compat(busboy): a part in "base64" reads as the base64 text of its bytes (Buffer's toString('base64')).
  base64: (bytes) => btoa(bytes)
}

/**
 * busboy's decoder for a part's charset label, or null where busboy has none: busboy 1.6 meant to try TextDecoder
 * for other labels, but its decoder is an arrow function bound to the label, and reads `this` as its module's
 * exports, a label no TextDecoder knows.
 */
export function busboyDecoderFor (label: string): Decode | null {
  const name = busboyEncodingOf(label)
  return name === null ? null : BUSBOY_DECODE[name]
}

/** busboy's decoding of a charset label, or null where it has none. */
export function busboyEncodingOf (label: string): BusboyEncoding | null {
  return BUSBOY_DECODERS.get(label.toLowerCase()) ?? null
}

/** Turns a field's bytes into the text they encode. */
export type BytesDecode = (bytes: Uint8Array) => string

/** A build's own decoding of `bytes[start..end)` in one of busboy's encodings (Buffer's in the Node builds). */
export type BuildDecode = (bytes: Uint8Array, start: number, end: number, encoding: BusboyEncoding) => string

/**
 * The decoder of field values for a charset label: busboy's own decodings with the build's decoders, else
 * TextDecoder's; null when neither knows the label.
 */
export function decoderFor (label: string, decode: BuildDecode): BytesDecode | null {
  const encoding = busboyEncodingOf(label)
  if (encoding !== null) return (bytes) => decode(bytes, 0, bytes.length, encoding)
  let decoder: InstanceType<typeof TextDecoder>
  try {
    decoder = new TextDecoder(label)
  } catch {
    return null
  }
  return (bytes) => decoder.decode(bytes)
}

/** The field browsers fill with the form's charset when the form has a hidden input of that name (HTML §4.10.21.8). */
const CHARSET_FIELD = '_charset_'

/**
 * The decoder for the values whose part declares no charset: the first `_charset_` field's charset when a decoder
 * knows it (an unknown one is ignored, as WHATWG's form parsing ignores it), else the default. The label's bytes
 * are read as latin1, one character per byte.
 */
export function formDecoder (fields: ReadonlyArray<{ readonly name: string, readonly value: string | Uint8Array }>, fallback: BytesDecode,
  decode: BuildDecode): BytesDecode {
  for (const { name, value } of fields) {
    if (name === CHARSET_FIELD) return decoderFor(typeof value === 'string' ? value : decode(value, 0, value.length, 'latin1'), decode) ?? fallback
  }
  return fallback
}
