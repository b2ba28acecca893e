// koa-bodyparser 4 and @koa/bodyparser 6 as data: the options each reads, its defaults, and how it picks a request's kind of body.
import type { IncomingMessage } from 'http'
import { readContentTypeLeniently, readContentTypeStrictly, type ContentTypeReader } from '../content-type'
import { typeOfExtension } from '../packages/type-is'
import type { ReadSettings } from '../read'
import { createTypeMatcher, type TypeMatcher } from '../type-match'
import type { ReadKind } from './reading'
import type { DetectJson, KoaBodyType, KoaContext } from './types'
import { BODY_TYPES, UnsupportedBodyTypeError } from './unsupported-body-type-error'

/** A request's reading: the pipeline's settings for its kind and limit, or null when no enabled kind matched (`{}`). */
export type PickRead = (ctx: KoaContext) => ReadSettings | null

/** What a picker is built from, request-independent. */
export interface PickerParts {
  readonly enabled: ReadonlySet<KoaBodyType>
  readonly types: Readonly<Record<KoaBodyType, string[]>>
  readonly detectJson: DetectJson | null
  /** The pipeline's settings to read `kind` with `limitOf`'s limit (xml: `xmlLimit`). */
  readonly readFor: (kind: ReadKind, limitOf: KoaBodyType) => ReadSettings
}

/** What differs between the two libraries beyond what their options say. */
export interface Dialect {
  /** The library, as errors about options name it. */
  readonly name: string
  /** The options only this library reads. */
  readonly ownOptions: readonly string[]
  /** The kinds `enableTypes` enables; throws what the library throws for a value it would not take. */
  readonly enabledKinds: (enableTypes: unknown) => Set<KoaBodyType>
  /**
   * Each kind's media types, the defaults with `extendTypes` joined as the library joins them; throws what the library
   * throws for a value it would not take. @koa/bodyparser 6 keeps entries that are not strings: they match nothing,
   * in type-is as in createTypeMatcher.
   */
  readonly mediaTypes: (extendTypes: unknown) => Record<KoaBodyType, string[]>
  /** The methods whose bodies are read when `parsedMethods` is not given; null: every method. */
  readonly parsedMethods: readonly string[] | null
  /** Whether a request whose stream is already closed is answered 499 `Request already closed` without reading. */
  readonly answersClosedRequest: boolean
  /** Builds the per-request choice of kind and limit. */
  readonly createPicker: (parts: PickerParts) => PickRead
}

/** The JSON media types each library reads by default. */
const JSON_TYPES_4 = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/scim+json']
const JSON_TYPES_6 = ['application/json', 'application/json-patch+json', 'application/vnd.api+json', 'application/csp-report', 'application/reports+json', 'application/scim+json']
const FORM_TYPES = ['application/x-www-form-urlencoded']
const TEXT_TYPES = ['text/plain']
const XML_TYPES = ['text/xml', 'application/xml']

/** The default media types of the kinds other than JSON, the same in both libraries. */
export const DEFAULT_TYPES: Readonly<Record<Exclude<KoaBodyType, 'json'>, readonly string[]>> = { form: FORM_TYPES, text: TEXT_TYPES, xml: XML_TYPES }

function isBodyType (kind: unknown): kind is KoaBodyType {
  return (BODY_TYPES as readonly unknown[]).includes(kind)
}

/** Each kind's default media types, `jsonTypes` for JSON, in lists of their own. */
function defaultTypes (jsonTypes: readonly string[]): Record<KoaBodyType, string[]> {
  return { json: [...jsonTypes], form: [...DEFAULT_TYPES.form], text: [...DEFAULT_TYPES.text], xml: [...DEFAULT_TYPES.xml] }
}

/** The media types of `extendTypes[kind]`: a list of strings, else a TypeError now (koa-bodyparser 4 lets type-is skip them). */
function mediaTypesOf (list: readonly unknown[], kind: string): string[] {
  if (!list.every((type) => typeof type === 'string')) throw new TypeError('option extendTypes.' + kind + ' must be a media type or a list of them')
  return list as string[]
}

/** The Content-Type as both libraries match it for JSON: a trailing `;` is dropped first (type-is would refuse it). */
function contentTypeOf (req: IncomingMessage, read: ContentTypeReader): ReturnType<ContentTypeReader> {
  const header = req.headers['content-type']
  return read(header !== undefined && header.endsWith(';') ? header.slice(0, -1) : header)
}

