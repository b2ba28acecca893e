// Fuzz target 1: Content-Type and the `type` option (media types, wildcards, +suffix, lists) and the charset parameter,
// through both entries' json, text, urlencoded and raw, each against the body-parser release it replaces.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bodyParser2 from 'body-parser'
import bodykit from '../../../src/index'
import legacy from '../../../src/legacy'
import { answerOfError, answerOfMiddleware, comparable, headerValue, runMiddleware, sameAnswer, withInput, type Answer, type Answers, type Source } from './harness'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void
type Factory = (options?: object) => Middleware

// body-parser 1.x is installed under an alias that has no types of its own.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const bodyParser1 = require('body-parser-1') as Record<string, Factory>

const ENTRIES = ['default', 'legacy'] as const
const PARSERS = ['json', 'text', 'urlencoded', 'raw'] as const
/** `type` options. Extension names only where mime-types 2 and 3 agree (legacy: docs/differences.md). */
const TYPES: readonly (string | string[] | undefined)[] = [
  undefined, 'application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'json', 'txt', 'html',
  'urlencoded', 'application/*', '*/*', '+json', '*/json', 'text/*', 'application/vnd.api+json', 'multipart/*', 'bin', 'xml',
  ['json', 'text/plain'], ['application/x-www-form-urlencoded', '*/xml'], ['+xml', 'text/html', 'application/*+json'], 'APPLICATION/JSON', 'text/plain; charset=utf-8', ''
]
const CONTENT_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'application/json; charset=UTF-8', 'application/json;charset=utf-16le', 'application/json; charset=latin1',
  'application/json; charset="utf-8"', 'application/json; charset=bogus', 'application/json;', 'application/json; charset', 'application/json ; charset=utf-8 ; x=y',
  'application/vnd.api+json', 'application/ld+json; charset=utf-8', 'text/plain', 'text/plain; charset=iso-8859-1', 'text/plain; charset=koi8-r', 'text/plain; charset=utf-16',
  'text/plain; charset=x-unknown', 'text/plain; charset=utf-8; charset=latin1', 'text/html', 'text/xml', 'application/xml', 'application/x-www-form-urlencoded',
  'application/x-www-form-urlencoded; charset=iso-8859-1', 'application/x-www-form-urlencoded; charset=utf-16', 'application/octet-stream', 'image/png',
  'multipart/form-data; boundary=x', 'TEXT/PLAIN; CHARSET=UTF-8', 'text/plain; charset="unterminated', 'text/plain;\tcharset=utf-8', '*/*', 'application', '/', ''
]
const CHARSETS = [undefined, 'utf-8', 'iso-8859-1', 'utf-16le', 'latin1', 'ascii']

/** charset names iconv-lite 0.4 (body-parser 1.x) takes for a codec: a documented difference of the legacy entry. */
const PROTOTYPE_CHARSET = /charset\s*=\s*"?(constructor|__proto__|hasownproperty|isprototypeof|propertyisenumerable|tolocalestring|tostring|valueof|__(define|lookup)[gs]etter__)\b/i

export function draw (source: Source) {
  return {
    entry: source.pick('entry', ENTRIES),
    parser: source.pick('parser', PARSERS),
    type: source.pick('type', TYPES),
    defaultCharset: source.pick('defaultCharset', CHARSETS),
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 160)),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

function optionsFor (input: Input): Record<string, unknown> {
  const options: Record<string, unknown> = {}
  if (input.type !== undefined) options.type = input.type
  if (input.parser === 'text' && input.defaultCharset !== undefined) options.defaultCharset = input.defaultCharset
  if (input.parser === 'urlencoded') options.extended = false
  return options
}

/** Creates a middleware, or the TypeError its options get, as an answer. */
function create (factory: Factory, options: object): Middleware | Answer {
  try {
    return factory(options)
  } catch (err) {
    return { error: { status: 'thrown', type: (err as Error).name, message: (err as Error).message } }
  }
}

