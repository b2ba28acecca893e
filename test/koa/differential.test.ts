// bodykit/koa against koa-bodyparser 4 and @koa/bodyparser 6: the same requests to a Koa app with each library and to one with
// bodykit/koa given the same options, on Koa 2 and Koa 3, over real HTTP; what the parser set, the status, Koa's answer and
// the error's message and `expose` must match. A table of cases per option set, then generated requests.
import assert from 'node:assert/strict'
import net from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import zlib from 'node:zlib'
import fc from 'fast-check'
import bodykitKoa from '../../src/koa'
import { rawRequest } from '../helpers/server'
import { KOA_MAJORS, koaBodyparser4, koaBodyparser6, send, startKoaApp, type KoaApp, type KoaRequest, type Outcome, type MiddlewareFactory } from './apps'

const RUNS = Number(process.env.KOA_DIFFERENTIAL_RUNS ?? 300)

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'
const MIB = 1024 * 1024

/** One request of a table, named for the failure message. */
type Case = [name: string, request: KoaRequest]

/** A set of options and the requests sent with them; `options` makes a fresh object (koa-bodyparser 4 writes to it). */
interface Group {
  name: string
  options: () => Record<string, unknown>
  cases: Case[]
}

const bodyParser = bodykitKoa as unknown as MiddlewareFactory

/** @koa/bodyparser 6's own options: with none of them, bodykit/koa is given 6's default `parsedMethods`, as docs/koa.md says. */
const OPTIONS_OF_6 = ['jsonStrict', 'onError', 'patchNode', 'enableRawChecking', 'parsedMethods']
function asDialect6 (options: Record<string, unknown>): Record<string, unknown> {
  return OPTIONS_OF_6.some((name) => name in options) ? options : { parsedMethods: ['POST', 'PUT', 'PATCH'], ...options }
}

const json = (body: KoaRequest['body'], headers: Record<string, string> = {}): KoaRequest => ({ headers: { 'content-type': JSON_TYPE, ...headers }, body })
const form = (body: KoaRequest['body'], headers: Record<string, string> = {}): KoaRequest => ({ headers: { 'content-type': FORM_TYPE, ...headers }, body })
const typed = (type: string, body?: KoaRequest['body'], headers: Record<string, string> = {}): KoaRequest => ({ headers: { 'content-type': type, ...headers }, body })

/** A JSON array of exactly `size` bytes. */
function jsonOfSize (size: number): string {
  return '["' + 'x'.repeat(size - 4) + '"]'
}

const SAMPLE = JSON.stringify({ name: 'Zoë', tags: ['a', 'b'], n: 1.5, ok: true, none: null })

/** JSON bodies: valid, invalid, empty, missing, in other charsets, with prototype keys. */
const JSON_BODIES: Case[] = [
  ['a JSON object', json(SAMPLE)],
  ['a JSON array', json('[1,"two",{"three":3}]')],
  ['a JSON string', json('"abc"')],
  ['a JSON number after whitespace', json(' \n42')],
  ['invalid JSON', json('{bad')],
  ['truncated JSON', json('{"a":')],
  ['whitespace only', json(' \t\n')],
  ['an empty JSON body', json('')],
  ['a JSON type without a body', typed(JSON_TYPE)],
  ['JSON after a BOM', json(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":1}')]))],
  ['JSON in latin1 bytes, declared latin1', json(Buffer.from('{"café":"é"}', 'latin1'), { 'content-type': JSON_TYPE + '; charset=latin1' })],
  ['JSON declared utf-16', json('{"a":1}', { 'content-type': JSON_TYPE + '; charset=utf-16' })],
  ['invalid UTF-8 in JSON', json(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]))]
]

/** JSON with the keys the poisoning guard looks at. */
const POISONING: Case[] = [
  ['a __proto__ key', json('{"__proto__":{"polluted":1}}')],
  ['a nested __proto__ key', json('{"a":[{"__proto__":{"polluted":1}}]}')],
  ['an escaped __proto__ key', json('{"\\u005f_proto__":{"polluted":1}}')],
  ['a constructor.prototype key', json('{"constructor":{"prototype":{"polluted":1}}}')]
]

