// Turns a parser's definition and a caller's options into the settings one middleware or reader reads per request.
import { AT_ONCE_MAX_LIMIT, type InflaterAtOnce } from './inflate'
import { createLog, typeOfExtension } from './dependencies'
import { normalizeCommonOptions, type AnyOptions } from './options'
import type { ParseFunction, ReadSettings } from './read'
import { createTypeMatcher } from './type-match'
import type { ParserDefinition, StreamParserDefinition } from './parsers/definition'
import type { Variant } from './variants'

const NO_INFLATERS: ReadonlyMap<string, InflaterAtOnce> = new Map()

/** The variant's one-shot inflaters where they keep the event loop's work bounded: `limit` up to AT_ONCE_MAX_LIMIT (docs/performance.md). */
function inflatersWithin (limit: number, variant: Variant): ReadonlyMap<string, InflaterAtOnce> {
  return limit <= AT_ONCE_MAX_LIMIT ? variant.inflatersAtOnce : NO_INFLATERS
}

/** Validates options and fixes everything request-independent for one middleware or reader. */
export function createReadSettings (definition: ParserDefinition | StreamParserDefinition, options: AnyOptions, variant: Variant): ReadSettings {
  if ('createStage' in definition) return createStreamSettings(definition, options, variant)
  const common = normalizeCommonOptions(options)
  const parse = definition.createParse(options, variant) as ParseFunction
  const honoursDefaultCharset = variant.defaultCharsetParsers.has(definition.name)
  return {
    variant,
    debug: createLog('bodykit:' + definition.name),
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType, typeOfExtension),
    acceptsCharset: definition.acceptsCharset(variant),
    defaultCharset: (honoursDefaultCharset && common.defaultCharset) || 'utf-8',
    inflate: common.inflate,
    limit: common.limit,
    verify: common.verify,
    rawBody: common.rawBody,
    discard: common.discard,
    readHttp2WithoutLength: common.readHttp2WithoutLength ?? variant.readsHttp2WithoutLength,
    inflatersAtOnce: inflatersWithin(common.limit, variant),
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
  const limit = limitGiven ? common.limit : defaultLimit
  return {
    variant,
    debug: createLog('bodykit:' + definition.name),
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType, typeOfExtension),
    acceptsCharset: null,
    defaultCharset: 'utf-8',
    inflate: common.inflate,
    limit,
    verify: false,
    rawBody: false,
    discard: common.discard,
    readHttp2WithoutLength: common.readHttp2WithoutLength ?? variant.readsHttp2WithoutLength,
    // Not to read a body first (a stage streams it), but to inflate again what zlib dropped with its error.
    inflatersAtOnce: inflatersWithin(limit, variant),
    parse: parseNothing,
    schema: common.schema,
    stage
  }
}

/** A streaming parser's stage does the parsing: the pipeline never reads its body whole. */
function parseNothing (): never {
  throw new Error('a streaming parser has no whole-body parse')
}
