// Field value charsets: a part's own (busboy decodes it), else the form's `_charset_` field, else defaultCharset.
// A charset is decoded as busboy decodes a part that declares it, and by TextDecoder where busboy has no decoder.
import { TextDecoder } from 'util'

/** Turns a value's bytes, given as latin1 text (one character per byte), into the text they encode. */
export type Decode = (bytes: string) => string

/** A character past ASCII (U+0080 and up): the bytes of UTF-8 text then need decoding. */
const NON_ASCII = /[\u0080-\uffff]/

/** The labels busboy decodes with Node's own decoders (a label is matched in lower case, untrimmed, as busboy does). */
const NODE_DECODERS = new Map<string, BufferEncoding>([
  ['utf-8', 'utf8'], ['utf8', 'utf8'],
  // compat(busboy): windows-1252 and ascii read as latin1, one character per byte.
  ...['latin1', 'ascii', 'us-ascii', 'iso-8859-1', 'iso8859-1', 'iso88591', 'iso_8859-1', 'windows-1252',
    'iso_8859-1:1987', 'cp1252', 'x-cp1252'].map((label): [string, BufferEncoding] => [label, 'latin1']),
  ...['utf16le', 'utf-16le', 'ucs2', 'ucs-2'].map((label): [string, BufferEncoding] => [label, 'utf16le']),
  ['base64', 'base64']
])

/** The decoder for a charset label, or null when neither Node nor TextDecoder knows it. */
export function decoderFor (label: string): Decode | null {
  const encoding = NODE_DECODERS.get(label.toLowerCase())
  // The bytes are already latin1 text; ASCII reads the same in UTF-8, and most values are ASCII.
  if (encoding === 'latin1') return (bytes) => bytes
  if (encoding === 'utf8') return (bytes) => NON_ASCII.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes
  if (encoding !== undefined) return (bytes) => Buffer.from(bytes, 'latin1').toString(encoding)
  let decoder: TextDecoder
  try {
    decoder = new TextDecoder(label)
  } catch {
    return null
  }
  return (bytes) => decoder.decode(Buffer.from(bytes, 'latin1'))
}

/** The field browsers fill with the form's charset when the form has a hidden input of that name (HTML §4.10.21.8). */
const CHARSET_FIELD = '_charset_'

/**
 * The decoder for the values whose part declares no charset: the first `_charset_` field's charset when a decoder
 * knows it (an unknown one is ignored, as WHATWG's form parsing ignores it), else the default.
 */
export function formDecoder (fields: ReadonlyArray<{ readonly name: string, readonly value: string }>, fallback: Decode): Decode {
  for (const field of fields) {
    if (field.name === CHARSET_FIELD) return decoderFor(field.value) ?? fallback
  }
  return fallback
}