/** Content-Types: the JSON family, headers type-is 1 and 2 read differently, and types no kind takes. */
const CONTENT_TYPES: Case[] = [
  ['application/json-patch+json', typed('application/json-patch+json', '[{"op":"add","path":"/a","value":1}]')],
  ['application/vnd.api+json', typed('application/vnd.api+json', '{"data":null}')],
  ['application/csp-report', typed('application/csp-report', '{"csp-report":{}}')],
  ['application/scim+json', typed('application/scim+json', '{"schemas":[]}')],
  ['application/reports+json', typed('application/reports+json', '[{"type":"csp"}]')],
  ['application/ld+json', typed('application/ld+json', '{"@id":1}')],
  ['a JSON type with a trailing semicolon', typed(JSON_TYPE + ';', '{"a":1}')],
  ['a JSON type with a charset', typed(JSON_TYPE + '; charset=utf-8', '{"a":1}')],
  ['a JSON type in capitals', typed('APPLICATION/JSON', '{"a":1}')],
  ['a JSON type with a parameter without a value', typed(JSON_TYPE + '; charset', '{"a":1}')],
  ['a JSON type with a quoted parameter', typed(JSON_TYPE + '; x="a;b"', '{"a":1}')],
  ['a form type with a parameter without a value', typed(FORM_TYPE + '; charset', 'a=1')],
  ['text/json', typed('text/json', '{"a":1}')],
  ['a body without a Content-Type', { body: '{"a":1}' }],
  ['text/plain', typed('text/plain', 'hello')],
  ['text/plain with a charset', typed('text/plain; charset=utf-8', 'héllo')],
  ['text/xml', typed('text/xml', '<a>1</a>')],
  ['application/xml', typed('application/xml', '<a/>')],
  ['text/html', typed('text/html', '<p>')]
]

/** Forms as qs reads them, empty, missing and in another charset. */
const FORMS: Case[] = [
  ['a form', form('a=1&b=two&b=three')],
  ['a form with dots and brackets', form('a.b=1&c[d]=2&e[]=x&e[]=y&f[0][g]=h')],
  ['a form with prototype keys', form('__proto__[x]=1&hasOwnProperty=2&constructor[prototype][y]=3&toString=4')],
  ['a form with a bad escape', form('a=%E9&b=%zz&c=%')],
  ['a form nested past qs\'s depth', form('a[b][c][d][e][f][g][h]=1')],
  ['a form of 1,200 parameters', form(Array.from({ length: 1200 }, (_, i) => 'p' + i + '=' + i).join('&'))],
  ['a form of 25 array items', form(Array.from({ length: 25 }, (_, i) => 'a[' + i + ']=' + i).join('&'))],
  ['an empty form', form('')],
  ['a form type without a body', typed(FORM_TYPE)],
  ['a form with a charset', typed(FORM_TYPE + '; charset=iso-8859-1', Buffer.from('a=é', 'latin1'))]
]

/** How the bytes come: chunked, compressed (also under the other format's name), in encodings inflation refuses. */
const TRANSFERS: Case[] = [
  ['chunked JSON', json(['{"a":', '1}'])],
  ['chunked form', form(['a=1', '&b=2'])],
  ['gzip JSON', json(zlib.gzipSync(SAMPLE), { 'content-encoding': 'gzip' })],
  ['deflate JSON', json(zlib.deflateSync(SAMPLE), { 'content-encoding': 'deflate' })],
  ['br JSON', json(zlib.brotliCompressSync(SAMPLE), { 'content-encoding': 'br' })],
  ['gzip bytes labelled deflate', json(zlib.gzipSync(SAMPLE), { 'content-encoding': 'deflate' })],
  ['deflate bytes labelled gzip', json(zlib.deflateSync(SAMPLE), { 'content-encoding': 'gzip' })],
  ['gzip form', form(zlib.gzipSync('a=1&b=2'), { 'content-encoding': 'gzip' })],
  ['chunked gzip JSON', json([zlib.gzipSync(SAMPLE)], { 'content-encoding': 'gzip' })],
  ['two gzip members', json(Buffer.concat([zlib.gzipSync('{"a":'), zlib.gzipSync('1}')]), { 'content-encoding': 'gzip' })],
  ['Content-Encoding identity', json('{"a":1}', { 'content-encoding': 'identity' })],
  ['Content-Encoding zstd', json('{"a":1}', { 'content-encoding': 'zstd' })],
  ['Content-Encoding x-gzip', json(zlib.gzipSync('{"a":1}'), { 'content-encoding': 'x-gzip' })],
  ['Content-Encoding gzip, br', json('{"a":1}', { 'content-encoding': 'gzip, br' })],
  ['an unknown encoding over the limit', json('x'.repeat(MIB + 1), { 'content-encoding': 'compress' })],
  ['an unknown encoding on a text body', typed('text/plain', 'hi', { 'content-encoding': 'zstd' })]
]

/** The default limits: over, at, with and without a length, inflated past them. */
const DEFAULT_LIMITS: Case[] = [
  ['JSON over 1mb, with its length', json(jsonOfSize(MIB + 1))],
  ['JSON of exactly 1mb', json(jsonOfSize(MIB))],
  ['JSON over 1mb, chunked', json([jsonOfSize(MIB + 1)])],
  ['gzip JSON inflating past 1mb', json(zlib.gzipSync(jsonOfSize(2 * MIB)), { 'content-encoding': 'gzip' })],
  ['a form over 56kb', form('a=' + 'x'.repeat(56 * 1024))],
  ['a form of exactly 56kb', form('a=' + 'x'.repeat(56 * 1024 - 2))],
  ['a text body over 1mb', typed('text/plain', 'x'.repeat(MIB + 1))]
]

