// What a parser declares to the pipeline: its name, default type, charset policy and parse function.
import type { AnyOptions } from '../options'
import type { BodyStage } from '../read'
import type { ParserName, ParserRules, Variant } from '../variants'

/** A parser kind: pure data and functions the factory turns into a middleware. */
export interface ParserDefinition {
  readonly name: ParserName
  readonly defaultType: string
  /** The charset predicate for a variant, or null when the body stays a Buffer. */
  readonly acceptsCharset: (variant: ParserRules) => ((charset: string) => boolean) | null
  /** Validates the parser's own options (throwing TypeErrors) and returns its parse function. */
  readonly createParse: (options: AnyOptions, variant: ParserRules) => (body: never, charset: string | null) => unknown
}

/** A parser that reads the body as a stream: it declares its stage, and the `limit` it has by default. */
export interface StreamParserDefinition {
  readonly name: 'multipart'
  readonly defaultType: string
  /** Validates the parser's own options (throwing TypeErrors) and builds its stage and default limit. */
  readonly createStage: (options: AnyOptions, variant: Variant) => { stage: BodyStage, defaultLimit: number }
}
