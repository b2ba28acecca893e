// multipart(): forms with files, read as a stream by the multipart stage (src/multipart/) instead of whole.
import type { AnyOptions } from '../options'
import type { BodyStage } from '../read'
import type { Variant } from '../variants'
import { createFieldAssembler } from '../multipart/fields'
import { createFormPolicy } from '../multipart/form-collector'
import { createMultipartStage } from '../multipart/part-reader'
import { normalizeMultipartOptions } from '../multipart/settings'

/** A parser that reads the body as a stream: it declares its stage, and the `limit` it has by default. */
export interface StreamParserDefinition {
  readonly name: 'multipart'
  readonly defaultType: string
  /** Validates the parser's own options (throwing TypeErrors) and builds its stage and default limit. */
  readonly createStage: (options: AnyOptions, variant: Variant) => { stage: BodyStage, defaultLimit: number }
}

/** multipart(): `multipart/form-data`, fields and (when asked for) files. */
export const multipartDefinition: StreamParserDefinition = {
  name: 'multipart',
  defaultType: 'multipart/form-data',
  createStage (options, variant) {
    const settings = normalizeMultipartOptions(options)
    return {
      stage: createMultipartStage(createFormPolicy(settings, createFieldAssembler(settings, variant))),
      defaultLimit: settings.defaultLimit
    }
  }
}