/** Methods, with bodies and without. */
const METHODS: Case[] = [
  ['GET with a JSON body', { method: 'GET', ...json('{"get":1}') }],
  ['GET with a form body', { method: 'GET', ...form('get=1') }],
  ['GET without a body', { method: 'GET' }],
  ['GET with a JSON type and no body', { method: 'GET', headers: { 'content-type': JSON_TYPE } }],
  ['HEAD with a JSON body', { method: 'HEAD', ...json('{"head":1}') }],
  ['DELETE with a JSON body', { method: 'DELETE', ...json('{"delete":1}') }],
  ['DELETE with invalid JSON', { method: 'DELETE', ...json('{bad') }],
  ['PUT with a form', { method: 'PUT', ...form('put=1') }],
  ['PATCH with JSON', { method: 'PATCH', ...json('{"patch":1}') }],
  ['OPTIONS with JSON', { method: 'OPTIONS', ...json('{"options":1}') }]
]

/** What earlier middleware does: disable the parser, set a body, a rawBody or `ctx.req.body`; detectJSON's cue. */
const HOOKS: Case[] = [
  ['ctx.disableBodyParser', json('{"a":1}', { 'x-disable': '1' })],
  ['ctx.disableBodyParser with invalid JSON', json('{bad', { 'x-disable': '1' })],
  ['a body set before', json('{"a":1}', { 'x-preset-body': '{"preset":true}' })],
  ['a body set before, invalid JSON sent', json('{bad', { 'x-preset-body': '"preset"' })],
  ['a rawBody set before', json('{"a":1}', { 'x-preset-raw': 'preset' })],
  ['ctx.req.body set before', json('{"a":1}', { 'x-preset-req-body': '{"node":true}' })],
  ['ctx.req.body set before, invalid JSON sent', json('{bad', { 'x-preset-req-body': '{"node":true}' })],
  ['detectJSON\'s cue on text', typed('text/plain', '{"detected":1}', { 'x-detect': '1' })],
  ['detectJSON\'s cue on XML', typed('text/xml', '{"detected":1}', { 'x-detect': '1' })]
]

/** Requests every option set meets. */
const COMMON_CASES: Case[] = [...JSON_BODIES, ...POISONING, ...CONTENT_TYPES, ...FORMS, ...TRANSFERS, ...DEFAULT_LIMITS, ...METHODS, ...HOOKS]

/** The requests an error handler sees: one of each refusal. */
const REFUSALS = COMMON_CASES.filter(([name]) => /^(a JSON string|invalid JSON|a __proto__ key|Content-Encoding zstd|JSON over 1mb, with its length|a form over 56kb)$/.test(name))

/** Cases for `extendTypes`: the JSON family and the other types, and the types added. */
const EXTENDED: Case[] = [...CONTENT_TYPES, ['application/x-form', typed('application/x-form', 'a=1')], ['text/csv', typed('text/csv', 'a,b')], ['application/rss+xml', typed('application/rss+xml', '<rss/>')]]

/** Requests for small limits: under, at and over, with and without a length, compressed or not. */
const LIMIT_CASES: Case[] = [
  ['JSON under jsonLimit', json('{"a":"' + 'x'.repeat(80) + '"}')],
  ['JSON at jsonLimit', json('{"a":"' + 'x'.repeat(92) + '"}')],
  ['JSON over jsonLimit', json('{"a":"' + 'x'.repeat(93) + '"}')],
  ['JSON over jsonLimit, chunked', json(['{"a":"', 'x'.repeat(93), '"}'])],
  ['gzip JSON inflating past jsonLimit', json(zlib.gzipSync('{"a":"' + 'x'.repeat(500) + '"}'), { 'content-encoding': 'gzip' })],
  ['br JSON inflating past jsonLimit', json(zlib.brotliCompressSync('{"a":"' + 'x'.repeat(500) + '"}'), { 'content-encoding': 'br' })],
  ['a form over formLimit', form('a=' + 'x'.repeat(1024))],
  ['a form at formLimit', form('a=' + 'x'.repeat(1022))],
  ['a deflate form over formLimit', form(zlib.deflateSync('a=' + 'x'.repeat(4096)), { 'content-encoding': 'deflate' })],
  ['text over textLimit', typed('text/plain', 'x'.repeat(11))],
  ['text at textLimit', typed('text/plain', 'x'.repeat(10))],
  ['XML over xmlLimit', typed('application/xml', '<a>' + 'x'.repeat(20) + '</a>')],
  ['XML under xmlLimit', typed('application/xml', '<a/>')]
]

const ALL_TYPES = ['json', 'form', 'text', 'xml']
const detectJSON = (ctx: { get: (name: string) => string }): boolean => ctx.get('x-detect') === '1'

