// Drawn request bodies for the source tests: each parser's bodies and damaged ones, compressed or not, declared
// lengths right, wrong, absent or not a number, limits around the size, charsets, and the pieces they arrive in.
import zlib from 'node:zlib'
import fc from 'fast-check'

export type Kind = 'json' | 'text' | 'raw' | 'urlencoded' | 'multipart'
export const TYPES: Record<Kind, string> = {
  json: 'application/json',
  text: 'text/plain',
  raw: 'application/octet-stream',
  urlencoded: 'application/x-www-form-urlencoded',
  multipart: 'multipart/form-data; boundary=XyZ'
}

export interface Drawn {
  kind: Kind
  entry: 'default' | 'legacy'
  payload: Buffer
  encoding: 'identity' | 'gzip' | 'deflate' | 'gzip-cut' | 'gzip-flipped'
  length: 'exact' | 'absent' | 'longer' | 'shorter' | 'not-a-number'
  limit: number
  charset: string | null
  pieces: number[]
}

/** Bodies each parser reads, and damaged ones: cut, bad syntax, random bytes. */
const payloads = fc.oneof(
  fc.json().map((text) => Buffer.from(text)),
  fc.string().map((text) => Buffer.from('{"a":' + text)),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 12 }), { maxKeys: 6 })
    .map((fields) => Buffer.from(new URLSearchParams(fields).toString())),
  fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
  fc.array(fc.tuple(fc.constantFrom('a', 'b[c]', 'f'), fc.string({ maxLength: 20 }), fc.boolean()), { maxLength: 4 })
    .chain((parts) => fc.constantFrom('whole', 'cut').map((shape) => {
      const text = parts.map(([name, value, file]) => '--XyZ\r\nContent-Disposition: form-data; name="' + name + '"' +
        (file ? '; filename="f.txt"\r\nContent-Type: text/plain' : '') + '\r\n\r\n' + value + '\r\n').join('') + '--XyZ--\r\n'
      return Buffer.from(shape === 'whole' ? text : text.slice(0, Math.floor(text.length / 2)))
    }))
)

export const drawn: fc.Arbitrary<Drawn> = fc.record({
  kind: fc.constantFrom<Kind>('json', 'text', 'raw', 'urlencoded', 'multipart'),
  entry: fc.constantFrom<'default' | 'legacy'>('default', 'legacy'),
  payload: payloads,
  encoding: fc.constantFrom<Drawn['encoding']>('identity', 'identity', 'gzip', 'deflate', 'gzip-cut', 'gzip-flipped'),
  length: fc.constantFrom<Drawn['length']>('exact', 'exact', 'absent', 'longer', 'shorter', 'not-a-number'),
  // Sizes around every body's length: the limit is drawn near it below.
  limit: fc.integer({ min: -3, max: 3 }),
  charset: fc.constantFrom(null, null, 'utf-8', 'iso-8859-1', 'utf-16le', 'koi8-r', 'x-unknown'),
  pieces: fc.array(fc.integer({ min: 1, max: 64 }), { maxLength: 5 })
})

export function encode (payload: Buffer, encoding: Drawn['encoding']): Buffer {
  switch (encoding) {
    case 'identity': return payload
    case 'gzip': return zlib.gzipSync(payload)
    case 'deflate': return zlib.deflateSync(payload)
    case 'gzip-cut': { const bytes = zlib.gzipSync(payload); return bytes.subarray(0, Math.max(1, bytes.length - 5)) }
    case 'gzip-flipped': { const bytes = Buffer.from(zlib.gzipSync(payload)); bytes[Math.floor(bytes.length / 2)] ^= 0x55; return bytes }
  }
}

export function headersFor (d: Drawn, wire: Buffer): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': TYPES[d.kind] + (d.charset !== null ? '; charset=' + d.charset : '') }
  if (d.encoding !== 'identity') headers['content-encoding'] = d.encoding.startsWith('gzip') ? 'gzip' : 'deflate'
  switch (d.length) {
    case 'exact': headers['content-length'] = String(wire.length); break
    case 'longer': headers['content-length'] = String(wire.length + 3); break
    case 'shorter': headers['content-length'] = String(Math.max(0, wire.length - 2)); break
    case 'not-a-number': headers['content-length'] = 'abc'; headers['transfer-encoding'] = 'chunked'; break
    case 'absent': headers['transfer-encoding'] = 'chunked'
  }
  return headers
}

export function split (wire: Buffer, pieces: number[]): Buffer[] {
  const out: Buffer[] = []
  let at = 0
  for (const size of pieces) {
    if (at >= wire.length) break
    out.push(wire.subarray(at, at + size))
    at += size
  }
  if (at < wire.length || out.length === 0) out.push(wire.subarray(at))
  return out
}
