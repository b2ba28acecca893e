// The settings of a parser that reads the body as a stream (multipart): a module of its own, so that an entry with
// only such parsers (bodykit/multer) reaches no whole-body reading (raw-body) and no MIME database.
import { AT_ONCE_MAX_LIMIT, type InflaterAtOnce } from './inflate'
import { createLog } from './dependencies'
import { normalizeCommonOptions, type AnyOptions } from './options'
import type { ReadSettings } from './read'
import { readStreamed } from './read-streamed'
import { createTypeMatcher, type ExtensionLookup } from './type-match'
import type { StreamParserDefinition } from './parsers/definition'
import type { Variant } from './variants'

const NO_INFLATERS: ReadonlyMap<string, InflaterAtOnce> = new Map()

/** The variant's one-shot inflaters where they keep the event loop's work bounded: `limit` up to AT_ONCE_MAX_LIMIT (docs/performance.md). */
export function inflatersWithin (limit: number, variant: Variant): ReadonlyMap<string, InflaterAtOnce> {
  return limit <= AT_ONCE_MAX_LIMIT ? variant.inflatersAtOnce : NO_INFLATERS
}

/**
 * The settings of a parser that reads the body as a stream: no charset, verify or one-shot inflation of its own.
 * `lookupExtension`: how a `type` given as an extension name is read (an entry whose types are fixed passes none).
 */
export function createStreamSettings (definition: StreamParserDefinition, options: AnyOptions, variant: Variant, lookupExtension: ExtensionLookup = noExtensions): ReadSettings {
  const { stage, defaultLimit } = definition.createStage(options, variant)
  const common = normalizeCommonOptions(options)
  const limitGiven = options?.limit !== undefined && options.limit !== null
  const limit = limitGiven ? common.limit : defaultLimit
  return {
    variant,
    debug: createLog('bodykit:' + definition.name),
    shouldParse: createTypeMatcher(common.type ?? definition.defaultType, lookupExtension),
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
    stage,
    readCheckedBody: readStreamed
  }
}

/** No extension name is a media type (an entry that fixes its types never needs the MIME database). */
function noExtensions (): false {
  return false
}

/** A streaming parser's stage does the parsing: the pipeline never reads its body whole. */
function parseNothing (): never {
  throw new Error('a streaming parser has no whole-body parse')
}