/** koa-bodyparser 4's options, and what bodykit/koa must do with each. */
const GROUPS_4: Group[] = [
  { name: 'no options', options: () => ({}), cases: COMMON_CASES },
  { name: 'strict: false', options: () => ({ strict: false }), cases: COMMON_CASES },
  { name: 'every type, detectJSON', options: () => ({ enableTypes: ALL_TYPES, detectJSON }), cases: COMMON_CASES },
  { name: 'text only', options: () => ({ enableTypes: ['text'], detectJSON }), cases: COMMON_CASES },
  { name: 'no type', options: () => ({ enableTypes: [] }), cases: [...JSON_BODIES, ...CONTENT_TYPES] },
  { name: 'small limits', options: () => ({ enableTypes: ALL_TYPES, jsonLimit: 100, formLimit: '1kb', textLimit: 10, xmlLimit: '31b' }), cases: LIMIT_CASES },
  { name: 'limits of 0 (co-body\'s defaults)', options: () => ({ enableTypes: ALL_TYPES, jsonLimit: 0, formLimit: '', textLimit: null }), cases: DEFAULT_LIMITS },
  {
    name: 'extendTypes as strings and lists',
    options: () => ({ enableTypes: ALL_TYPES, extendTypes: { json: 'application/ld+json', form: ['application/x-form'], text: ['text/html', 'text/csv'], xml: 'application/rss+xml' } }),
    cases: EXTENDED
  },
  { name: 'encoding: latin1', options: () => ({ encoding: 'latin1', enableTypes: ALL_TYPES }), cases: [...JSON_BODIES, ...FORMS, ...CONTENT_TYPES] },
  { name: 'queryString', options: () => ({ queryString: { allowDots: false, depth: 1, parameterLimit: 3, arrayLimit: 2 } }), cases: FORMS },
  { name: 'onProtoPoisoning: remove', options: () => ({ onProtoPoisoning: 'remove' }), cases: POISONING },
  { name: 'onProtoPoisoning: ignore', options: () => ({ onProtoPoisoning: 'ignore' }), cases: POISONING },
  {
    name: 'onerror that answers itself',
    options: () => ({ onerror: (err: { status?: number }, ctx: { status: number, body: unknown }) => { ctx.status = 422; ctx.body = { handled: err.status } } }),
    cases: REFUSALS
  },
  {
    name: 'onerror that throws with ctx.throw',
    options: () => ({ onerror: (_err: unknown, ctx: { throw: (status: number, message: string) => never }) => ctx.throw(422, 'body parse error') }),
    cases: REFUSALS
  }
]

/** @koa/bodyparser 6's options (bodykit/koa gets `parsedMethods: ['POST', 'PUT', 'PATCH']` when none of 6's own is given). */
const GROUPS_6: Group[] = [
  { name: 'no options', options: () => ({}), cases: COMMON_CASES },
  { name: 'jsonStrict: false', options: () => ({ jsonStrict: false }), cases: COMMON_CASES },
  { name: 'every type, detectJSON', options: () => ({ enableTypes: ALL_TYPES, detectJSON }), cases: COMMON_CASES },
  { name: 'text only, detectJSON', options: () => ({ enableTypes: ['text'], detectJSON }), cases: COMMON_CASES },
  { name: 'small limits', options: () => ({ enableTypes: ALL_TYPES, jsonLimit: 100, formLimit: '1kb', textLimit: 10, xmlLimit: '31b' }), cases: LIMIT_CASES },
  {
    name: 'extendTypes (written over the first defaults)',
    options: () => ({ enableTypes: ALL_TYPES, extendTypes: { json: ['application/ld+json'], form: ['application/x-form'], xml: ['application/rss+xml', 'text/html', 'text/csv'] } }),
    cases: EXTENDED
  },
  {
    name: 'a type both JSON and XML takes xmlLimit',
    options: () => ({ enableTypes: ['json', 'form', 'xml'], xmlLimit: 20, extendTypes: { json: ['application/xml'], form: ['text/xml'] } }),
    cases: [['small', typed('application/xml', '{"a":1}')], ['large', typed('application/xml', '{"a":"' + 'x'.repeat(20) + '"}')], ['small form', typed('text/xml', 'a=1')], ['large form', typed('text/xml', 'a=' + 'x'.repeat(20))]]
  },
  { name: 'encoding: latin1', options: () => ({ encoding: 'latin1', enableTypes: ALL_TYPES }), cases: [...JSON_BODIES, ...FORMS, ...CONTENT_TYPES] },
  { name: 'parsedMethods: GET, DELETE, POST', options: () => ({ parsedMethods: ['GET', 'DELETE', 'POST'] }), cases: [...METHODS, ...JSON_BODIES] },
  { name: 'parsedMethods in lower case', options: () => ({ parsedMethods: ['post'] }), cases: [...METHODS, ...JSON_BODIES.slice(0, 3)] },
  { name: 'patchNode', options: () => ({ patchNode: true }), cases: COMMON_CASES },
  { name: 'enableRawChecking', options: () => ({ enableRawChecking: true }), cases: [...HOOKS, ...JSON_BODIES] },
  { name: 'patchNode and enableRawChecking', options: () => ({ patchNode: true, enableRawChecking: true }), cases: [...HOOKS, ...JSON_BODIES] },
  {
    name: 'onError that answers itself',
    options: () => ({ onError: (err: { status?: number }, ctx: { status: number, body: unknown }) => { ctx.status = 422; ctx.body = { handled: err.status } } }),
    cases: REFUSALS
  }
]

