// Fuzz target 2: json() on drawn bytes, whole and in pieces, against JSON.parse of the body iconv-lite decodes.
import iconv from 'iconv-lite'
import bodykit from '../../../src/index'
import { comparable, deliveriesOf, drawSplits, Finding, sameAcross, withInput, type Answer, type Answers, type Source } from './harness'

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/json; charset=utf-16le', 'application/json; charset=utf-16be',
  'application/json; charset=utf-16', 'application/json; charset=UTF-8', 'application/json; charset=utf-32le']
const LIMITS = ['default', 'exact', 'one-less', 'tiny'] as const
const POISONING = [undefined, 'ignore', 'remove', 'error'] as const

export function draw (source: Source) {
  return {
    contentType: source.pick('contentType', CONTENT_TYPES),
    strict: source.bool('strict'),
    limit: source.pick('limit', LIMITS),
    onProtoPoisoning: source.pick('onProtoPoisoning', POISONING),
    onConstructorPoisoning: source.pick('onConstructorPoisoning', POISONING),
    splits: drawSplits(source, 8),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

function limitOf (input: Input): number {
  switch (input.limit) {
    case 'exact': return Math.max(1, input.body.length)
    case 'one-less': return Math.max(1, input.body.length - 1)
    case 'tiny': return 8
    default: return 100 * 1024
  }
}

/** What JSON.parse says of the body, as json() should: body-parser's rules on top (empty is {}, strict). */
function expectedOf (input: Input, limit: number): Answer | 'parse-error' {
  if (input.body.length > limit) return { error: { status: 413, type: 'entity.too.large', message: 'request entity too large' } }
  const charset = /charset=([\w-]+)/i.exec(input.contentType)?.[1] ?? 'utf-8'
  const text = iconv.decode(input.body, charset)
  if (text.length === 0) return { value: comparable({}) }
  if (input.strict && !/^[ \t\n\r]*[[{]/.test(text)) return 'parse-error'
  try {
    return { value: comparable(JSON.parse(text)) }
  } catch {
    return 'parse-error'
  }
}

export async function check (input: Input): Promise<void> {
  const limit = limitOf(input)
  const options = { strict: input.strict, limit, onProtoPoisoning: input.onProtoPoisoning, onConstructorPoisoning: input.onConstructorPoisoning }
  const deliveries = deliveriesOf({ 'content-type': input.contentType }, input.body, input.splits)
  const actual = await sameAcross(() => bodykit.json(options), deliveries, 'json()')
  const poisoningChecked = (input.onProtoPoisoning ?? 'ignore') === 'ignore' && (input.onConstructorPoisoning ?? 'ignore') === 'ignore'
  const expected = expectedOf(input, limit)
  if (expected === 'parse-error') {
    if (actual.error?.type !== 'entity.parse.failed' || actual.error.status !== 400) throw new Finding(`json(): JSON.parse refuses the body, bodykit answered ${JSON.stringify(actual)}`)
    return
  }
  if (expected.error !== undefined || poisoningChecked) {
    if (JSON.stringify(actual) !== JSON.stringify(expected)) throw new Finding(`json(): wrong answer:\n  bodykit    ${JSON.stringify(actual)}\n  JSON.parse ${JSON.stringify(expected)}`)
  } else if (actual.error !== undefined && actual.error.type !== 'entity.parse.failed') {
    throw new Finding(`json(): a body JSON.parse reads was refused with ${JSON.stringify(actual)}`)
  }
}

export const fuzz = (data: Buffer): Promise<void> => withInput('json', data, draw, check)

export const seeds: Record<string, Answers> = {
  object: { body: '{"a":1,"b":[true,null,"x"]}' },
  array: { body: '[1,2,3]', pieces: 3, split: [1, 4] },
  empty: { body: '' },
  whitespace: { body: ' \n\t ' },
  'strict-number': { strict: true, body: '42' },
  'loose-number': { body: '-0' },
  'loose-string': { body: '"\\u00e9\\ud800"' },
  'strict-leading-space': { strict: true, body: '  {"a":{}}' },
  bom: { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')]) },
  'bom-split': { body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')]), pieces: 3, split: [1, 2] },
  'utf8-split-in-char': { body: '{"k":"\u00e9\u4e2d\ud83d\ude00"}', pieces: 4, split: [7, 9, 12] },
  'invalid-utf8': { body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
  'utf16le': { contentType: 'application/json; charset=utf-16le', body: Buffer.from('{"w":"\u00e9"}', 'utf16le'), pieces: 2, split: [3] },
  'utf16be': { contentType: 'application/json; charset=utf-16be', body: Buffer.from([0, 0x5b, 0, 0x5d]) },
  'utf16-bom': { contentType: 'application/json; charset=utf-16', body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('[1]', 'utf16le')]) },
  'utf32le': { contentType: 'application/json; charset=utf-32le', body: Buffer.from([0x5b, 0, 0, 0, 0x5d, 0, 0, 0]) },
  truncated: { body: '{"a":' },
  'trailing-garbage': { body: '{"a":1}x' },
  'deep-nesting': { body: '['.repeat(2000) + ']'.repeat(2000) },
  'proto-key': { body: '{"__proto__":{"polluted":1},"a":{"__proto__":[]}}' },
  'proto-key-remove': { onProtoPoisoning: 'remove', body: '{"__proto__":{"x":1},"b":{"__proto__":1}}' },
  'proto-key-error': { onProtoPoisoning: 'error', body: '[{"__proto__":null}]' },
  'constructor-prototype': { onConstructorPoisoning: 'error', body: '{"constructor":{"prototype":{"x":1}}}' },
  'constructor-remove': { onConstructorPoisoning: 'remove', body: '{"a":{"constructor":{"prototype":null}}}' },
  'escaped-proto': { body: '{"\\u005f_proto__":{"p":1}}' },
  'limit-exact': { limit: 'exact', body: '{"exactly":"at the limit"}', pieces: 2, split: [5] },
  'limit-one-less': { limit: 'one-less', body: '{"over":"by one"}', pieces: 2, split: [5] },
  'limit-tiny': { limit: 'tiny', body: '{"a":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}', pieces: 5, split: [1, 2, 3, 30] },
  'big-number': { body: '[1e400,-1e-400,123456789012345678901234567890]' },
  'duplicate-keys': { body: '{"a":1,"a":2}' },
  'control-char': { body: '["\u0001"]' },
  'many-pieces': { body: '{"abcdefghijklmnopqrstuvwxyz":[0,1,2,3,4,5,6,7,8,9]}', pieces: 8, split: [1, 2, 3, 5, 8, 13, 21] }
}