export async function check (input: Input): Promise<void> {
  const ours = (input.entry === 'default' ? bodykit : legacy) as unknown as Record<string, Factory>
  const theirs = (input.entry === 'default' ? bodyParser2 : bodyParser1) as unknown as Record<string, Factory>
  const headers: Record<string, string> = { 'content-length': String(input.body.length) }
  if (input.contentType !== '') headers['content-type'] = input.contentType
  const wire = { headers, chunks: [input.body] }
  const mine = create(ours[input.parser], optionsFor(input))
  const reference = create(theirs[input.parser], optionsFor(input))
  if (typeof mine !== 'function' || typeof reference !== 'function') {
    sameAnswer(typeof mine === 'function' ? { value: 'created' } : mine, typeof reference === 'function' ? { value: 'created' } : reference, 'options')
    return
  }
  const actual = answerOfMiddleware(await runMiddleware(mine, wire, 'bodykit'), 'bodykit')
  const run = await runMiddleware(reference, wire, 'body-parser')
  const expected = run.err ? answerOfError(run.err) : { value: comparable(run.req.body) }
  if (input.entry === 'legacy' && PROTOTYPE_CHARSET.test(input.contentType)) return
  sameAnswer(actual, expected, `bodykit${input.entry === 'legacy' ? '/legacy' : ''} ${input.parser}() against body-parser`)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('content-type', data, draw, check)

export const seeds: Record<string, Answers> = {
  'json-plain': { parser: 'json', contentType: 'application/json', body: '{"a":1}' },
  'json-charset-upper': { parser: 'json', contentType: 'application/json; charset=UTF-8', body: '{"a":[1,2]}' },
  'json-latin1-refused': { parser: 'json', contentType: 'application/json; charset=latin1', body: '{}' },
  'json-utf16': { parser: 'json', contentType: 'application/json;charset=utf-16le', body: Buffer.from('{"x":"y"}', 'utf16le') },
  'json-suffix': { parser: 'json', type: '+json', contentType: 'application/vnd.api+json', body: '[true]' },
  'json-trailing-semicolon': { parser: 'json', contentType: 'application/json;', body: '{"a":1}' },
  'json-legacy-trailing-semicolon': { entry: 'legacy', parser: 'json', contentType: 'application/json;', body: '{"a":1}' },
  'json-bare-charset': { parser: 'json', contentType: 'application/json; charset', body: '{}' },
  'json-no-type': { parser: 'json', contentType: '', body: '{}' },
  'json-wildcard': { parser: 'json', type: '*/*', contentType: 'text/plain', body: '{"t":1}' },
  'json-free-type': { parser: 'json', type: 'application/*', contentType: 'application/x-json-stream ; charset = "utf-8"', body: '{}' },
  'text-latin1': { parser: 'text', contentType: 'text/plain; charset=iso-8859-1', body: Buffer.from([0x63, 0x61, 0x66, 0xe9]) },
  'text-koi8r': { parser: 'text', contentType: 'text/plain; charset=koi8-r', body: Buffer.from([0xf0, 0xd2, 0xc9]) },
  'text-unknown-charset': { parser: 'text', contentType: 'text/plain; charset=x-unknown', body: 'abc' },
  'text-two-charsets': { parser: 'text', contentType: 'text/plain; charset=utf-8; charset=latin1', body: 'caf\u00e9' },
  'text-default-charset': { parser: 'text', defaultCharset: 'utf-16le', contentType: 'text/plain', body: Buffer.from('hi', 'utf16le') },
  'text-legacy-two-charsets': { entry: 'legacy', parser: 'text', contentType: 'text/plain; charset=utf-8; charset=latin1', body: 'caf\u00e9' },
  'text-unterminated-quote': { parser: 'text', contentType: 'text/plain; charset="unterminated', body: 'x' },
  'text-html-list': { parser: 'text', type: [['+xml', 'text/html', 'application/*+json']], contentType: 'text/html', body: '<p>' },
  'text-constructor-charset': { parser: 'text', contentType: 'text/plain; charset=constructor', body: 'x' },
  'text-upper': { parser: 'text', contentType: 'TEXT/PLAIN; CHARSET=UTF-8', body: 'up' },
  'text-tab': { parser: 'text', contentType: 'text/plain;\tcharset=utf-8', body: 'tab' },
  'urlencoded-plain': { parser: 'urlencoded', contentType: 'application/x-www-form-urlencoded', body: 'a=1&b=2' },
  'urlencoded-latin1': { parser: 'urlencoded', contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', body: 'a=%E9' },
  'urlencoded-utf16': { parser: 'urlencoded', contentType: 'application/x-www-form-urlencoded; charset=utf-16', body: 'a=1' },
  'urlencoded-legacy-latin1': { entry: 'legacy', parser: 'urlencoded', contentType: 'application/x-www-form-urlencoded; charset=iso-8859-1', body: 'a=1' },
  'urlencoded-type-list': { parser: 'urlencoded', type: [['application/x-www-form-urlencoded', '*/xml']], contentType: 'application/xml', body: 'x=1' },
  'raw-octets': { parser: 'raw', contentType: 'application/octet-stream', body: Buffer.from([0, 1, 2, 255]) },
  'raw-charset': { parser: 'raw', type: '*/*', contentType: 'image/png; charset=bogus', body: 'png' },
  'raw-multipart': { parser: 'raw', type: 'multipart/*', contentType: 'multipart/form-data; boundary=x', body: '--x--' },
  'raw-empty-type-option': { parser: 'raw', type: '', contentType: 'application/octet-stream', body: 'e' },
  'raw-slash': { parser: 'raw', type: '*/*', contentType: '/', body: 's' },
  'raw-bare-type': { parser: 'raw', type: '*/*', contentType: 'application', body: 'b' },
  'legacy-json-suffix': { entry: 'legacy', parser: 'json', type: 'application/vnd.api+json', contentType: 'application/vnd.api+json', body: '{}' }
}