let nextId = 0

/** Sends one request to both apps and compares the answers and, for a refusal, the error each threw. */
async function compare (library: KoaApp, bodykit: KoaApp, request: KoaRequest, label: string): Promise<void> {
  const id = String(++nextId)
  const [expected, actual] = await Promise.all([send(library.port, id, request), send(bodykit.port, id, request)])
  const [expectedOutcome, actualOutcome] = await Promise.all([library.outcome(id), bodykit.outcome(id)])
  assert.deepEqual({ ...actual, error: comparable(actualOutcome) }, { ...expected, error: comparable(expectedOutcome) }, label)
}

/**
 * What users' tests and Koa's answer look at in an error: its message, status and whether it is exposed (co-body's
 * own errors have no `expose`, bodykit's say false, as http-errors' do; bodykit also adds a `type`).
 */
function comparable (outcome: Outcome): unknown {
  if (outcome.error === undefined) return undefined
  const { message, status, expose } = outcome.error
  return { message, status, exposed: Boolean(expose) }
}

async function runGroups (t: TestContext, groups: Group[], library: MiddlewareFactory, toBodykit: (options: Record<string, unknown>) => Record<string, unknown>, bodykit = bodyParser): Promise<number> {
  let sent = 0
  for (const { name: major, Koa } of KOA_MAJORS) {
    for (const group of groups) {
      const apps = await Promise.all([startKoaApp(t, Koa, library(group.options())), startKoaApp(t, Koa, bodykit(toBodykit(group.options())))])
      for (const [name, request] of group.cases) {
        await compare(apps[0], apps[1], request, `${major}, ${group.name}: ${name}`)
        sent++
      }
    }
  }
  return sent
}

describe('bodykit/koa against koa-bodyparser 4', () => {
  it('gives the same body, rawBody, status, answer and error for each request, on Koa 2 and 3', async (t) => {
    const sent = await runGroups(t, GROUPS_4, koaBodyparser4, (options) => options)
    console.log(`koa-bodyparser 4 differential: ${sent} requests under ${GROUPS_4.length} option sets, on Koa 2 and 3`)
    assert.ok(sent > 500, 'only ' + sent + ' requests')
  })
})

describe('bodykit/koa against @koa/bodyparser 6', () => {
  it('gives the same body, rawBody, status, answer and error for each request, on Koa 2 and 3', async (t) => {
    const sent = await runGroups(t, GROUPS_6, koaBodyparser6, asDialect6)
    console.log(`@koa/bodyparser 6 differential: ${sent} requests under ${GROUPS_6.length} option sets, on Koa 2 and 3`)
    assert.ok(sent > 500, 'only ' + sent + ' requests')
  })
})

const EXTEND_RUNS = Number(process.env.KOA_EXTEND_RUNS ?? 120)

/** Media types as apps write them, extension names, type-is's aliases, and values that are no media type at all. */
const drawnType = fc.oneof(
  fc.constantFrom('application/x-custom', 'application/vnd.custom+json', 'text/*', '+json', 'json', 'urlencoded', 'text/html', 'application/xml', 'xml', 'txt', '', 'no-slash'),
  fc.constantFrom(0, 1, false, true, null, undefined, NaN),
  fc.constant({}), fc.constant(['application/x-custom']), fc.constant({ type: 'application/x-custom' })
)
const KINDS = ['json', 'form', 'text', 'xml']
const drawnKey = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KINDS) }, fc.constantFrom('yaml', 'JSON', 'multipart', '0', ''))
const drawnExtension = fc.oneof(
  { weight: 5, arbitrary: fc.array(drawnType, { maxLength: 8 }) },
  fc.sparseArray(drawnType, { maxLength: 8 }),
  drawnType,
  fc.constant(new Set(['application/x-custom']))
)
const drawnKinds = fc.record({
  enableTypes: fc.oneof(
    { weight: 4, arbitrary: fc.constant(undefined) },
    { weight: 4, arbitrary: fc.subarray(KINDS) },
    fc.array(fc.oneof(fc.constantFrom(...KINDS), fc.constantFrom('yaml', '', 1, null, undefined)), { maxLength: 4 }),
    fc.constantFrom(null, '', 'json', 0, true, {}),
    fc.constant(new Set(['json']))
  ),
  extendTypes: fc.oneof(
    { weight: 6, arbitrary: fc.dictionary(drawnKey, drawnExtension, { maxKeys: 3 }) },
    fc.constantFrom(undefined, null, '', 'json', 0, 7, true, [], ['application/x-custom'])
  )
}, { requiredKeys: [] })

