// The two entries under test and, as data, every difference the shared HTTP suites expect between them.
import zlib from 'node:zlib'
import type { Middleware } from './server'

/** A factory as the suites call it: options are loosely typed so invalid values can be passed. */
export type Factory = (options?: Record<string, unknown> | null) => Middleware

export interface Parsers {
  json: Factory
  raw: Factory
  text: Factory
  urlencoded: Factory
}

/** One entry and how it is expected to behave where the two differ. */
export interface Entry {
  name: 'default' | 'legacy'
  /** The module path as tests import it. */
  path: string
  parsers: Parsers
  /** `req.body` when nothing was parsed (no body, no type match, an error), as {@link encode} tags it. */
  unparsedBody: unknown
  /** Content-Encodings that are inflated. */
  encodings: readonly string[]
  /** Charsets urlencoded accepts (others: 415). */
  urlencodedCharsets: readonly string[]
  /** Whether urlencoded reads `defaultCharset`, `charsetSentinel` and `interpretNumericEntities`. */
  urlencodedCharsetOptions: boolean
  /** `extended` when the option is left out. */
  extendedDefault: boolean
  /** Simple mode: Node's querystring (null prototype, `__proto__` kept, bad escapes → U+FFFD) or qs depth 0. */
  simpleMode: 'querystring' | 'qs'
  /** Whether json honours `defaultCharset`. */
  jsonDefaultCharset: boolean
  /** A request whose stream something else consumed: skipped silently, or 500 stream.not.readable. */
  consumedStream: 'skip' | 'error'
  /** Whether `req._body = true` is set once a body is read, and a preset flag makes parsers skip. */
  bodyFlag: boolean
  /** Content-Types only the lenient (2.x) grammar matches. */
  lenientContentTypes: boolean
  /** Which of two `charset` parameters wins. */
  duplicateCharset: 'first' | 'last'
  /** With `verify`, whether an unknown charset is reported before an unsupported encoding. */
  charsetErrorFirst: boolean
}

// BODYKIT_TEST_REFERENCE=1 runs the suites against body-parser 2.4.0 / 1.20.6 to check the expectations
// themselves (bodykit-only behaviour, such as how deprecations are emitted, then fails on purpose).
const reference = process.env.BODYKIT_TEST_REFERENCE === '1'

/* eslint-disable @typescript-eslint/no-require-imports */
const defaultModule = (reference ? require('body-parser') : require('../../src/index')) as Parsers & ((...args: unknown[]) => unknown)
const legacyModule = (reference ? require('body-parser-1') : require('../../src/legacy')) as Parsers & ((...args: unknown[]) => unknown)
/* eslint-enable @typescript-eslint/no-require-imports */

export const hasZstd = 'createZstdDecompress' in zlib

export const defaultEntry: Entry = {
  name: 'default',
  path: '../../src/index',
  parsers: defaultModule,
  unparsedBody: { $undefined: true },
  encodings: hasZstd ? ['gzip', 'deflate', 'br', 'zstd'] : ['gzip', 'deflate', 'br'],
  urlencodedCharsets: ['utf-8', 'iso-8859-1'],
  urlencodedCharsetOptions: true,
  extendedDefault: false,
  simpleMode: 'qs',
  jsonDefaultCharset: true,
  consumedStream: 'skip',
  bodyFlag: false,
  lenientContentTypes: true,
  duplicateCharset: 'first',
  charsetErrorFirst: true
}

export const legacyEntry: Entry = {
  name: 'legacy',
  path: '../../src/legacy',
  parsers: legacyModule,
  unparsedBody: {},
  encodings: ['gzip', 'deflate'],
  urlencodedCharsets: ['utf-8'],
  urlencodedCharsetOptions: false,
  extendedDefault: true,
  simpleMode: 'querystring',
  jsonDefaultCharset: false,
  consumedStream: 'error',
  bodyFlag: true,
  lenientContentTypes: false,
  duplicateCharset: 'last',
  charsetErrorFirst: false
}

export const entries: readonly Entry[] = [defaultEntry, legacyEntry]

/** The callable modules themselves (the default entry's throws, legacy's is the generic parser). */
export const modules = { default: defaultModule, legacy: legacyModule }
