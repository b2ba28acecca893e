// Field assembly: the fields decoded and built into `req.body` exactly as urlencoded() builds a form.
import type { AnyOptions } from '../options'
import { decoderFor, formDecoder, type Decode } from './charsets'
import { createUrlencodedParse } from '../parsers/urlencoded'
import type { Variant } from '../variants'
import type { MultipartSettings } from './settings'

/** A field as the part reader saw it: decoded with the charset its part declares, or the bytes of a value whose part declares none. */
export interface FormField {
  readonly name: string
  readonly value: string | Buffer
}

/** Decodes the values and builds the fields object: flat or nested, with urlencoded's depth, prototype rules and arrays. */
export type FieldAssembler = (fields: readonly FormField[]) => Record<string, unknown>

/**
 * The object is built by the variant's urlencoded parser from an equivalent form, so nesting, arrays, `depth`
 * and prototype safety are urlencoded's own, not a second copy of them.
 */
export function createFieldAssembler (settings: MultipartSettings, variant: Variant): FieldAssembler {
  const parseForm = createUrlencodedParse({
    extended: settings.extended,
    depth: settings.depth,
    // The part reader counts fields against parameterLimit as they arrive; the form is never larger.
    parameterLimit: Infinity
  } as AnyOptions, variant) as (body: string, charset: string) => Record<string, unknown>
  // Validated when the options were read.
  const defaultDecode = decoderFor(settings.defaultCharset) as Decode
  return function assembleFields (fields) {
    const decode = formDecoder(fields, defaultDecode)
    let form = ''
    for (let index = 0; index < fields.length; index++) {
      const { name, value } = fields[index]
      const text = typeof value === 'string' ? value : decode(value)
      form += (index === 0 ? '' : '&') + escapeFormText(name) + '=' + escapeFormText(text)
    }
    return parseForm(form, 'utf-8')
  }
}

const FORM_SYNTAX = /[%&=+]/g
const ESCAPES: Record<string, string> = { '%': '%25', '&': '%26', '=': '%3D', '+': '%2B' }

/**
 * Escapes only what a form parser reads as syntax, so the text comes back unchanged: any other character,
 * brackets included, stands for itself (and lone surrogates, which encodeURIComponent refuses, pass through).
 */
function escapeFormText (text: string): string {
  FORM_SYNTAX.lastIndex = 0
  return FORM_SYNTAX.test(text) ? text.replace(FORM_SYNTAX, (char) => ESCAPES[char]) : text
}
