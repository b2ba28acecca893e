// bodyParser()'s options, both dialects' and bodykit's own, validated once into the settings its middleware reads per request.
import bytes from 'bytes'
import { createReadSettings } from '../read-settings'
import { normalizeSchema, type StandardSchemaV1 } from '../options'
import { readPoisoningAction } from '../parsers/json'
import type { ReadSettings } from '../read'
import { legacy } from '../variants'
import { koaBodyparser4, koaBodyparser6, type Dialect, type PickRead } from './dialects'
import { canInflateZstd, createFormParse, createJsonParse, createKoaDefinition, createKoaVariant, type ReadKind } from './reading'
import type { ErrorHandler, KoaBodyParserOptions, KoaBodyType } from './types'

/** Everything the middleware needs per request, fixed when it is created. */
export interface KoaSettings {
  /** The kind and limit of a request's body, or null for none (`{}`). */
  readonly pickRead: PickRead
  /** The methods read (`parsedMethods`), or null for every method. */
  readonly methods: ReadonlySet<string> | null
  readonly patchNode: boolean
  /** `enableRawChecking`: a `ctx.req.body` set before is taken as the body. */
  readonly takesNodeBody: boolean
  readonly answersClosedRequest: boolean
  /** `onerror` or `onError`, or null: a refused body is thrown. */
  readonly onError: ErrorHandler | null
  readonly rawBuffer: boolean
  readonly schema: StandardSchemaV1.Props | null
}

/** co-body's default limit of each kind (XML is read as text). */
const DEFAULT_LIMITS: Record<ReadKind, string> = { json: '1mb', form: '56kb', text: '1mb' }

/**
 * The dialect an option only one library reads picks; with none of them, `preferred` (koa-bodyparser 4 for the module
 * itself, @koa/bodyparser 6 for its named export `bodyParser`, as each library is imported).
 */
function dialectOf (options: Record<string, unknown>, preferred: Dialect): Dialect {
  const picks = (candidate: Dialect): boolean => candidate.ownOptions.some((name) => options[name] !== undefined)
  const dialect = picks(koaBodyparser6) ? koaBodyparser6 : picks(koaBodyparser4) ? koaBodyparser4 : preferred
  const other = dialect === koaBodyparser6 ? koaBodyparser4 : koaBodyparser6
  const mixed = other.ownOptions.find((name) => options[name] !== undefined)
  if (mixed !== undefined) {
    const chosenBy = dialect.ownOptions.filter((name) => options[name] !== undefined).join(', ')
    throw new TypeError('option ' + mixed + ' is ' + other.name + '\'s, which ' + dialect.name + ' (picked by option ' + chosenBy + ') ignores: use the options of one of them')
  }
  return dialect
}

/** A `<kind>Limit` option as co-body reads it: a falsy one is the kind's default; a limit `bytes` cannot read throws now. */
function readLimit (options: Record<string, unknown>, limitOf: KoaBodyType, kind: ReadKind): number | string {
  const name = limitOf + 'Limit'
  const value = options[name]
  if (!value) return DEFAULT_LIMITS[kind]
  const limit = bytes.parse(value as string | number)
  if (limit === null || !(limit >= 0)) throw new TypeError('option ' + name + ' "' + String(value) + '" is invalid')
  return limit
}

/** The charset every body is decoded with: co-body's default for a falsy one; one iconv-lite 0.4 cannot decode throws now. */
function readEncoding (value: unknown): string {
  if (!value) return 'utf-8'
  if (typeof value !== 'string' || !legacy.knowsCharset(value)) throw new TypeError('option encoding "' + String(value) + '" is not a charset bodykit can decode')
  return value.toLowerCase()
}

function readFunction<T> (options: Record<string, unknown>, name: string): T | null {
  const value = options[name]
  // compat(koa): the libraries call it when it is truthy.
  if (!value) return null
  if (typeof value !== 'function') throw new TypeError('option ' + name + ' must be a function')
  return value as T
}

/** bodykit's own switches are checked strictly: they have no library coercions to keep. */
function readSwitch (options: Record<string, unknown>, name: string): boolean {
  const value = options[name]
  if (value !== undefined && typeof value !== 'boolean') throw new TypeError('option ' + name + ' must be a boolean')
  return value === true
}

