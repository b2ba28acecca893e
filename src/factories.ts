// Turns a variant into the public factories: options validated once, then one read.ts pipeline per request.
import createDebug from 'debug'
import { AT_ONCE_MAX_LIMIT, type InflaterAtOnce } from './inflate'
import { normalizeCommonOptions, type AnyOptions, type JsonOptions, type MultipartOptions, type RawOptions, type TextOptions, type UrlencodedOptions } from './options'
import { readBody, type ParseFunction, type ReadSettings } from './read'
import { createTypeMatcher } from './type-match'
import type { ParserDefinition } from './parsers/definition'
import { jsonDefinition } from './parsers/json'
import { multipartDefinition, type StreamParserDefinition } from './parsers/multipart'
import { rawDefinition } from './parsers/raw'
import { textDefinition } from './parsers/text'
import { urlencodedDefinition } from './parsers/urlencoded'
import type { Middleware } from './types'
import type { Variant } from './variants'

/** The factories of one variant. */
export interface Factories {
  multipart: (options?: MultipartOptions | null) => Middleware
  json: (options?: JsonOptions | null) => Middleware
  raw: (options?: RawOptions | null) => Middleware
  text: (options?: TextOptions | null) => Middleware
  urlencoded: (options?: UrlencodedOptions | null) => Middleware
}

const NO_INFLATERS: ReadonlyMap<string, InflaterAtOnce> = new Map()

/** Validates options and fixes everything request-independent for one middleware or reader. */
export function createReadSettings (definition: ParserDefinition | StreamParserDefinition, options: AnyOptions, variant: Variant): ReadSettings {
  if ('createStage' in definition) return createStreamSettings(definition, options, variant)
  const common = normalizeCommonOptions(options)
  const parse = definition.createParse(options, variant) as ParseFunction
  const honoursDefaultCharset = variant.defaultCharsetParsers.has(definition.name)
  return {
    variant,
    debug: createDebug('bodykit:' + definition.name),
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType),
    acceptsCharset: definition.acceptsCharset(variant),
    defaultCharset: (honoursDefaultCharset && common.defaultCharset) || 'utf-8',
    inflate: common.inflate,
    limit: common.limit,
    verify: common.verify,
    rawBody: common.rawBody,
    discard: common.discard,
    readHttp2WithoutLength: common.readHttp2WithoutLength ?? variant.readsHttp2WithoutLength,
    // One-shot inflation keeps the event loop's work bounded only up to this limit (docs/performance.md).
    inflatersAtOnce: common.limit <= AT_ONCE_MAX_LIMIT ? variant.inflatersAtOnce : NO_INFLATERS,
    parse,
    schema: common.schema,
    stage: null
  }
}

/** The settings of a parser that reads the body as a stream: no charset, verify or one-shot inflation of its own. */
function createStreamSettings (definition: StreamParserDefinition, options: AnyOptions, variant: Variant): ReadSettings {
  const { stage, defaultLimit } = definition.createStage(options, variant)
  const common = normalizeCommonOptions(options)
  const limitGiven = options?.limit !== undefined && options.limit !== null
  return {
    variant,
    debug: createDebug('bodykit:' + definition.name),
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType),
    acceptsCharset: null,
    defaultCharset: 'utf-8',
    inflate: common.inflate,
    limit: limitGiven ? common.limit : defaultLimit,
    verify: false,
    rawBody: false,
    discard: common.discard,
    readHttp2WithoutLength: common.readHttp2WithoutLength ?? variant.readsHttp2WithoutLength,
    inflatersAtOnce: NO_INFLATERS,
    parse: parseNothing,
    schema: common.schema,
    stage
  }
}

/** A streaming parser's stage does the parsing: the pipeline never reads its body whole. */
function parseNothing (): never {
  throw new Error('a streaming parser has no whole-body parse')
}

/** Builds the factories of a variant; each middleware is a named function, as Express shows `fn.name`. */
export function createFactories (variant: Variant): Factories {
  return {
    json (options) {
      const settings = createReadSettings(jsonDefinition, options as AnyOptions, variant)
      return function jsonParser (req, res, next) { readBody(settings, req, res, next) }
    },
    raw (options) {
      const settings = createReadSettings(rawDefinition, options as AnyOptions, variant)
      return function rawParser (req, res, next) { readBody(settings, req, res, next) }
    },
    text (options) {
      const settings = createReadSettings(textDefinition, options as AnyOptions, variant)
      return function textParser (req, res, next) { readBody(settings, req, res, next) }
    },
    multipart (options) {
      const settings = createReadSettings(multipartDefinition, options as AnyOptions, variant)
      return function multipartParser (req, res, next) { readBody(settings, req, res, next) }
    },
    urlencoded (options) {
      const settings = createReadSettings(urlencodedDefinition, options as AnyOptions, variant)
      return function urlencodedParser (req, res, next) { readBody(settings, req, res, next) }
    }
  }
}
