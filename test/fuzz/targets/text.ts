// Fuzz target 4: text() with charsets (named, unknown, free) on drawn bytes, whole and in pieces, against iconv-lite's decode.
import iconv from 'iconv-lite'
import bodykit from '../../../src/index'
import { comparable, deliveriesOf, drawSplits, Finding, sameAcross, withInput, type Answers, type Source } from './harness'

const CHARSETS = ['', 'utf-8', 'UTF-8', 'utf8', 'iso-8859-1', 'latin1', 'windows-1252', 'koi8-r', 'utf-16le', 'utf-16be', 'utf-16', 'ucs2', 'utf-32le',
  'utf-32', 'utf-7', 'cesu8', 'shift_jis', 'euc-jp', 'gbk', 'gb18030', 'big5', 'euc-kr', 'cp437', 'macintosh', 'iso-8859-8-i', 'ascii', 'binary',
  'base64', 'hex', 'x-unknown', 'constructor', '__proto__', 'tostring', '"utf-8"']
const DEFAULT_CHARSETS = [undefined, 'utf-8', 'iso-8859-1', 'utf-16le', 'shift_jis']

export function draw (source: Source) {
  return {
    charset: source.text('charset', CHARSETS, 40),
    defaultCharset: source.pick('defaultCharset', DEFAULT_CHARSETS),
    limit: source.pick('limit', [100 * 1024, 16, 1] as const),
    splits: drawSplits(source, 8),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

export async function check (input: Input): Promise<void> {
  // A free charset is a token (the listed '"utf-8"' aside): a quote left open makes the parameter list unreadable.
  const charset = input.charset === '"utf-8"' ? input.charset : input.charset.replace(/[^\w!#$%&'*+.^`|~-]/g, '')
  const contentType = 'text/plain' + (charset === '' ? '' : '; charset=' + charset)
  const deliveries = deliveriesOf({ 'content-type': contentType }, input.body, input.splits)
  const actual = await sameAcross(() => bodykit.text({ defaultCharset: input.defaultCharset, limit: input.limit }), deliveries, 'text()')
  const name = (charset.replace(/^"(.*)"$/, '$1') || input.defaultCharset || 'utf-8').toLowerCase()
  if (actual.error?.type === 'charset.unsupported') {
    if (iconv.encodingExists(name)) throw new Finding(`text(): iconv-lite decodes ${name}, bodykit refused it: ${JSON.stringify(actual)}`)
    return
  }
  if (actual.error?.type === 'entity.too.large') {
    if (input.body.length <= input.limit) throw new Finding(`text(): 413 for ${input.body.length} bytes within the limit ${input.limit}`)
    return
  }
  if (actual.error !== undefined) throw new Finding(`text(): unexpected error ${JSON.stringify(actual)} (charset ${name})`)
  if (!iconv.encodingExists(name)) throw new Finding(`text(): decoded a body in ${name}, which iconv-lite does not know`)
  if (input.body.length > input.limit) throw new Finding(`text(): ${input.body.length} bytes over the limit ${input.limit} were read`)
  const expected = iconv.decode(input.body, name)
  if (actual.value !== comparable(expected)) throw new Finding(`text(): ${JSON.stringify(actual.value)} where iconv-lite decodes ${JSON.stringify(expected)} (${name})`)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('text', data, draw, check)

export const seeds: Record<string, Answers> = {
  ascii: { body: 'hello world' },
  'utf8-split': { charset: 'utf-8', body: 'caf\u00e9 \u4e2d\u6587 \ud83d\ude00', pieces: 4, split: [4, 8, 13] },
  'utf8-invalid': { charset: 'utf8', body: Buffer.from([0x61, 0xc3, 0x28, 0xf0, 0x9f, 0x98, 0xff, 0x62]) },
  'utf8-bom': { body: Buffer.from([0xef, 0xbb, 0xbf, 0x68, 0x69]), pieces: 2, split: [2] },
  latin1: { charset: 'iso-8859-1', body: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0xff]) },
  windows1252: { charset: 'windows-1252', body: Buffer.from([0x80, 0x93, 0x94, 0x9f]) },
  koi8r: { charset: 'koi8-r', body: Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]) },
  'utf16le-odd-split': { charset: 'utf-16le', body: Buffer.from('\u00e9t\u00e9 \ud83d\ude00', 'utf16le'), pieces: 3, split: [1, 5] },
  'utf16le-odd-length': { charset: 'utf-16le', body: Buffer.from([0x61, 0x00, 0x62]) },
  'utf16be': { charset: 'utf-16be', body: Buffer.from([0x00, 0x61, 0xd8, 0x3d, 0xde, 0x00]) },
  'utf16-bom': { charset: 'utf-16', body: Buffer.from([0xfe, 0xff, 0x00, 0x41]) },
  'utf16-no-bom': { charset: 'utf-16', body: Buffer.from([0x41, 0x00, 0x42, 0x00]) },
  utf32: { charset: 'utf-32le', body: Buffer.from([0x41, 0, 0, 0, 0x00, 0xf6, 0x01, 0]) },
  'utf32-bad': { charset: 'utf-32', body: Buffer.from([0xff, 0xff, 0xff, 0xff, 0x41]) },
  utf7: { charset: 'utf-7', body: 'Hi Mom -+Jjo--!', pieces: 3, split: [5, 9] },
  cesu8: { charset: 'cesu8', body: Buffer.from([0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80]) },
  'shift-jis-split': { charset: 'shift_jis', body: Buffer.from([0x82, 0xa0, 0x82, 0xa2, 0x81]), pieces: 2, split: [1] },
  eucjp: { charset: 'euc-jp', body: Buffer.from([0xa4, 0xa2, 0x8e, 0xb1]) },
  gb18030: { charset: 'gb18030', body: Buffer.from([0x81, 0x30, 0x81, 0x30, 0xd6, 0xd0]), pieces: 3, split: [1, 3] },
  big5: { charset: 'big5', body: Buffer.from([0xa4, 0x40, 0xa4]) },
  binary: { charset: 'binary', body: Buffer.from([0, 1, 0x80, 0xff]) },
  base64: { charset: 'base64', body: 'aGVsbG8=' },
  hex: { charset: 'hex', body: '48656c6c6f' },
  unknown: { charset: 'x-unknown', body: 'x' },
  constructor: { charset: 'constructor', body: 'x' },
  proto: { charset: '__proto__', body: 'x' },
  quoted: { charset: '"utf-8"', body: 'q' },
  'default-utf16le': { charset: '', defaultCharset: 'utf-16le', body: Buffer.from('dflt', 'utf16le') },
  'default-shift-jis': { charset: '', defaultCharset: 'shift_jis', body: Buffer.from([0x82, 0xa0]) },
  'free-charset': { charset: 'ISO_8859-5', body: Buffer.from([0xb0, 0xb1]) },
  'limit-16': { limit: 16, body: 'seventeen bytes!!', pieces: 2, split: [8] },
  'limit-1': { limit: 1, body: 'ab' },
  empty: { body: '' }
}
