// Fuzz target 5: compressed bodies (gzip, deflate, br; damaged, stacked, unknown, bombs; right, wrong and no length),
// whole and in pieces, with one answer. An intact body gets its payload's answer, a bomb a 413, a wrong length request.size.invalid.
import type { IncomingMessage, ServerResponse } from 'node:http'
import zlib from 'node:zlib'
import bodykit from '../../../src/index'
import { answerOfMiddleware, drawSplits, Finding, FRAMINGS, framingHeaders, runMiddleware, sameAcross, sameAnswer, splitAt, withInput, type Answers, type Source, type Wire } from './harness'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

const PARSERS = ['raw', 'json', 'text', 'urlencoded'] as const
const CONTENT_TYPES = { raw: 'application/octet-stream', json: 'application/json', text: 'text/plain; charset=utf-8', urlencoded: 'application/x-www-form-urlencoded' }
const ENCODINGS = ['gzip', 'deflate', 'br', 'x-gzip', 'GZIP', 'Deflate', 'BR', 'identity', 'gzip, deflate', 'deflate, gzip', 'gzip, gzip', 'compress', 'zstd', ''] as const
const MANGLES = ['none', 'truncate', 'flip', 'trailing', 'raw', 'bomb', 'stacked', 'empty-blocks'] as const
const LIMITS = ['default', 'payload', 'one-less', 'tiny'] as const

export function draw (source: Source) {
  return {
    parser: source.pick('parser', PARSERS),
    encoding: source.pick('encoding', ENCODINGS),
    mangle: source.pick('mangle', MANGLES),
    level: source.int('level', 0, 9),
    at: source.int('at', 0, 65535),
    limit: source.pick('limit', LIMITS),
    framing: source.pick('framing', FRAMINGS),
    splits: drawSplits(source, 8),
    payload: source.rest('payload')
  }
}

type Input = ReturnType<typeof draw>

/** The one coding of a Content-Encoding this target compresses with, or null (identity, a list, unknown). */
function codingOf (encoding: string): 'gzip' | 'deflate' | 'br' | null {
  // body-parser 2 reads no `x-gzip`: it gets 415, as any coding it does not know.
  const name = encoding.toLowerCase()
  return name === 'gzip' || name === 'deflate' || name === 'br' ? name : null
}

function compress (coding: 'gzip' | 'deflate' | 'br', payload: Buffer, level: number): Buffer {
  if (coding === 'gzip') return zlib.gzipSync(payload, { level })
  if (coding === 'deflate') return zlib.deflateSync(payload, { level })
  return zlib.brotliCompressSync(payload, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: level } })
}

/** The bytes on the wire, and how much the body inflates to (for a bomb). */
function wireOf (input: Input): { body: Buffer, inflated: number } {
  const coding = codingOf(input.encoding)
  if (input.mangle === 'raw' || coding === null) return { body: input.payload, inflated: -1 }
  if (input.mangle === 'bomb') {
    // At least 256 KiB of zeros: a few hundred bytes on the wire.
    const size = 256 * 1024 + input.at * 32
    return { body: compress(coding, Buffer.alloc(size), 9), inflated: size }
  }
  const intact = compress(coding, input.payload, input.level)
  switch (input.mangle) {
    case 'truncate': return { body: intact.subarray(0, input.at % Math.max(1, intact.length)), inflated: -1 }
    case 'flip': {
      const flipped = Buffer.from(intact)
      if (flipped.length > 0) flipped[input.at % flipped.length] ^= 1 << (input.at >> 13)
      return { body: flipped, inflated: -1 }
    }
    case 'trailing': return { body: Buffer.concat([intact, input.payload.subarray(0, 1 + (input.at % 16))]), inflated: -1 }
    case 'stacked': return { body: compress(coding, intact, input.level), inflated: -1 }
    case 'empty-blocks': {
      if (coding !== 'deflate') return { body: intact, inflated: input.payload.length }
      // Empty stored blocks before the data (a body that is mostly overhead), then the data and its Adler-32.
      const empty = Buffer.from([0x00, 0x00, 0x00, 0xff, 0xff])
      return { body: Buffer.concat([Buffer.from([0x78, 0x01]), ...Array<Buffer>(1 + (input.at % 64)).fill(empty), intact.subarray(2)]), inflated: input.payload.length }
    }
    default: return { body: intact, inflated: input.payload.length }
  }
}

