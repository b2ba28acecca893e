// Fuzz target 8: the Web source: one drawn body as a Web `Request` (whole, or a ReadableStream in the drawn pieces)
// and as a Node stream with `headers`, through each promise reader: the same value or error.
import zlib from 'node:zlib'
import bodykit from '../../../src/index'
import { drawSplits, FRAMINGS, framingHeaders, headerValue, nodeRequest, runReader, sameAnswer, splitAt, turn, webRequest, withInput, type Answers, type Source, type Wire } from './harness'

const KINDS = ['json', 'text', 'urlencoded', 'raw', 'multipart'] as const
const CONTENT_TYPES = ['application/json', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/octet-stream', 'multipart/form-data; boundary=X',
  'text/plain; charset=utf-16le', 'application/json; charset=latin1', 'text/plain; charset=x-bogus', 'image/png']
const ENCODINGS = ['identity', 'gzip', 'deflate', 'br', 'bogus'] as const

type AnyReader = (req: unknown, options: object) => Promise<unknown>
const READERS: Record<(typeof KINDS)[number], AnyReader> = {
  json: bodykit.readJson as AnyReader,
  text: bodykit.readText as AnyReader,
  urlencoded: bodykit.readUrlencoded as AnyReader,
  raw: bodykit.readRaw as AnyReader,
  multipart: bodykit.readMultipart as AnyReader
}

export function draw (source: Source) {
  return {
    kind: source.pick('kind', KINDS),
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 80)),
    encoding: source.pick('encoding', ENCODINGS),
    framing: source.pick('framing', FRAMINGS),
    limit: source.pick('limit', [100 * 1024, 32, 1] as const),
    asBytes: source.bool('asBytes'),
    extended: source.bool('extended'),
    splits: drawSplits(source, 8),
    payload: source.rest('payload')
  }
}

type Input = ReturnType<typeof draw>

function encode (payload: Buffer, encoding: Input['encoding']): Buffer {
  if (encoding === 'gzip') return zlib.gzipSync(payload)
  if (encoding === 'deflate') return zlib.deflateSync(payload)
  if (encoding === 'br') return zlib.brotliCompressSync(payload)
  return payload
}

/** The request an input makes (headers with the drawn framing, the pieces its body arrives in) and the reader's options. */
export function requestOf (input: Input): { wire: Wire, options: object } {
  const body = encode(input.payload, input.encoding)
  const headers: Record<string, string> = { ...framingHeaders(input.framing, body.length) }
  if (input.contentType !== '') headers['content-type'] = input.contentType
  if (input.encoding !== 'identity') headers['content-encoding'] = input.encoding
  // A body given whole arrives whole, as a Web Request of bytes does.
  const chunks = input.asBytes ? [body] : splitAt(body, input.splits)
  const options = input.kind === 'multipart' ? { limit: input.limit, files: { storage: 'memory' } } : { limit: input.limit, extended: input.extended }
  return { wire: { headers, chunks }, options }
}

export async function check (input: Input): Promise<void> {
  const { wire, options } = requestOf(input)
  const read = READERS[input.kind]
  let request: Request
  try {
    request = webRequest(wire, input.asBytes)
  } catch {
    // Headers a Request refuses: no such request reaches a reader.
    return
  }
  const fromRequest = await runReader(() => read(request, options), turn(), 'a Web Request')
  const { req, written } = nodeRequest(wire)
  const fromStream = await runReader(() => read(req, options), written, 'a Node stream')
  sameAnswer(fromRequest, fromStream, `read${input.kind}() of a Request against a Node stream`)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('web', data, draw, check)

const form = '--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\n\r\nfile\r\n--X--\r\n'
export const seeds: Record<string, Answers> = {
  json: { kind: 'json', payload: '{"a":[1,2]}' },
  'json-pieces': { kind: 'json', pieces: 3, split: [2, 5], payload: '{"pieces":true}' },
  'json-bytes': { kind: 'json', asBytes: true, payload: '{"bytes":1}' },
  'json-bad': { kind: 'json', payload: '{"a":' },
  'json-gzip': { kind: 'json', encoding: 'gzip', pieces: 2, split: [10], payload: '{"gz":"' + 'z'.repeat(50) + '"}' },
  'json-br-bytes': { kind: 'json', encoding: 'br', asBytes: true, payload: '{"br":1}' },
  'json-chunked': { kind: 'json', framing: 'chunked', pieces: 2, split: [3], payload: '[1]' },
  'json-short': { kind: 'json', framing: 'short', payload: '{"s":1}' },
  'json-long': { kind: 'json', framing: 'long', payload: '{"l":1}' },
  'json-long-bytes': { kind: 'json', framing: 'long', asBytes: true, payload: '{"l":1}' },
  'json-limit': { kind: 'json', limit: 32, payload: '{"over":"' + 'o'.repeat(40) + '"}' },
  'json-limit-gzip': { kind: 'json', limit: 32, encoding: 'gzip', payload: '{"over":"' + 'o'.repeat(400) + '"}' },
  'json-latin1': { kind: 'json', contentType: 'application/json; charset=latin1', payload: '{}' },
  text: { kind: 'text', contentType: 'text/plain; charset=utf-8', pieces: 3, split: [1, 2], payload: '\u00e9\u00e8' },
  'text-utf16': { kind: 'text', contentType: 'text/plain; charset=utf-16le', pieces: 2, split: [1], payload: Buffer.from('odd', 'utf16le') },
  'text-bogus': { kind: 'text', contentType: 'text/plain; charset=x-bogus', payload: 'b' },
  'text-deflate': { kind: 'text', contentType: 'text/plain; charset=utf-8', encoding: 'deflate', payload: 'deflated' },
  'text-bogus-encoding': { kind: 'text', contentType: 'text/plain; charset=utf-8', encoding: 'bogus', payload: 'b' },
  urlencoded: { kind: 'urlencoded', contentType: 'application/x-www-form-urlencoded', payload: 'a=1&b[c]=2' },
  'urlencoded-extended': { kind: 'urlencoded', extended: true, contentType: 'application/x-www-form-urlencoded', payload: 'a[b][c]=1' },
  raw: { kind: 'raw', contentType: 'application/octet-stream', payload: Buffer.from([0, 1, 2, 3]) },
  'raw-empty': { kind: 'raw', contentType: 'application/octet-stream', payload: '' },
  'raw-empty-chunked': { kind: 'raw', contentType: 'application/octet-stream', framing: 'chunked', payload: '' },
  'raw-limit-1': { kind: 'raw', contentType: 'application/octet-stream', limit: 1, payload: 'ab' },
  'raw-other-type': { kind: 'raw', contentType: 'image/png', payload: 'png' },
  'no-content-type': { kind: 'raw', contentType: '', payload: 'none' },
  multipart: { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', payload: form },
  'multipart-pieces': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', pieces: 8, split: [1, 5, 9, 40, 60, 61, 90], payload: form },
  'multipart-chunked': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', framing: 'chunked', pieces: 2, split: [50], payload: form },
  'multipart-gzip': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', encoding: 'gzip', payload: form },
  'multipart-short': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', framing: 'short', payload: form },
  'multipart-damaged': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', payload: form.slice(0, 70) },
  'known-hang-multipart': { kind: 'multipart', contentType: 'multipart/form-data; boundary=X', payload: '\r\n--X--\r\n--X\r\n--X\r\nContent-Disposition:form-data;name="e";filename="t"\r\ne:\r\n\r\nf' }
}
