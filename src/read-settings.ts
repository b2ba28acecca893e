// Turns a parser's definition and a caller's options into the settings one middleware or reader reads per request.
import { createLog } from './dependencies'
import { typeOfExtension } from './packages/type-is'
import { normalizeCommonOptions, type AnyOptions } from './options'
import type { ParseFunction, ReadSettings } from './read'
import { readWhole } from './read-whole'
import { createStreamSettings, inflatersWithin } from './stream-settings'
import { createTypeMatcher } from './type-match'
import type { ParserDefinition, StreamParserDefinition } from './parsers/definition'
import type { Variant } from './variants'

/** Validates options and fixes everything request-independent for one middleware or reader. */
export function createReadSettings (definition: ParserDefinition | StreamParserDefinition, options: AnyOptions, variant: Variant): ReadSettings {
  if ('createStage' in definition) return createStreamSettings(definition, options, variant, typeOfExtension)
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
    stage: null,
    readCheckedBody: readWhole
  }
}
