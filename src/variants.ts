// The two behaviours bodykit offers, as data: the default entry (body-parser 2.x) and bodykit/legacy (1.x).
import type { IncomingMessage } from 'http'
import type { Transform } from 'stream'
import zlib from 'zlib'
import iconv from 'iconv-lite'
import { decodeBody, decodeBodyAsIconv04 } from './decode'
import { readContentTypeLeniently, readContentTypeStrictly, type ContentTypeReader } from './content-type'
import { loadOnFinished } from './dependencies'
import { atOnce, type InflaterAtOnce } from './inflate'

/** A request as the pipeline sees it: body-parser's `req.body` and 1.x's `req._body` flag, and bodykit's `rawBody`. */
export interface BodyRequest extends IncomingMessage {
  body?: unknown
  _body?: boolean
  rawBody?: Buffer
}

/** What a parser's definition reads of a variant (the Web build has only this part of one). */
export type ParserRules = Pick<Variant, 'urlencoded'>

/** The parser kinds. */
export type ParserName = 'json' | 'raw' | 'text' | 'urlencoded' | 'multipart'

/** Everything that differs between the two behaviours. */
export interface Variant {
  /** Whether a request's body counts as already read, so the middleware passes it through untouched. */
  readonly isAlreadyRead: (req: BodyRequest) => boolean
  /** Sets the value `req.body` has when nothing gets parsed. */
  readonly prepareBody: (req: BodyRequest) => void
  /** Records that this request's body is being read (1.x's `req._body`). */
  readonly markRead: (req: BodyRequest) => void
  /** The body a request has when nothing gets parsed, as `schema` checks it: `req.body` for the middlewares. */
  readonly currentBody: (req: BodyRequest) => unknown
  /** Hands the parsed body on and calls `next`: the middlewares set `req.body`. */
  readonly deliverBody: (req: BodyRequest, next: (err?: unknown) => void, body: unknown) => void
  /** Keeps the bytes of a body read whole when `rawBody` is on, before they are decoded: the middlewares set `req.rawBody`. */
  readonly keepRawBody: (req: BodyRequest, body: Buffer) => void
  /** Hands a multipart form on and calls `next`: the middlewares set `req.body` to the fields and `req.files`. */
  readonly deliverForm: (req: BodyRequest, next: (err?: unknown) => void, fields: unknown, files: readonly unknown[] | null) => void
  /** How the Content-Type header is read for matching and for its charset. */
  readonly readContentType: ContentTypeReader
  /** Content-Encodings that can be inflated, and how. */
  readonly decompressors: ReadonlyMap<string, () => Transform>
  /** Content-Encodings whose small bodies are read first, then inflated in one zlib call (zstd where Node has it). */
  readonly inflatersAtOnce: ReadonlyMap<string, InflaterAtOnce>
  /** Whether a charset can be decoded (iconv-lite's knowledge, as of the body-parser release mimicked). */
  readonly knowsCharset: (charset: string) => boolean
  /** Decodes a body in a charset it knows, as that iconv-lite does (a BOM is stripped). */
  readonly decode: (body: Buffer, charset: string) => string
  /** The default of `readHttp2WithoutLength`: whether an HTTP/2 body sent without Content-Length is read. */
  readonly readsHttp2WithoutLength: boolean
  /** With `verify`, whether an unknown charset is reported before an unsupported Content-Encoding. */
  readonly charsetErrorFirst: boolean
  /** Parsers whose `defaultCharset` option is honoured; the others default to utf-8. */
  readonly defaultCharsetParsers: ReadonlySet<ParserName>
  readonly urlencoded: {
    /** Charsets the urlencoded parser accepts. */
    readonly charsets: readonly string[]
    /** Reads the `extended` option. */
    readonly isExtended: (extended: unknown) => boolean
    /** Whether leaving `extended` undefined emits a deprecation warning. */
    readonly warnWhenExtendedUndefined: boolean
    /** Whether the simple (non-extended) mode has Node's `querystring` semantics instead of qs with depth 0. */
    readonly simpleIsQuerystring: boolean
    /** Whether `charsetSentinel` and `interpretNumericEntities` are read. */
    readonly charsetOptions: boolean
  }
}

const inflaters: ReadonlyArray<[string, () => Transform]> = [
  ['deflate', () => zlib.createInflate()],
  ['gzip', () => zlib.createGunzip()]
]

// zstd exists from Node 22.15; elsewhere it is an unsupported encoding (415), as in body-parser.
const createZstdDecompress = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress

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

function isKnownToIconv04 (charset: string): boolean {
  const codec = charset.toLowerCase().replace(/:\d{4}$|[^0-9a-z]/g, '')
  return !CODECS_UNKNOWN_TO_ICONV_0_4.has(codec) && iconv.encodingExists(charset)
}

/** The middlewares' delivery: `req.body` is the parsed body, then `next()`. */
function setBody (req: BodyRequest, next: (err?: unknown) => void, body: unknown): void {
  req.body = body
  next()
}

/** The middlewares' place for the bytes of a body (`rawBody: true`). */
function setRawBody (req: BodyRequest, body: Buffer): void {
  req.rawBody = body
}

/** The middlewares' delivery of a multipart form: fields on `req.body`, files (when accepted) on `req.files`. */
function setForm (req: BodyRequest, next: (err?: unknown) => void, fields: unknown, files: readonly unknown[] | null): void {
  req.body = fields
  // Only where files were asked for: `req.files` stays another library's otherwise.
  if (files !== null) (req as { files?: unknown }).files = files
  next()
}

/** body-parser 2.x behaviour: `require('bodykit')`. */
export const modern: Variant = {
  // compat(v2): a finished request is skipped silently and `req.body` is left as it was.
  isAlreadyRead: (req) => loadOnFinished().isFinished(req),
  prepareBody: (req) => { if (!('body' in req)) req.body = undefined },
  markRead: () => {},
  currentBody: (req) => req.body,
  deliverBody: setBody,
  keepRawBody: setRawBody,
  deliverForm: setForm,
  readContentType: readContentTypeLeniently,
  decompressors: new Map([
    ...inflaters,
    ['br', () => zlib.createBrotliDecompress()],
    ...(createZstdDecompress ? [['zstd', () => createZstdDecompress()] as [string, () => Transform]] : [])
  ]),
  inflatersAtOnce: new Map([
    ['deflate', atOnce.deflate], ['gzip', atOnce.gzip], ['br', atOnce.br],
    ...(atOnce.zstd ? [['zstd', atOnce.zstd] as [string, InflaterAtOnce]] : [])
  ]),
  knowsCharset: cachedCharsetCheck((charset) => iconv.encodingExists(charset)),
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

/**
 * multer 2.x's behaviour, for `bodykit/multer`: the default entry's reading, but `req.body` is left alone when
 * nothing is read (multer sets it only for a multipart body) and the upload fills `req.body` and the files itself.
 */
export const multer: Variant = {
  ...modern,
  // compat(multer): multer reads whatever stream it is given. A stream another reader consumed (its readable side
  // ended) or destroyed is passed on, since nothing will come; a stream whose writable side ended but whose data is
  // unread (a test's PassThrough, written before the call) is read, which on-finished would count as finished.
  isAlreadyRead: (req) => req.readableEnded === true || req.destroyed === true,
  prepareBody: () => {},
  deliverForm: (_req, next) => { next() },
  // compat(multer): type-is 1.x matches the type, as for body-parser 1.x: a Content-Type it cannot parse is no multipart.
  readContentType: readContentTypeStrictly,
  // multer reads every body busboy can; HTTP/2 bodies without a length included.
  readsHttp2WithoutLength: true
}