function limitOf (input: Input, wire: Buffer): number {
  switch (input.limit) {
    case 'payload': return Math.max(1, input.payload.length, wire.length)
    case 'one-less': return Math.max(1, input.payload.length - 1)
    case 'tiny': return 64
    default: return input.mangle === 'bomb' ? 64 * 1024 : 100 * 1024
  }
}

export async function check (input: Input): Promise<void> {
  const { body, inflated } = wireOf(input)
  const limit = limitOf(input, body)
  const create = (): Middleware => (bodykit[input.parser] as (options: object) => Middleware)({ limit })
  const headers: Record<string, string> = { 'content-type': CONTENT_TYPES[input.parser] }
  if (input.encoding !== '') headers['content-encoding'] = input.mangle === 'stacked' ? `${input.encoding}, ${input.encoding}` : input.encoding
  const framing = { ...headers, ...framingHeaders(input.framing, body.length) }
  const deliveries: { name: string, wire: Wire }[] = [
    { name: `whole (${input.framing})`, wire: { headers: framing, chunks: [body] } },
    { name: `in pieces (${input.framing})`, wire: { headers: framing, chunks: splitAt(body, input.splits) } }
  ]
  const coding = codingOf(input.encoding)
  // Issue 45: one answer however the body is split, a damaged body's too (its longest prefix that inflates without error).
  const actual = await sameAcross(create, deliveries, `${input.parser}() with Content-Encoding ${headers['content-encoding']}`)
  if (coding !== null && ['truncate', 'flip', 'trailing', 'raw'].includes(input.mangle)) return
  const type = actual.error?.type
  const sent = headers['content-encoding'] ?? 'identity'
  if (codingOf(sent) === null && sent.toLowerCase() !== 'identity') {
    // A list (stacked codings) or a coding body-parser does not read: refused from the headers.
    if (type !== 'encoding.unsupported' && type !== 'entity.too.large') throw new Finding(`Content-Encoding ${sent} answered ${JSON.stringify(actual)}, not 415`)
    return
  }
  if (framing['content-length'] !== undefined && framing['content-length'] !== String(body.length)) {
    if (type !== 'request.size.invalid' && type !== 'entity.too.large') throw new Finding(`a wrong Content-Length answered ${JSON.stringify(actual)}`)
    return
  }
  if (input.mangle === 'bomb') {
    if (inflated > limit && type !== 'entity.too.large') throw new Finding(`a bomb of ${inflated} bytes under a limit of ${limit} answered ${JSON.stringify(actual)}`)
    return
  }
  if (coding === null || body.length > limit) return
  // An intact body: its payload's answer, sent plain.
  const plain = { headers: { ...headers, 'content-encoding': 'identity', ...framingHeaders('length', input.payload.length) }, chunks: [input.payload] }
  const expected = answerOfMiddleware(await runMiddleware(create(), plain, 'the payload, plain'), 'the payload, plain')
  sameAnswer(actual, expected, `${input.parser}() of a ${input.encoding} body against its payload sent plain`)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('inflate', data, draw, check)

const json = '{"compressed":[1,2,3],"text":"' + 'abc'.repeat(40) + '"}'
export const seeds: Record<string, Answers> = {
  'gzip-json': { parser: 'json', encoding: 'gzip', level: 6, payload: json },
  'gzip-json-pieces': { parser: 'json', encoding: 'gzip', level: 1, pieces: 4, split: [1, 10, 20], payload: json },
  'gzip-chunked': { parser: 'raw', encoding: 'gzip', framing: 'chunked', pieces: 3, split: [5, 9], payload: 'raw bytes \u0000\u00ff' },
  'deflate-text': { parser: 'text', encoding: 'deflate', level: 9, payload: 'h\u00e9llo w\u00f6rld '.repeat(10) },
  'br-urlencoded': { parser: 'urlencoded', encoding: 'br', level: 5, payload: 'a=1&b=2&c=' + 'x'.repeat(100) },
  'br-pieces': { parser: 'raw', encoding: 'br', level: 11 % 10, pieces: 6, split: [1, 2, 3, 4, 5], payload: 'brotli '.repeat(30) },
  'gzip-upper': { parser: 'raw', encoding: 'GZIP', payload: 'upper' },
  'x-gzip': { parser: 'raw', encoding: 'x-gzip', payload: 'x-gzip is no coding body-parser 2 reads' },
  'deflate-mixed-case': { parser: 'raw', encoding: 'Deflate', payload: 'mixed' },
  'gzip-empty': { parser: 'json', encoding: 'gzip', payload: '' },
  'gzip-limit-exact': { parser: 'raw', encoding: 'gzip', limit: 'payload', payload: 'z'.repeat(500) },
  'gzip-limit-one-less': { parser: 'raw', encoding: 'gzip', limit: 'one-less', pieces: 2, split: [12], payload: 'y'.repeat(500) },
  'gzip-short-length': { parser: 'raw', encoding: 'gzip', framing: 'short', payload: 'short length' },
  'gzip-long-length': { parser: 'json', encoding: 'gzip', framing: 'long', payload: '{}' },
  'br-short-length': { parser: 'raw', encoding: 'br', framing: 'short', pieces: 2, split: [3], payload: 'br short' },
  'gzip-truncated': { parser: 'raw', encoding: 'gzip', mangle: 'truncate', at: 15, payload: 'truncated '.repeat(5) },
  'deflate-truncated-pieces': { parser: 'text', encoding: 'deflate', mangle: 'truncate', at: 20, pieces: 3, split: [4, 11], payload: 'cut '.repeat(20) },
  'br-truncated': { parser: 'raw', encoding: 'br', mangle: 'truncate', at: 7, payload: 'brotli cut short '.repeat(4) },
  'gzip-flipped': { parser: 'raw', encoding: 'gzip', mangle: 'flip', at: 12, payload: 'flip me '.repeat(6) },
  'gzip-flipped-crc': { parser: 'raw', encoding: 'gzip', mangle: 'flip', at: 65533, payload: 'crc' },
  'deflate-flipped': { parser: 'raw', encoding: 'deflate', mangle: 'flip', at: 8195, payload: 'deflate flip '.repeat(6) },
  'br-flipped': { parser: 'raw', encoding: 'br', mangle: 'flip', at: 2, payload: 'brotli flip '.repeat(6) },
  'gzip-trailing': { parser: 'raw', encoding: 'gzip', mangle: 'trailing', at: 5, payload: 'trailing garbage' },
  'br-trailing': { parser: 'raw', encoding: 'br', mangle: 'trailing', at: 3, payload: 'trailing after br' },
  'gzip-raw-garbage': { parser: 'raw', encoding: 'gzip', mangle: 'raw', payload: Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3]) },
  'br-raw-garbage': { parser: 'raw', encoding: 'br', mangle: 'raw', payload: Buffer.from([0xff, 0xff, 0xff]) },
  'gzip-bomb': { parser: 'raw', encoding: 'gzip', mangle: 'bomb', at: 1000 },
  'deflate-bomb-pieces': { parser: 'json', encoding: 'deflate', mangle: 'bomb', at: 65535, pieces: 3, split: [10, 100] },
  'br-bomb': { parser: 'text', encoding: 'br', mangle: 'bomb', at: 500, framing: 'chunked' },
  'gzip-stacked': { parser: 'raw', encoding: 'gzip', mangle: 'stacked', payload: 'stacked twice' },
  'gzip-deflate-list': { parser: 'raw', encoding: 'gzip, deflate', payload: 'a list' },
  compress: { parser: 'raw', encoding: 'compress', payload: 'lzw' },
  zstd: { parser: 'json', encoding: 'zstd', payload: '{}' },
  identity: { parser: 'raw', encoding: 'identity', payload: 'plain' },
  'deflate-empty-blocks': { parser: 'raw', encoding: 'deflate', mangle: 'empty-blocks', at: 63, payload: 'after empty blocks' },
  'tiny-limit-gzip': { parser: 'raw', encoding: 'gzip', limit: 'tiny', payload: 'q'.repeat(200) }
}