/** A copy of drawn options for one library (lodash.merge and koa-bodyparser write into what they are given). */
function cloneOptions (options: Record<string, unknown>): Record<string, unknown> {
  const copy = (value: unknown): unknown => {
    if (value instanceof Set) return new Set(value)
    if (Array.isArray(value)) {
      const list: unknown[] = new Array(value.length)
      for (const index of Object.keys(value)) list[Number(index)] = copy(value[Number(index)])
      return list
    }
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, copy(inner)]))
    return value
  }
  return copy(options) as Record<string, unknown>
}

/** A middleware, or the error creating it threw: its class and, for 6's own error, its message. */
function creationOf (create: () => ReturnType<MiddlewareFactory>): { middleware?: ReturnType<MiddlewareFactory>, error?: { name: string, message?: string } } {
  try {
    return { middleware: create() }
  } catch (err) {
    const { name, message } = err as Error
    return { error: name === 'UnsupportedBodyTypeError' ? { name, message } : { name } }
  }
}

/** The Content-Types sent to both apps: the kinds' defaults, the strings the options name, and one no kind takes. */
function typesToSend (options: Record<string, unknown>): string[] {
  const types = new Set([JSON_TYPE, FORM_TYPE, 'text/plain', 'text/xml', 'application/reports+json', 'application/csp-report', 'application/x-unknown', 'text/html'])
  const extendTypes = options.extendTypes
  if (extendTypes !== null && typeof extendTypes === 'object') {
    for (const list of Object.values(extendTypes)) {
      if (Array.isArray(list)) for (const type of list) if (typeof type === 'string' && type.includes('/') && !type.includes('*')) types.add(type)
    }
  }
  return [...types]
}

function describeOptions (options: Record<string, unknown>): string {
  return JSON.stringify(options, (_key, value: unknown) => value === undefined ? '<undefined>' : value instanceof Set ? { set: [...value] } : Number.isNaN(value) ? '<NaN>' : value)
}

describe('the named export bodyParser against @koa/bodyparser 6\'s, both given no option only one library reads', () => {
  const named = bodykitKoa.bodyParser as unknown as MiddlewareFactory
  const neutral = GROUPS_6.filter((group) => !OPTIONS_OF_6.some((name) => name in group.options()))

  it('gives the same body, rawBody, status, answer and error for each request (6\'s methods: POST, PUT, PATCH), on Koa 2 and 3', async (t) => {
    assert.ok(neutral.length >= 5, 'only ' + neutral.length + ' option sets')
    const methods: Case[] = ['GET', 'DELETE', 'OPTIONS'].map((method) => [method + ' with a JSON body', { method, ...json('{"a":1}') }])
    const sent = await runGroups(t, [...neutral, { name: 'methods', options: () => ({}), cases: methods }], koaBodyparser6, (options) => options, named)
    assert.ok(sent > 200, 'only ' + sent + ' requests')
  })

  it(`creates from the enableTypes and extendTypes 6 takes, throws what 6 throws, and answers as 6 (${EXTEND_RUNS} drawn option sets)`, async (t) => {
    let created = 0
    let refused = 0
    await fc.assert(fc.asyncProperty(drawnKinds, async (options) => {
      const expected = creationOf(() => koaBodyparser6(cloneOptions(options)))
      const actual = creationOf(() => named(cloneOptions(options)))
      assert.deepEqual(actual.error, expected.error, 'creation')
      if (expected.middleware === undefined || actual.middleware === undefined) {
        refused++
        return
      }
      created++
      const apps = await Promise.all([startKoaApp(t, KOA_MAJORS[1].Koa, expected.middleware), startKoaApp(t, KOA_MAJORS[1].Koa, actual.middleware)])
      for (const type of typesToSend(options)) {
        await compare(apps[0], apps[1], typed(type, '{"a":1}'), 'Content-Type ' + type + ' with ' + describeOptions(options))
      }
    }), { numRuns: EXTEND_RUNS, examples: [[{ extendTypes: { json: ['', 0, false, null, undefined] } }], [{ extendTypes: { json: [0, 0, 0, 0, 0, 0, 0] } }]] })
    console.log(`extendTypes/enableTypes differential: ${created} option sets created by both, ${refused} refused by both`)
    assert.ok(created > EXTEND_RUNS / 4 && refused > EXTEND_RUNS / 10, created + ' created, ' + refused + ' refused')
  })
})

