// Reads the media type and charset of a Content-Type header, in each variant's grammar, cached per header.
import { parse as parseContentType } from 'content-type'

/** What the pipeline needs from a Content-Type header: both fields are pure functions of the header text. */
export interface ContentTypeInfo {
  /** Lower-cased `type/subtype` used for matching, or null when the header is not a valid media type. */
  readonly mediaType: string | null
  /** The media type's two halves, split once here rather than per request (empty when there is none). */
  readonly type: string
  readonly subtype: string
  /** Lower-cased charset parameter, or undefined when absent, empty or unreadable. */
  readonly charset: string | undefined
}

/** Reads a header into a {@link ContentTypeInfo}; each variant has its own grammar. */
export type ContentTypeReader = (header: string | undefined) => ContentTypeInfo

const NO_CONTENT_TYPE: ContentTypeInfo = { mediaType: null, type: '', subtype: '', charset: undefined }

function toInfo (mediaType: string | null, charset: string | undefined): ContentTypeInfo {
  const slash = mediaType === null ? -1 : mediaType.indexOf('/')
  return slash === -1
    ? { mediaType: null, type: '', subtype: '', charset }
    : { mediaType, type: (mediaType as string).slice(0, slash), subtype: (mediaType as string).slice(slash + 1), charset }
}

// RFC 6838 restricted names, as media-typer validates them before type-is matches.
const MEDIA_TYPE = /^ *([a-z0-9][a-z0-9!#$&^_-]{0,126})\/([a-z0-9][a-z0-9!#$&^_.+-]{0,126}) *$/

/**
 * body-parser 2.x's grammar: content-type 2 reads the header leniently (never throws, first duplicate
 * parameter wins), and the part before `;` must be a valid media type.
 */
function readLenient (header: string): ContentTypeInfo {
  const { type, parameters } = parseContentType(header)
  const charset = parameters.charset
  return toInfo(MEDIA_TYPE.test(type) ? type : null, charset ? charset.toLowerCase() : undefined)
}

// compat(v1): media-typer 0.3 and content-type 1.0 read the header strictly; a malformed parameter list
// means "no media type" for matching and "no charset" for decoding. Their grammars differ slightly.
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+"
const STRICT_PARAMETER = new RegExp('; *(' + TOKEN + ') *= *("(?:[ !\\u0023-\\u005b\\u005d-\\u007e\\u0080-\\u00ff]|\\\\[\\u0020-\\u007e])*"|' + TOKEN + ') *', 'y')
const CHARSET_PARAMETER = new RegExp('; *(' + TOKEN + ') *= *("(?:[\\u000b\\u0020\\u0021\\u0023-\\u005b\\u005d-\\u007e\\u0080-\\u00ff]|\\\\[\\u000b\\u0020-\\u00ff])*"|' + TOKEN + ') *', 'y')
const QUOTED_PAIR = /\\([\u000b\u0020-\u00ff])/g // eslint-disable-line no-control-regex
const TOKEN_TYPE = new RegExp('^' + TOKEN + '/' + TOKEN + '$')
const TYPE_NAME = /^[a-z0-9][a-z0-9!#$&^_-]{0,126}$/
const SUBTYPE_NAME = /^[a-z0-9][a-z0-9!#$&^_.-]{0,126}$/

/** Walks `; name=value` pairs from `start`; returns them (last duplicate wins) or null when malformed. */
function readStrictParameters (header: string, start: number, grammar: RegExp): Map<string, string> | null {
  const parameters = new Map<string, string>()
  let index = start
  while (index < header.length) {
    grammar.lastIndex = index
    const match = grammar.exec(header)
    if (match === null) return null
    index += match[0].length
    const value = match[2]
    parameters.set(match[1].toLowerCase(), value.charCodeAt(0) === 0x22 ? value.slice(1, -1).replace(QUOTED_PAIR, '$1') : value)
  }
  return parameters
}

/** media-typer 0.3: `type/subtype[+suffix]`, each part a restricted name, then strict parameters. */
function readStrictMediaType (header: string): string | null {
  const semicolon = header.indexOf(';')
  const match = MEDIA_TYPE.exec((semicolon === -1 ? header : header.slice(0, semicolon)).toLowerCase())
  if (match === null) return null
  if (semicolon !== -1 && readStrictParameters(header, semicolon, STRICT_PARAMETER) === null) return null
  const [, type, fullSubtype] = match
  const plus = fullSubtype.lastIndexOf('+')
  const subtype = plus === -1 ? fullSubtype : fullSubtype.slice(0, plus)
  const suffix = plus === -1 ? '' : fullSubtype.slice(plus + 1)
  if (!SUBTYPE_NAME.test(subtype) || (suffix !== '' && !TYPE_NAME.test(suffix))) return null
  return type + '/' + subtype + (suffix === '' ? '' : '+' + suffix)
}

/** content-type 1.0: the trimmed type must be two tokens; any malformed parameter drops the charset. */
function readStrictCharset (header: string): string | undefined {
  const semicolon = header.indexOf(';')
  if (!TOKEN_TYPE.test((semicolon === -1 ? header : header.slice(0, semicolon)).trim())) return undefined
  if (semicolon === -1) return undefined
  const charset = readStrictParameters(header, semicolon, CHARSET_PARAMETER)?.get('charset')
  return charset ? charset.toLowerCase() : undefined
}

function readStrict (header: string): ContentTypeInfo {
  return toInfo(readStrictMediaType(header), readStrictCharset(header))
}

// Apps see a handful of distinct Content-Type headers, so parsing once per header text pays off. Long or
// numerous hostile headers cannot grow the cache past its bounds.
const CACHE_SIZE = 256
const CACHEABLE_LENGTH = 256

function cached (read: (header: string) => ContentTypeInfo): ContentTypeReader {
  const cache = new Map<string, ContentTypeInfo>()
  return function readContentType (header) {
    if (!header) return NO_CONTENT_TYPE
    let info = cache.get(header)
    if (info === undefined) {
      info = read(header)
      if (header.length <= CACHEABLE_LENGTH) {
        if (cache.size >= CACHE_SIZE) cache.clear()
        cache.set(header, info)
      }
    }
    return info
  }
}

/** Content-Type reading of body-parser 2.x (type-is 2, content-type 2). */
export const readContentTypeLeniently: ContentTypeReader = cached(readLenient)

/** Content-Type reading of body-parser 1.x (type-is 1.6, media-typer 0.3, content-type 1.0). */
export const readContentTypeStrictly: ContentTypeReader = cached(readStrict)
