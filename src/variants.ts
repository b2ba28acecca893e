// The two behaviours bodykit offers, as data: the default entry (body-parser 2.x) and bodykit/legacy (1.x).
import iconv from 'iconv-lite'
import { decodeBody, decodeBodyAsIconv04 } from './decode'
import * as errors from './errors'
import { readContentTypeLeniently, readContentTypeStrictly } from './content-type'
import onFinished from 'on-finished'
import { atOnce } from './inflate'
import { allDecompressors, allInflatersAtOnce, inflaters, setBody, setForm, setRawBody, type Variant } from './variant'

export type { BodyRequest, ParserName, ParserRules, Variant } from './variant'

// compat(v1): body-parser 1.x ships iconv-lite 0.4, which lacks these codecs (named as iconv-lite
// canonicalises labels: lower case, alphanumerics only, no `:suffix`).
const CODECS_UNKNOWN_TO_ICONV_0_4 = new Set(['utf32', 'utf32le', 'utf32be', 'ucs4', 'ucs4le', 'ucs4be', 'cp720', 'iso88598i', 'iso88598e'])

/** Caches a charset check; bounded, since charsets come from requests. */
function cachedCharsetCheck (knows: (charset: string) => boolean): (charset: string) => boolean {
  const answers = new Map<string, boolean>([['utf-8', true]])
  return function knowsCharset (charset) {
    let known = answers.get(charset)
    if (known === undefined) {
      known = knows(charset)
      if (answers.size > 256) answers.clear()
      answers.set(charset, known)
    }
    return known
  }
}

/**
 * Whether iconv-lite can decode the charset. Its code tables load on the first request that names one, the one load a
 * request's path can make (which charsets come is not known before): a load that fails (out of file descriptors)
 * throws 500 `charset.load.failed` instead of counting as a charset iconv-lite does not know (which encodingExists
 * says of any error), and is not remembered.
 */
function knownToIconv (charset: string): boolean {
  try {
    iconv.getCodec(charset)
    return true
  } catch (err) {
    if (err instanceof Error && err.message.startsWith('Encoding not recognized')) return false
    throw errors.charsetLoadFailed(charset, err)
  }
}

function isKnownToIconv04 (charset: string): boolean {
  const codec = charset.toLowerCase().replace(/:\d{4}$|[^0-9a-z]/g, '')
  return !CODECS_UNKNOWN_TO_ICONV_0_4.has(codec) && knownToIconv(charset)
}

/** body-parser 2.x behaviour: `require('bodykit')`. */
export const modern: Variant = {
  // compat(v2): a finished request is skipped silently and `req.body` is left as it was.
  isAlreadyRead: (req) => onFinished.isFinished(req),
  prepareBody: (req) => { if (!('body' in req)) req.body = undefined },
  markRead: () => {},
  currentBody: (req) => req.body,
  deliverBody: setBody,
  keepRawBody: setRawBody,
  deliverForm: setForm,
  readContentType: readContentTypeLeniently,
  decompressors: allDecompressors,
  inflatersAtOnce: allInflatersAtOnce,
  knowsCharset: cachedCharsetCheck(knownToIconv),
  decode: decodeBody,
  // Issue 17: read, limited and parsed as a chunked body would be.
  readsHttp2WithoutLength: true,
  charsetErrorFirst: true,
  defaultCharsetParsers: new Set(['json', 'text', 'urlencoded']),
  urlencoded: {
    charsets: ['utf-8', 'iso-8859-1'],
    isExtended: (extended) => Boolean(extended),
    warnWhenExtendedUndefined: false,
    simpleIsQuerystring: false,
    charsetOptions: true
  }
}

/** body-parser 1.x behaviour: `require('bodykit/legacy')`. */
export const legacy: Variant = {
  // compat(v1): only the `_body` flag marks a read body; a stream consumed elsewhere gives 500 later.
  isAlreadyRead: (req) => Boolean(req._body),
  prepareBody: (req) => { req.body = req.body || {} },
  markRead: (req) => { req._body = true },
  currentBody: (req) => req.body,
  deliverBody: setBody,
  keepRawBody: setRawBody,
  deliverForm: setForm,
  readContentType: readContentTypeStrictly,
  decompressors: new Map(inflaters),
  inflatersAtOnce: new Map([['deflate', atOnce.deflate], ['gzip', atOnce.gzip]]),
  knowsCharset: cachedCharsetCheck(isKnownToIconv04),
  decode: decodeBodyAsIconv04,
  // compat(v1): body-parser 1.x counts it as no body and leaves the stream to the app, which Express 4 apps rely on.
  readsHttp2WithoutLength: false,
  charsetErrorFirst: false,
  defaultCharsetParsers: new Set(['text']),
  urlencoded: {
    charsets: ['utf-8'],
    isExtended: (extended) => extended !== false,
    warnWhenExtendedUndefined: true,
    simpleIsQuerystring: true,
    charsetOptions: false
  }
}
