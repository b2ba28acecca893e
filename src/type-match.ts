// Builds the predicate that decides whether a request's Content-Type is one a middleware parses.
import type { IncomingMessage } from 'http'
import type { ContentTypeInfo } from './content-type'
import type { TypeOption } from './options'

/** Decides per request whether the middleware parses it, given the request's Content-Type as read once. */
export type TypeMatcher = (req: IncomingMessage, contentType: ContentTypeInfo) => boolean

/**
 * The media type of an extension name (`'json'`, `'png'`), or false: the Node builds ask type-is's MIME database
 * (dependencies.ts), the Web build a small table of its own (web/type-names.ts), so that it carries no database.
 */
export type ExtensionLookup = (name: string) => string | false

/**
 * Resolves the configured types once (extension lookup, `+json` and `urlencoded` aliases, as type-is does)
 * so that a request only costs a few string comparisons.
 */
export function createTypeMatcher (type: TypeOption, lookupExtension: ExtensionLookup): TypeMatcher {
  if (typeof type === 'function') {
    return (req) => Boolean(type(req))
  }
  // type-is treats a lone non-array value as a one-element list, and an empty list as "any valid type".
  const list: readonly unknown[] = Array.isArray(type) ? type : [type]
  if (list.length === 0) {
    return (_req, contentType) => contentType.mediaType !== null
  }
  const patterns = list.map((option) => toPattern(option, lookupExtension)).filter((pattern) => pattern !== null)
  return function matchesType (_req, contentType) {
    if (contentType.mediaType === null) return false
    for (const pattern of patterns) {
      if (pattern.matches(contentType.type, contentType.subtype)) return true
    }
    return false
  }
}

interface Pattern {
  matches: (type: string, subtype: string) => boolean
}

/** One configured type as type-is would normalise and compare it; null when it can never match. */
function toPattern (option: unknown, lookupExtension: ExtensionLookup): Pattern | null {
  const normalized = typeof option === 'string' ? normalizeType(option, lookupExtension) : false
  if (normalized === false) return null
  const parts = normalized.split('/')
  if (parts.length !== 2) return null
  const [type, subtype] = parts
  const anyType = type === '*'
  if (subtype.startsWith('*+')) {
    // `*/*+json`: the actual subtype must end with `+json` (or be exactly `json` after a `+`-less prefix).
    const suffix = subtype.slice(1)
    return { matches: (t, s) => (anyType || t === type) && subtype.length <= s.length + 1 && s.endsWith(suffix) }
  }
  const anySubtype = subtype === '*'
  return { matches: (t, s) => (anyType || t === type) && (anySubtype || s === subtype) }
}

/**
 * type-is's `normalize` (1.x and 2.x alike): its aliases and the `+suffix` shorthand, a full type as it is, and an
 * extension name (no `/`) looked up by `lookupExtension` (in the Node builds type-is's MIME database, loaded only
 * then: about 10 ms and 150 KiB that `type: 'application/json'` never needs). test/type-match.test.ts draws options
 * and compares with type-is.
 */
export function normalizeType (option: string, lookupExtension: ExtensionLookup): string | false {
  if (option === 'urlencoded') return 'application/x-www-form-urlencoded'
  if (option === 'multipart') return 'multipart/*'
  if (option[0] === '+') return '*/*' + option
  return option.includes('/') ? option : lookupExtension(option)
}