/** `parsedMethods`: the list as given (requests are compared upper case, so `'post'` matches none). */
function readMethods (value: unknown): ReadonlySet<string> {
  if (!Array.isArray(value) || !value.every((method) => typeof method === 'string')) throw new TypeError('option parsedMethods must be a list of methods')
  return new Set(value)
}

/**
 * Validates `options` (TypeErrors, and UnsupportedBodyTypeError for an unknown kind of body) and fixes the middleware's
 * settings, in `preferred`'s dialect unless an option only the other library reads is given.
 */
export function createKoaSettings (options: KoaBodyParserOptions | null | undefined, preferred: Dialect = koaBodyparser4): KoaSettings {
  if (options !== undefined && options !== null && typeof options !== 'object') throw new TypeError('options must be an object')
  const given = (options ?? {}) as Record<string, unknown>
  if (given.qs !== undefined) throw new TypeError('option qs (a qs module of your own) is not supported by bodykit/koa: its forms are parsed with qs 6')
  const dialect = dialectOf(given, preferred)
  const is4 = dialect === koaBodyparser4
  const enabled = dialect.enabledKinds(given.enableTypes)
  const types = dialect.mediaTypes(given.extendTypes)
  const encoding = readEncoding(given.encoding)
  const checkCharset = readSwitch(given, 'checkCharset')
  const inflateZstd = readSwitch(given, 'inflateZstd')
  if (inflateZstd && !canInflateZstd) throw new TypeError('option inflateZstd needs a Node.js that inflates zstd (22.15 or later)')
  const rawBuffer = readSwitch(given, 'rawBuffer')

  const queryString = is4 ? given.queryString ?? {} : {}
  if (typeof queryString !== 'object' || queryString === null) throw new TypeError('option queryString must be an object of qs options')
  const jsonRules = {
    strict: (is4 ? given.strict : given.jsonStrict) !== false,
    // compat(koa6): @koa/bodyparser passes no such option to co-body, whose default refuses the key.
    onProtoPoisoning: is4 && given.onProtoPoisoning !== undefined ? readPoisoningAction(given, 'onProtoPoisoning') : 'error',
    onConstructorPoisoning: readPoisoningAction(given, 'onConstructorPoisoning')
  } as const
  // Made for the kinds the middleware reads (what each loads, qs for forms, loads then: when it is created).
  const parserOf: Record<ReadKind, () => (text: string, charset: string | null) => unknown> = {
    json: () => createJsonParse(jsonRules),
    form: () => createFormParse(queryString as Record<string, unknown>, checkCharset),
    text: () => (text) => text
  }
  const variant = createKoaVariant(inflateZstd, checkCharset)
  const definitions = new Map<ReadKind, ReturnType<typeof createKoaDefinition>>()
  const reads = new Map<string, ReadSettings>()
  const readFor = (kind: ReadKind, limitOf: KoaBodyType): ReadSettings => {
    const key = kind + ':' + limitOf
    let settings = reads.get(key)
    if (settings === undefined) {
      let definition = definitions.get(kind)
      if (definition === undefined) definitions.set(kind, definition = createKoaDefinition(kind, parserOf[kind](), checkCharset))
      settings = createReadSettings(definition, {
        type: readEveryRequest,
        limit: readLimit(given, limitOf, kind),
        defaultCharset: encoding,
        rawBody: rawBuffer,
        discardLimit: given.discardLimit,
        discardTime: given.discardTime
      }, variant)
      reads.set(key, settings)
    }
    return settings
  }
  const pickRead = dialect.createPicker({ enabled, types, detectJson: readFunction(given, 'detectJSON'), readFor })
  const methods = is4 ? null : readMethods(given.parsedMethods ?? koaBodyparser6.parsedMethods)
  return {
    pickRead,
    methods,
    patchNode: !is4 && Boolean(given.patchNode),
    takesNodeBody: !is4 && Boolean(given.enableRawChecking),
    answersClosedRequest: dialect.answersClosedRequest,
    onError: readFunction(given, is4 ? 'onerror' : 'onError'),
    rawBuffer,
    schema: normalizeSchema(given.schema)
  }
}

/** The adapter picks the requests to read; the pipeline reads each it is given. */
function readEveryRequest (): boolean {
  return true
}
