// What a variant is (the behaviour of one entry, as data), and the parts the variants share: how a read body is
// handed on, and the Content-Encodings Node inflates. No charset codec: an entry that decodes none loads none.
import type { IncomingMessage } from 'http'
import type { Transform } from 'stream'
import zlib from 'zlib'
import type { ContentTypeReader } from './content-type'
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
  /**
   * Whether a charset can be decoded (iconv-lite's knowledge, as of the body-parser release mimicked); throws 500
   * `charset.load.failed` when its code table cannot be loaded.
   */
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

/** gzip and deflate, which both variants inflate. */
export const inflaters: ReadonlyArray<[string, () => Transform]> = [
  ['deflate', () => zlib.createInflate()],
  ['gzip', () => zlib.createGunzip()]
]

// zstd exists from Node 22.15; elsewhere it is an unsupported encoding (415), as in body-parser.
const createZstdDecompress = (zlib as unknown as { createZstdDecompress?: () => Transform }).createZstdDecompress

/** The default entry's Content-Encodings: gzip, deflate, br, and zstd where Node has it. */
export const allDecompressors: ReadonlyMap<string, () => Transform> = new Map([
  ...inflaters,
  ['br', () => zlib.createBrotliDecompress()],
  ...(createZstdDecompress ? [['zstd', () => createZstdDecompress()] as [string, () => Transform]] : [])
])

/** The default entry's one-shot inflaters (zstd where Node has it). */
export const allInflatersAtOnce: ReadonlyMap<string, InflaterAtOnce> = new Map([
  ['deflate', atOnce.deflate], ['gzip', atOnce.gzip], ['br', atOnce.br],
  ...(atOnce.zstd ? [['zstd', atOnce.zstd] as [string, InflaterAtOnce]] : [])
])

/** The middlewares' delivery: `req.body` is the parsed body, then `next()`. */
export function setBody (req: BodyRequest, next: (err?: unknown) => void, body: unknown): void {
  req.body = body
  next()
}

/** The middlewares' place for the bytes of a body (`rawBody: true`). */
export function setRawBody (req: BodyRequest, body: Buffer): void {
  req.rawBody = body
}

/** The middlewares' delivery of a multipart form: fields on `req.body`, files (when accepted) on `req.files`. */
export function setForm (req: BodyRequest, next: (err?: unknown) => void, fields: unknown, files: readonly unknown[] | null): void {
  req.body = fields
  // Only where files were asked for: `req.files` stays another library's otherwise.
  if (files !== null) (req as { files?: unknown }).files = files
  next()
}
