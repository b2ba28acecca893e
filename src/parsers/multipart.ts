// multipart(): forms with files, read as a stream by the multipart stage (src/multipart/) instead of whole.
import type { StreamParserDefinition } from './definition'
import { createFieldAssembler } from '../multipart/fields'
import { createFormPolicy } from '../multipart/form-collector'
import { createMultipartStage } from '../multipart/part-reader'
import { normalizeMultipartOptions } from '../multipart/settings'

/**
 * multipart(): `multipart/form-data`, fields and (when asked for) files. Stored disk files are removed once the
 * response has finished; with `filesLiveWithResponse` false, that is left to the caller (koaBody() ties them to the
 * response itself, once it has renamed and moved them). On any error they are removed either way.
 */
export function createMultipartDefinition (filesLiveWithResponse: boolean): StreamParserDefinition {
  return {
    name: 'multipart',
    defaultType: 'multipart/form-data',
    createStage (options, variant) {
      const settings = normalizeMultipartOptions(options)
      return {
        stage: createMultipartStage(createFormPolicy(settings, createFieldAssembler(settings, variant), filesLiveWithResponse)),
        defaultLimit: settings.defaultLimit
      }
    }
  }
}

/** multipart() as the middleware and readMultipart() read it. */
export const multipartDefinition = createMultipartDefinition(true)
