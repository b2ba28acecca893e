// The Web build's settings: the Node builds' option validation, type matching and parsers, with the Web build's knowledge of types, charsets and encodings.
import type { DecodingRules } from '../body-rules'
import { createFieldAssembler, type FieldAssembler } from '../multipart/fields'
import { normalizeMultipartOptions, type MultipartSettings } from '../multipart/settings'
import { normalizeCommonOptions, type AnyOptions, type CommonSettings, type StandardSchemaV1, type VerifyFunction } from '../options'
import { parseFormLinear } from '../parsers/form'
import { jsonDefinition } from '../parsers/json'
import { rawDefinition } from '../parsers/raw'
import { textDefinition } from '../parsers/text'
import { createUrlencodedDefinition, type FormParsers } from '../parsers/urlencoded'
import type { ParserDefinition } from '../parsers/definition'
import { createTypeMatcher, type TypeMatcher } from '../type-match'
import type { ParserName, ParserRules } from '../variants'
import { WEB_BYTES } from './bytes'
import { knowsWebCharset } from './decode'
import { webDecompressors } from './inflate'
import { lookupWebExtension } from './type-names'

/**
 * The default entry's urlencoded rules (variants.ts `modern`); every form is read by the linear port of qs
 * (parsers/form.ts, compared with qs by test/parsers/form.test.ts: WEB_FORMS) instead of qs, which the Web build does
 * not carry. test/web-build/decode.test.ts holds the two tables equal.
 */
export const WEB_RULES: ParserRules = {
  urlencoded: {
    charsets: ['utf-8', 'iso-8859-1'],
    isExtended: (extended) => Boolean(extended),
    warnWhenExtendedUndefined: false,
    simpleIsQuerystring: false,
    charsetOptions: true
  }
}

/** The Web build's form parsers: the linear port of qs for every form (its simple mode is qs's with depth 0, never querystring). */
export const WEB_FORMS: FormParsers = {
  querystring: () => { throw new Error('the Web build has no querystring mode') },
  nestedParser: () => (body, options) => parseFormLinear(body, options)
}

const urlencodedDefinition = createUrlencodedDefinition(WEB_FORMS)

/** What the Web build knows of encodings and charsets (for the refusals known from the headers). */
export const WEB_DECODING: DecodingRules = {
  decompressors: { has: (encoding) => webDecompressors().has(encoding) },
  knowsCharset: knowsWebCharset,
  charsetErrorFirst: true
}

/** Parsers whose `defaultCharset` is honoured, as in the default entry. */
const DEFAULT_CHARSET_PARSERS: ReadonlySet<ParserName> = new Set(['json', 'text', 'urlencoded'])

const DEFINITIONS: Readonly<Record<Exclude<ParserName, 'multipart'>, ParserDefinition>> = {
  json: jsonDefinition,
  raw: rawDefinition,
  text: textDefinition,
  urlencoded: urlencodedDefinition
}

/** A multipart reader's own settings: its limits, and the assembly of its fields. */
export interface WebFormSettings {
  readonly settings: MultipartSettings
  readonly assemble: FieldAssembler
}

/** Everything one Web reader needs per request, fixed when its options are first seen. */
export interface WebSettings {
  readonly kind: ParserName
  readonly shouldParse: TypeMatcher
  /** Which charsets the parser accepts; null when the body stays bytes (raw, multipart). */
  readonly acceptsCharset: ((charset: string) => boolean) | null
  readonly defaultCharset: string
  readonly inflate: boolean
  readonly limit: number
  readonly verify: VerifyFunction | false
  readonly parse: (body: never, charset: string | null) => unknown
  readonly schema: StandardSchemaV1.Props | null
  /** multipart's settings; null for the parsers that read the body whole. */
  readonly form: WebFormSettings | null
}

/** Validates options (the TypeErrors of the Node builds, and the Web build's own) into a reader's settings. */
export function createWebSettings (kind: ParserName, options: AnyOptions): WebSettings {
  const common = normalizeCommonOptions(options)
  if (kind === 'multipart') return createFormSettings(options, common)
  const definition = DEFINITIONS[kind]
  return {
    kind,
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType, lookupWebExtension),
    acceptsCharset: definition.acceptsCharset(WEB_RULES),
    defaultCharset: (DEFAULT_CHARSET_PARSERS.has(kind) && common.defaultCharset) || 'utf-8',
    inflate: common.inflate,
    limit: common.limit,
    verify: common.verify,
    parse: definition.createParse(options, WEB_RULES),
    schema: common.schema,
    form: null
  }
}

/** readMultipart's settings: files are kept in memory (there is no file system to write them to). */
function createFormSettings (options: AnyOptions, common: CommonSettings): WebSettings {
  const files = options?.files as { storage?: unknown } | undefined
  if (files !== null && typeof files === 'object' && files.storage !== undefined && files.storage !== 'memory') {
    throw new TypeError('option files.storage must be "memory" in the Web build (it has no file system)')
  }
  const settings = normalizeMultipartOptions(options)
  return {
    kind: 'multipart',
    shouldParse: createTypeMatcher(common.type ?? 'multipart/form-data', lookupWebExtension),
    acceptsCharset: null,
    defaultCharset: 'utf-8',
    inflate: common.inflate,
    limit: options?.limit !== undefined && options.limit !== null ? common.limit : settings.defaultLimit,
    verify: false,
    parse: () => undefined,
    schema: common.schema,
    form: { settings, assemble: createFieldAssembler(settings, WEB_RULES, WEB_FORMS, WEB_BYTES.decode) }
  }
}