/** koa-bodyparser 4.4. */
export const koaBodyparser4: Dialect = {
  name: 'koa-bodyparser 4',
  ownOptions: ['strict', 'onerror', 'queryString', 'onProtoPoisoning'],
  enabledKinds (enableTypes) {
    if (enableTypes === undefined || enableTypes === null) return new Set(['json', 'form'])
    if (!Array.isArray(enableTypes)) throw new TypeError('option enableTypes must be a list of body types (json, form, text, xml)')
    for (const kind of enableTypes) {
      if (!isBodyType(kind)) throw new UnsupportedBodyTypeError(String(kind))
    }
    return new Set(enableTypes as KoaBodyType[])
  },
  mediaTypes (extendTypes) {
    const types = defaultTypes(JSON_TYPES_4)
    if (extendTypes === undefined || extendTypes === null) return types
    if (typeof extendTypes !== 'object') throw new TypeError('option extendTypes must be an object of media types by body type')
    for (const [kind, extension] of Object.entries(extendTypes)) {
      if (!isBodyType(kind)) throw new UnsupportedBodyTypeError(kind)
      // A falsy value adds nothing; a string or a list is added after the defaults.
      if (extension) types[kind].push(...mediaTypesOf(Array.isArray(extension) ? extension : [extension], kind))
    }
    return types
  },
  parsedMethods: null,
  answersClosedRequest: false,
  createPicker ({ enabled, types, detectJson, readFor }) {
    // compat(koa4): JSON is matched on the header alone with its own type-is 1 (strict grammar); forms, text and XML
    // with `ctx.request.is()`, which also wants a body and uses the app's Koa's type-is (1 in Koa 2, 2 in Koa 3).
    const matchesJson = createTypeMatcher(types.json, typeOfExtension)
    const json = enabled.has('json') ? readFor('json', 'json') : null
    const form = enabled.has('form') ? readFor('form', 'form') : null
    const text = enabled.has('text') ? readFor('text', 'text') : null
    const xml = enabled.has('xml') ? readFor('text', 'xml') : null
    return function pickRead (ctx) {
      // detectJSON is asked only when JSON is enabled.
      if (json !== null && ((detectJson !== null && detectJson(ctx)) || matchesJson(ctx.req, contentTypeOf(ctx.req, readContentTypeStrictly)))) return json
      if (form !== null && ctx.request.is(types.form)) return form
      if (text !== null && ctx.request.is(types.text)) return text
      if (xml !== null && ctx.request.is(types.xml)) return xml
      return null
    }
  }
}

/** @koa/bodyparser 6.1. */
export const koaBodyparser6: Dialect = {
  name: '@koa/bodyparser 6',
  ownOptions: ['jsonStrict', 'onError', 'patchNode', 'enableRawChecking', 'parsedMethods'],
  enabledKinds (enableTypes = ['json', 'form']) {
    // compat(koa6): whatever is given is iterated (a string by its characters), each entry a kind; then each kind is
    // looked up with the value's own `includes` (a Set throws a TypeError, as null and other non-iterables do).
    for (const kind of enableTypes as Iterable<unknown>) {
      if (!isBodyType(kind)) throw new UnsupportedBodyTypeError(kind)
    }
    const list = enableTypes as { includes: (kind: KoaBodyType) => boolean }
    return new Set(BODY_TYPES.filter((kind) => list.includes(kind)))
  },
  mediaTypes (extendTypes = {}) {
    // compat(koa6): each own key must be a kind and its value a list (null is a TypeError, as Object.keys throws it).
    const given = extendTypes as Record<string, unknown>
    for (const key of Object.keys(given)) {
      if (!isBodyType(key) || !Array.isArray(given[key])) throw new UnsupportedBodyTypeError(key)
    }
    const types = defaultTypes(JSON_TYPES_6)
    for (const kind of BODY_TYPES) {
      if (!Object.hasOwn(given, kind)) continue
      // compat(koa6): lodash.merge joins the lists index by index: an entry replaces the default at its index, but an
      // undefined one (or a hole) keeps it; entries that are not strings stay in the list and match nothing.
      const extension = given[kind] as unknown[]
      const merged: unknown[] = types[kind]
      for (let index = 0; index < extension.length; index++) {
        if (extension[index] !== undefined || index >= merged.length) merged[index] = extension[index]
      }
    }
    return types
  },
  parsedMethods: ['POST', 'PUT', 'PATCH'],
  answersClosedRequest: true,
  createPicker ({ enabled, types, detectJson, readFor }) {
    // compat(koa6): every kind is matched on the header alone, with type-is 2; a request also of an XML type gets
    // `xmlLimit` whichever kind reads it, and detectJSON reads JSON even when it is not enabled.
    const matchers = new Map<KoaBodyType, TypeMatcher>([...enabled].map((kind) => [kind, createTypeMatcher(types[kind], typeOfExtension)]))
    const matches = (kind: KoaBodyType, req: IncomingMessage, contentType: ReturnType<ContentTypeReader>): boolean => {
      const matcher = matchers.get(kind)
      return matcher !== undefined && matcher(req, contentType)
    }
    const xmlEnabled = enabled.has('xml')
    const json = readFor('json', 'json')
    const jsonAsXml = xmlEnabled ? readFor('json', 'xml') : null
    const form = enabled.has('form') ? readFor('form', 'form') : null
    const formAsXml = xmlEnabled && form !== null ? readFor('form', 'xml') : null
    const text = enabled.has('text') ? readFor('text', 'text') : null
    const xml = xmlEnabled ? readFor('text', 'xml') : null
    return function pickRead (ctx) {
      const { req } = ctx
      const contentType = contentTypeOf(req, readContentTypeLeniently)
      const isJson = (detectJson !== null && detectJson(ctx)) || matches('json', req, contentType)
      const isXml = xmlEnabled && matches('xml', req, contentType)
      if (isJson) return isXml ? jsonAsXml : json
      if (matches('form', req, contentType)) return isXml ? formAsXml : form
      if (isXml) return xml
      if (matches('text', req, contentType)) return text
      return null
    }
  }
}
