// Public option types and their normalisation: everything request-independent is validated here, once.
import type { IncomingMessage, ServerResponse } from 'node:http'
import bytes from 'bytes'
import type { TypeOption } from './type-match'
import { DEFAULT_DISCARD, type DiscardBudget } from './wire'

/** Called with the raw (inflated) body before it is decoded; throw to reject the request with 403. */
export type VerifyFunction = (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string | null) => void

/** Options every parser accepts. */
export interface BaseOptions {
  /**
   * Inflate gzip, deflate (and, in the default entry, br and zstd) bodies; when false such bodies get 415.
   * @default true
   */
  inflate?: boolean
  /**
   * Maximum body size: a number of bytes or a string for the `bytes` module (`'100kb'`, `'1mb'`).
   * @default '100kb'
   */
  limit?: number | string
  /**
   * Which requests to parse: a media type (`'application/json'`), an extension name (`'json'`), a wildcard
   * (`'*\/*'`, `'application/*'`, `'+json'`), a list of these, or a function of the request.
   */
  type?: TypeOption
  /** Called as `verify(req, res, buf, encoding)` before parsing; throwing rejects the body (403). */
  verify?: VerifyFunction
  /**
   * After answering with an error (a 413, a 415...), at most this much of the rest of the body is read and
   * thrown away, so that a client that reads the response only once its upload is done still gets it; past
   * it the connection is closed. A body declared larger is not read at all. Bytes, or a string for the
   * `bytes` module; `Infinity` reads everything, as body-parser does.
   * @default '64mb'
   */
  discardLimit?: number | string | undefined
  /**
   * How long (milliseconds, from the answer) the rest of a refused body may take to arrive within
   * `discardLimit`; a body that stalls for 5 s is given up on earlier. Raise it for slow uplinks.
   * @default 30000
   */
  discardTime?: number | undefined
}

/** Options of `json()`. */
export interface JsonOptions extends BaseOptions {
  /** Passed as the second argument of `JSON.parse`. */
  reviver?: (this: unknown, key: string, value: unknown) => unknown
  /**
   * Accept only objects and arrays at the top level.
   * @default true
   */
  strict?: boolean
  /**
   * Charset used when the Content-Type has none (default entry only; it must be a `utf-*` charset).
   * @default 'utf-8'
   */
  defaultCharset?: string
}

/** Options of `raw()`. */
export type RawOptions = BaseOptions

/** Options of `text()`. */
export interface TextOptions extends BaseOptions {
  /**
   * Charset used when the Content-Type has none.
   * @default 'utf-8'
   */
  defaultCharset?: string
}

/** Options of `urlencoded()` in the legacy entry (body-parser 1.x). */
export interface LegacyUrlencodedOptions extends BaseOptions {
  /**
   * true: qs's nested syntax (`a[b]=1`); false: flat pairs like Node's querystring.
   * @default true (deprecated: pass it explicitly)
   */
  extended?: boolean
  /**
   * Maximum number of parameters; more gives 413 `parameters.too.many`.
   * @default 1000
   */
  parameterLimit?: number
  /**
   * Maximum nesting depth in extended mode; deeper input gives 400 `querystring.parse.rangeError`.
   * @default 32
   */
  depth?: number
}

/** Options of `urlencoded()` in the default entry (body-parser 2.x). */
export interface UrlencodedOptions extends LegacyUrlencodedOptions {
  /**
   * true: qs's nested syntax (`a[b]=1`); false: flat pairs.
   * @default false
   */
  extended?: boolean
  /**
   * Charset used when the Content-Type has none: `'utf-8'` or `'iso-8859-1'`.
   * @default 'utf-8'
   */
  defaultCharset?: 'utf-8' | 'iso-8859-1' | (string & Record<never, never>)
  /**
   * Let a `utf8` form field (`utf8=✓`) choose between utf-8 and iso-8859-1; the field is then dropped.
   * @default false
   */
  charsetSentinel?: boolean
  /**
   * Decode `&#9786;`-style numeric entities in iso-8859-1 forms.
   * @default false
   */
  interpretNumericEntities?: boolean
}

/** The request-independent settings every parser shares, validated. */
export interface CommonSettings {
  readonly inflate: boolean
  readonly limit: number
  readonly type: TypeOption | undefined
  readonly verify: VerifyFunction | false
  readonly defaultCharset: string | undefined
  readonly discard: DiscardBudget
}

/** Loosely typed options as callers may really pass them (JavaScript callers, `null`). */
export type AnyOptions = Record<string, unknown> | null | undefined

const DEFAULT_LIMIT = 102400

/** Validates the options every parser shares; throws body-parser's TypeErrors for bad values. */
export function normalizeCommonOptions (options: AnyOptions): CommonSettings {
  const given = options ?? {}
  // Security (GHSA-v422-hmwv-36x6): a limit `bytes` cannot read must fail here, never mean "no limit".
  const limit = given.limit === undefined || given.limit === null
    ? DEFAULT_LIMIT
    : bytes.parse(given.limit as string | number)
  if (limit === null || Number.isNaN(limit)) {
    throw new TypeError('option limit "' + String(given.limit) + '" is invalid')
  }
  const verify = given.verify || false
  if (verify !== false && typeof verify !== 'function') {
    throw new TypeError('option verify must be function')
  }
  return {
    discard: normalizeDiscard(given),
    inflate: given.inflate !== false,
    limit,
    type: (given.type || undefined) as TypeOption | undefined,
    verify: verify as VerifyFunction | false,
    defaultCharset: (given.defaultCharset || undefined) as string | undefined
  }
}

/** The after-error read-off budget; a value that is not a size or a duration throws, never meaning "no bound". */
function normalizeDiscard (given: Record<string, unknown>): DiscardBudget {
  const { discardLimit, discardTime } = given
  const bytesLimit = discardLimit === undefined || discardLimit === null
    ? DEFAULT_DISCARD.bytes
    : bytes.parse(discardLimit as string | number)
  if (typeof bytesLimit !== 'number' || !(bytesLimit >= 0)) {
    throw new TypeError('option discardLimit "' + String(discardLimit) + '" is invalid')
  }
  const ms = discardTime === undefined || discardTime === null ? DEFAULT_DISCARD.ms : discardTime
  if (typeof ms !== 'number' || !(ms >= 0)) {
    throw new TypeError('option discardTime must be a zero or a positive number')
  }
  return { bytes: bytesLimit, ms }
}
