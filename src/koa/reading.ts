// How the Koa libraries (co-body) read and parse a body, as the pipeline's data: a variant and three parser definitions.
import type { IncomingMessage } from 'http'
import type { Transform } from 'stream'
import zlib from 'zlib'
import type qs from 'qs'
import type { ContentTypeInfo } from '../content-type'
import { readContentTypeLeniently } from '../content-type'
import { loadQs } from '../packages/qs'
import { atOnce, type InflaterAtOnce } from '../inflate'
import type { PoisoningAction } from '../options'
import type { ParserDefinition } from '../parsers/definition'
import { createPoisoningGuard, opensObjectOrArray } from '../parsers/json'
import { legacy, modern, type Variant } from '../variants'

/** What a Koa parser resolves with: the body, and the text it was parsed from (`ctx.request.rawBody`). */
export interface KoaBody {
  readonly parsed: unknown
  readonly raw: string
}

/** The kinds of reading: XML is read as text. */
export type ReadKind = 'json' | 'form' | 'text'

/** The bytes of each body read with `rawBuffer`, until the middleware takes them. */
const rawBytes = new WeakMap<IncomingMessage, Buffer>()

/** Takes the bytes kept for a request (`rawBuffer`): those read, or none. */
export function takeRawBytes (req: IncomingMessage): Buffer | undefined {
  const bytes = rawBytes.get(req)
  if (bytes !== undefined) rawBytes.delete(req)
  return bytes
}

// compat(koa): inflation (co-body's) inflates gzip and deflate with zlib's Unzip, which reads either format
// whichever the header names, and br; anything else is 415.
const unzipAtOnce: InflaterAtOnce = { ...atOnce.gzip, sync: zlib.unzipSync, async: zlib.unzip }
const createUnzip = (): Transform => zlib.createUnzip()
const createBrotliDecompress = (): Transform => zlib.createBrotliDecompress()
const zstdStream = modern.decompressors.get('zstd')

/** Whether this Node can inflate zstd (22.15 and later), for the `inflateZstd` option. */
export const canInflateZstd = zstdStream !== undefined && atOnce.zstd !== undefined

/** A Content-Type as the libraries read it for decoding: without a charset, so every body gets `encoding`. */
const NO_CHARSET: ContentTypeInfo = { mediaType: null, type: '', subtype: '', charset: undefined }

/**
 * The pipeline as co-body reads a body: every request it is given is read (a stream something else consumed gets
 * raw-body's 500), the result goes to the caller, and decoding is iconv-lite 0.4's (raw-body 2's). `zstd` adds
 * that encoding; `readsCharset` decodes with the Content-Type's charset instead of always with `encoding`.
 */
export function createKoaVariant (zstd: boolean, readsCharset: boolean): Variant {
  const decompressors = new Map<string, () => Transform>([['gzip', createUnzip], ['deflate', createUnzip], ['br', createBrotliDecompress]])
  const inflatersAtOnce = new Map<string, InflaterAtOnce>([['gzip', unzipAtOnce], ['deflate', unzipAtOnce], ['br', atOnce.br]])
  if (zstd && zstdStream !== undefined && atOnce.zstd !== undefined) {
    decompressors.set('zstd', zstdStream)
    inflatersAtOnce.set('zstd', atOnce.zstd)
  }
  return {
    ...modern,
    // compat(koa): co-body reads whatever it is given; the adapter decides which requests those are.
    isAlreadyRead: () => false,
    prepareBody: () => {},
    currentBody: () => undefined,
    deliverBody: (_req, next, body) => { (next as (err: null, body: unknown) => void)(null, body) },
    keepRawBody: (req, bytes) => { rawBytes.set(req, bytes) },
    readContentType: readsCharset ? readContentTypeLeniently : () => NO_CHARSET,
    decompressors,
    inflatersAtOnce,
    knowsCharset: legacy.knowsCharset,
    decode: legacy.decode,
    // Every kind takes `encoding` (given as defaultCharset) when no charset is read.
    defaultCharsetParsers: new Set(['json', 'urlencoded', 'text'])
  }
}

/** What co-body's JSON parser is told. */
export interface JsonRules {
  readonly strict: boolean
  readonly onProtoPoisoning: PoisoningAction
  readonly onConstructorPoisoning: PoisoningAction
}

/**
 * co-body's JSON: strict, only an object or an array, with its own message for anything else; an empty body is `{}`
 * (strict) or `''`; a `__proto__` key refused by default (its @hapi/bourne check, which bodykit's guard makes).
 */
export function createJsonParse (rules: JsonRules): (text: string) => unknown {
  const guard = createPoisoningGuard(rules.onProtoPoisoning, rules.onConstructorPoisoning)
  const { strict } = rules
  return function parseKoaJson (text) {
    if (text.length === 0) return strict ? {} : ''
    if (strict && !opensObjectOrArray(text)) throw new SyntaxError('invalid JSON, only supports object and array')
    const value = JSON.parse(text)
    if (guard !== null) guard(value, text)
    return value
  }
}

/**
 * co-body's forms: qs with `allowDots` unless `queryString` says otherwise. With `checkCharset`, an iso-8859-1 form's
 * escapes are read in its charset too (bodykit's urlencoded rule); co-body's qs reads them as utf-8 whatever `encoding` is.
 */
export function createFormParse (queryString: Record<string, unknown>, checkCharset: boolean): (text: string, charset: string | null) => unknown {
  // The caller's options as given: qs validates them (a bad one throws when the first form is read, as in co-body).
  const rules = { ...queryString, allowDots: queryString.allowDots ?? true } as qs.IParseOptions
  const latin1Rules: qs.IParseOptions = { ...rules, charset: 'iso-8859-1' }
  // qs loads now, when a middleware that reads forms is created.
  const { parse } = loadQs()
  return function parseKoaForm (text, charset) {
    return parse(text, checkCharset && charset === 'iso-8859-1' ? latin1Rules : rules)
  }
}

/** The charsets a kind takes when `checkCharset` reads them: bodykit's json, urlencoded and text rules. */
const CHARSET_RULES: Record<ReadKind, (charset: string) => boolean> = {
  // RFC 8259 §8.1: JSON text is Unicode.
  json: (charset) => charset.slice(0, 4) === 'utf-',
  form: (charset) => charset === 'utf-8' || charset === 'iso-8859-1',
  text: () => true
}

const PARSER_NAMES = { json: 'json', form: 'urlencoded', text: 'text' } as const

/**
 * One kind's parser as the pipeline takes it: the decoded text parsed by `parse`, kept as `raw`; every charset is
 * taken (it is `encoding`) unless `checkCharset` reads them.
 */
export function createKoaDefinition (kind: ReadKind, parse: (text: string, charset: string | null) => unknown, checkCharset: boolean): ParserDefinition {
  const acceptsCharset = checkCharset ? CHARSET_RULES[kind] : CHARSET_RULES.text
  return {
    name: PARSER_NAMES[kind],
    defaultType: '*/*',
    acceptsCharset: () => acceptsCharset,
    createParse: () => (text: string, charset: string | null): KoaBody => ({ parsed: parse(text, charset), raw: text })
  }
}
