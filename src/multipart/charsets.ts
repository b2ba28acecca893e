// Field value charsets: a part's own (busboy decodes it), else the form's `_charset_` field, else defaultCharset.
// A charset is decoded as busboy decodes a part that declares it, and by TextDecoder where busboy has no decoder.
import { TextDecoder } from 'util'

/** Turns a value's bytes into text. */
export type Decode = (bytes: Buffer) => string

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
  if (encoding !== undefined) return (bytes) => bytes.toString(encoding)
  let decoder: TextDecoder
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
 * knows it (an unknown one is ignored, as WHATWG's form parsing ignores it), else the default.
 */
export function formDecoder (fields: ReadonlyArray<{ readonly name: string, readonly value: string | Buffer }>, fallback: Decode): Decode {
  for (const field of fields) {
    if (field.name !== CHARSET_FIELD) continue
    const label = typeof field.value === 'string' ? field.value : field.value.toString('latin1')
    return decoderFor(label) ?? fallback
  }
  return fallback
}
