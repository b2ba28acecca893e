// What a parser declares to the pipeline: its name, default type, charset policy and parse function.
import type { AnyOptions } from '../options'
import type { ParserName, Variant } from '../variants'

/** A parser kind: pure data and functions the factory turns into a middleware. */
export interface ParserDefinition {
  readonly name: ParserName
  readonly defaultType: string
  /** The charset predicate for a variant, or null when the body stays a Buffer. */
  readonly acceptsCharset: (variant: Variant) => ((charset: string) => boolean) | null
  /** Validates the parser's own options (throwing TypeErrors) and returns its parse function. */
  readonly createParse: (options: AnyOptions, variant: Variant) => (body: never, charset: string | null) => unknown
}