/** Sends a request's head and part of its body, then destroys the socket; the app waits for the close before the parser runs. */
async function sendThenClose (app: KoaApp, id: string): Promise<Outcome> {
  const head = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\nx-wait-close: 1\r\nx-id: ' + id + '\r\n\r\n{"a":'
  await rawRequest(app.port, head, { then: 'destroy' })
  return app.outcome(id)
}

/** Sends a request's head and part of its body, waits for the parser to start reading, then destroys the socket. */
async function abortMidBody (app: KoaApp, id: string): Promise<Outcome> {
  const head = 'POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\nx-id: ' + id + '\r\n\r\n{"a":'
  const socket = await new Promise<net.Socket>((resolve) => {
    const connection = net.connect(app.port, '127.0.0.1', () => resolve(connection))
  })
  socket.write(head)
  await new Promise((resolve) => setTimeout(resolve, 50))
  socket.destroy()
  return app.outcome(id)
}

describe('a request closed before or while the parser reads it', () => {
  for (const { name: major, Koa } of KOA_MAJORS) {
    it(`${major}: koa-bodyparser 4 and bodykit/koa answer 500 "stream is not readable"; @koa/bodyparser 6 and bodykit/koa 499 "Request already closed"; both 400 "request aborted" mid-body`, async (t) => {
      const named = bodykitKoa.bodyParser as unknown as MiddlewareFactory
      const dialects: Array<[MiddlewareFactory, Record<string, unknown>, number, MiddlewareFactory]> = [
        [koaBodyparser4, {}, 500, bodyParser],
        [koaBodyparser6, { parsedMethods: ['POST'] }, 499, bodyParser],
        // The named export, given no option: 6's answer.
        [koaBodyparser6, {}, 499, named]
      ]
      for (const [library, options, closedStatus, bodykit] of dialects) {
        const apps = await Promise.all([startKoaApp(t, Koa, library({ ...options })), startKoaApp(t, Koa, bodykit({ ...options }))])
        const closed = await Promise.all(apps.map((app) => sendThenClose(app, 'closed')))
        assert.deepEqual(comparableOutcome(closed[1]), comparableOutcome(closed[0]))
        assert.equal(closed[1].status, closedStatus)
        const aborted = await Promise.all(apps.map((app) => abortMidBody(app, 'aborted')))
        assert.deepEqual(comparableOutcome(aborted[1]), comparableOutcome(aborted[0]))
        assert.equal(aborted[1].error?.message, 'request aborted')
      }
    })
  }
})

/** An outcome as {@link comparable} compares its error. */
function comparableOutcome (outcome: Outcome): unknown {
  return { status: outcome.status, body: outcome.body, error: comparable(outcome) }
}

// ---- Generated requests --------------------------------------------------------------------------------------------

/** The option sets the generated requests are sent with: both dialects, strict or not, small limits or defaults. */
const PROFILES: Array<{ name: string, library: MiddlewareFactory, options: Record<string, unknown>, limits: Record<string, number> }> = [
  { name: '4, defaults', library: koaBodyparser4, options: {}, limits: { json: MIB, form: 56 * 1024, text: MIB, xml: MIB } },
  { name: '4, every type, small limits, not strict', library: koaBodyparser4, options: { enableTypes: ALL_TYPES, strict: false, jsonLimit: 200, formLimit: 150, textLimit: 100, xmlLimit: 120 }, limits: { json: 200, form: 150, text: 100, xml: 120 } },
  { name: '4, every type, tiny limits', library: koaBodyparser4, options: { enableTypes: ALL_TYPES, jsonLimit: 24, formLimit: 24, textLimit: 16, xmlLimit: 16 }, limits: { json: 24, form: 24, text: 16, xml: 16 } },
  { name: '6, defaults', library: koaBodyparser6, options: { parsedMethods: ['POST', 'PUT', 'PATCH'] }, limits: { json: MIB, form: 56 * 1024, text: MIB, xml: MIB } },
  { name: '6, every type, small limits, not strict', library: koaBodyparser6, options: { enableTypes: ALL_TYPES, jsonStrict: false, jsonLimit: 200, formLimit: 150, textLimit: 100, xmlLimit: 120, parsedMethods: ['POST', 'GET', 'DELETE'] }, limits: { json: 200, form: 150, text: 100, xml: 120 } }
]

const TYPES = [JSON_TYPE, JSON_TYPE + '; charset=utf-8', JSON_TYPE + ';', 'application/vnd.api+json', FORM_TYPE, FORM_TYPE + '; charset=iso-8859-1', 'text/plain', 'text/xml', 'application/xml', 'text/html', 'application/octet-stream']
const KIND_OF_TYPE = (type: string): string => /json/.test(type) ? 'json' : /form/.test(type) ? 'form' : /xml/.test(type) ? 'xml' : 'text'

const formText = fc.array(fc.tuple(fc.constantFrom('a', 'b', 'a.b', 'a[b]', 'a[]', 'c[0][d]', '__proto__', 'é', '%E9', 'x%20y'), fc.string({ maxLength: 12 })), { maxLength: 8 })
  .map((pairs) => pairs.map(([key, value]) => key + '=' + encodeURIComponent(value)).join('&'))
const bodyText = fc.oneof(
  fc.jsonValue().map((value) => JSON.stringify(value)),
  fc.jsonValue().map((value) => ' ' + JSON.stringify(value, null, 1)),
  formText,
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc.constant('')
)
/** Mostly text as clients write it; some bytes that are no UTF-8 at all. */
const bodyBytes = fc.oneof({ weight: 5, arbitrary: bodyText.map((text) => Buffer.from(text, 'utf8')) }, { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes)) })

