// multipart(): forms with files, read as a stream by the multipart stage (src/multipart/) instead of whole.
import type { StreamParserDefinition } from './definition'
import { loadCrypto } from '../dependencies'
import { createFieldAssembler } from '../multipart/fields'
import { createFormPolicy } from '../multipart/form-collector'
import { NODE_BYTES } from '../multipart/node-bytes'
import { createMultipartStage } from '../multipart/part-reader'
import { normalizeMultipartOptions } from '../multipart/settings'
import { NODE_FORMS } from './node-forms'

/**
 * multipart() as the middleware and readMultipart() read it: `multipart/form-data`, fields and (when asked for) files.
 * Stored disk files are removed once the response has finished, and on any error.
 */
export const multipartDefinition: StreamParserDefinition = {
  name: 'multipart',
  defaultType: 'multipart/form-data',
  createStage (options, variant) {
    const settings = normalizeMultipartOptions(options)
    // Disk files get random names: crypto loads now, when the middleware is created, never while a form is read.
    if (settings.files?.storage === 'disk') loadCrypto()
    return {
      stage: createMultipartStage(createFormPolicy(settings, createFieldAssembler(settings, variant, NODE_FORMS, NODE_BYTES.decode))),
      defaultLimit: settings.defaultLimit
    }
  }
}
