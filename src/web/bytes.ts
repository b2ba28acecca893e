// Bytes in the Web build: pieces of a body joined without Buffer, and the byte tools a form is read with.
import { busboyDecoderFor } from '../multipart/charsets'
import { latin1Of, searchByHorspool } from '../multipart/form-parser'
import type { ByteTools } from '../multipart/form-reading'

/** The pieces as one array, copied once; a body in one piece is that piece, uncopied. */
export function joinBytes (pieces: readonly Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]
  const bytes = new Uint8Array(size)
  let at = 0
  for (const piece of pieces) {
    bytes.set(piece, at)
    at += piece.byteLength
  }
  return bytes
}

/** The Web build's byte tools for a form's reading: a search in JavaScript and TextDecoder. */
export const WEB_BYTES: ByteTools = {
  search: searchByHorspool,
  latin1: latin1Of,
  bytesOf: (text) => Uint8Array.from(text, (char) => char.charCodeAt(0) & 0xff),
  decode (bytes, start, end, encoding) {
    if (encoding === 'utf8') return utf8.decode(bytes.subarray(start, end))
    return (busboyDecoderFor(encoding) as (text: string) => string)(latin1Of(bytes, start, end))
  },
  join: joinBytes
}

// As Buffer's toString('utf8'): a leading BOM is kept.
const utf8 = new TextDecoder('utf-8', { ignoreBOM: true })