const generated = fc.record({
  profile: fc.nat({ max: PROFILES.length - 1 }),
  bytes: bodyBytes,
  pad: fc.oneof(fc.constant(0), fc.nat({ max: 300 })),
  type: fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
  encoding: fc.constantFrom('identity', 'identity', 'gzip', 'deflate', 'br'),
  // Where a compressed body is cut short (damaged), sometimes.
  cut: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat() }),
  chunked: fc.boolean(),
  method: fc.constantFrom('POST', 'POST', 'PUT', 'GET', 'DELETE')
})

/** Whether the library read a compressed body within its limit: it answered with a rawBody, or could not parse (400) or inflate (500) it. */
function wasRead (answer: { status: number, text: string }): boolean {
  if (answer.status === 200) return typeof (JSON.parse(answer.text) as { rawBody?: unknown }).rawBody === 'string'
  return answer.status === 400 || answer.status === 500
}

/** A drawn body as it goes on the wire: compressed, and maybe cut short. */
function wireOf (inflated: Buffer, encoding: string, cut: number | undefined): Buffer {
  if (encoding === 'identity') return inflated
  const compressed = encoding === 'gzip' ? zlib.gzipSync(inflated) : encoding === 'deflate' ? zlib.deflateSync(inflated) : zlib.brotliCompressSync(inflated)
  return cut === undefined ? compressed : compressed.subarray(0, cut % compressed.length)
}

describe('generated requests', () => {
  it(`get the libraries' answers from bodykit/koa (${RUNS} requests)`, async (t) => {
    const koa3 = KOA_MAJORS[1].Koa
    const apps = await Promise.all(PROFILES.map(async (profile) => Promise.all([
      startKoaApp(t, koa3, profile.library({ ...profile.options })),
      startKoaApp(t, koa3, bodyParser({ ...profile.options }))
    ])))
    let wireOverLimit = 0
    let damaged = 0
    const statuses = new Map<number, number>()
    await fc.assert(fc.asyncProperty(generated, async (drawn) => {
      const inflated = drawn.pad === 0 || drawn.bytes.length === 0 ? drawn.bytes : Buffer.concat([drawn.bytes, Buffer.alloc(drawn.pad, ' ')])
      // Only bodies within every limit are cut short: co-body lets zlib's error on a cut body it refused for its size
      // go uncaught, which ends this process (pinned in test/koa/koa.test.ts, in a child process).
      const canCut = inflated.length <= Math.min(...Object.values(PROFILES[drawn.profile].limits))
      const wire = wireOf(inflated, drawn.encoding, canCut ? drawn.cut : undefined)
      const headers: Record<string, string> = {}
      if (drawn.type !== undefined) headers['content-type'] = drawn.type
      if (drawn.encoding !== 'identity') headers['content-encoding'] = drawn.encoding
      const request: KoaRequest = { method: drawn.method, headers, body: drawn.chunked ? [wire] : wire }
      const [library, bodykit] = apps[drawn.profile]
      const id = String(++nextId)
      const [expected, actual] = await Promise.all([send(library.port, id, request), send(bodykit.port, id, request)])
      const [expectedError, actualError] = await Promise.all([library.outcome(id), bodykit.outcome(id)]).then((outcomes) => outcomes.map(comparable))
      statuses.set(expected.status, (statuses.get(expected.status) ?? 0) + 1)
      const limit = drawn.type === undefined ? Infinity : PROFILES[drawn.profile].limits[KIND_OF_TYPE(drawn.type)]
      if (drawn.encoding !== 'identity' && wire.length > limit && inflated.length <= limit && wasRead(expected)) {
        // A difference (docs/koa.md): a compressed body is also held to the limit on the wire; co-body counts only the
        // inflated bytes, so a small body that compression made larger than the limit is read there.
        wireOverLimit++
        assert.deepEqual(actual, { status: 413, text: 'request entity too large' })
        return
      }
      if (expected.status === 500) {
        // A difference (docs/koa.md): zlib's error on a damaged body is the client's 400, where co-body's is a 500.
        damaged++
        assert.deepEqual([actual, actualError], [{ status: 400, text: 'Bad Request' }, { ...expectedError as object, status: 400 }], JSON.stringify(drawn))
        return
      }
      assert.deepEqual([actual, actualError], [expected, expectedError], JSON.stringify(drawn))
    }), { numRuns: RUNS })
    const answered = [...statuses.entries()].sort().map(([status, count]) => status + ': ' + count).join(', ')
    console.log(`koa differential: ${RUNS} generated requests; library statuses ${answered}; ${damaged} damaged compressed bodies (400 for the library's 500), ${wireOverLimit} compressed bodies over the limit on the wire only`)
    // The drawn requests reach both reading and refusing.
    assert.ok((statuses.get(200) ?? 0) > RUNS / 4 && (statuses.get(400) ?? 0) > 0 && (statuses.get(413) ?? 0) > 0, answered)
  })
})
