// The Node builds' byte tools for a form's reading: Buffer's native search and decoders (the Web build has its own, web/bytes.ts).
import type { ByteTools } from './form-reading'

/** A Buffer over the same memory (a Node stream's chunk already is one). */
export function asBuffer (bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}

/**
 * Buffer's own latin1 slicing, as busboy itself reads headers with it: `toString('latin1', …)` looks the encoding up
 * first, a tenth of a small form's header work. Where a Buffer lacks it, toString.
 */
const latin1Slice = typeof (Buffer.prototype as { latin1Slice?: unknown }).latin1Slice === 'function'
  ? (bytes: Buffer, start: number, end: number): string => (bytes as Buffer & { latin1Slice: (start: number, end: number) => string }).latin1Slice(start, end)
  : (bytes: Buffer, start: number, end: number): string => bytes.toString('latin1', start, end)

/** The same for UTF-8 (most field values). */
const utf8Slice = typeof (Buffer.prototype as { utf8Slice?: unknown }).utf8Slice === 'function'
  ? (bytes: Buffer, start: number, end: number): string => (bytes as Buffer & { utf8Slice: (start: number, end: number) => string }).utf8Slice(start, end)
  : (bytes: Buffer, start: number, end: number): string => bytes.toString('utf8', start, end)

export const NODE_BYTES: ByteTools = {
  search (needle) {
    const delimiter = asBuffer(needle)
    return (chunk, from) => asBuffer(chunk).indexOf(delimiter, from)
  },
  bytesOf: (text) => Buffer.from(text, 'latin1'),
  latin1: (bytes, start, end) => latin1Slice(asBuffer(bytes), start, end),
  decode: (bytes, start, end, encoding) => encoding === 'utf8' ? utf8Slice(asBuffer(bytes), start, end) : asBuffer(bytes).toString(encoding, start, end),
  join: (pieces, size) => pieces.length === 1 ? pieces[0] : Buffer.concat(pieces, size)
}
