// Field assembly: the fields decoded and built into `req.body` exactly as urlencoded() builds a form.
import type { AnyOptions } from '../options'
import { addFlatPair } from '../parsers/flat-form'
import { createUrlencodedParse, type FormParsers } from '../parsers/urlencoded'
import type { ParserRules } from '../variants'
import { decoderFor, formDecoder, type BuildDecode, type BytesDecode } from './charsets'
import type { MultipartSettings } from './settings'

/**
 * A field as the part reader saw it: its value decoded with the charset its part declares, or, when the part declares
 * none, its bytes, decoded once the form's charset is known.
 */
export interface FormField {
  readonly name: string
  readonly value: string | Uint8Array
  /** How many file parts came before this field: where it stands among the files (bodykit/h3 lists parts in order). */
  readonly filesBefore?: number
}

/** Decodes the values and builds the fields object: flat or nested, with urlencoded's depth, prototype rules and arrays. */
export type FieldAssembler = (fields: readonly FormField[]) => Record<string, unknown>

/**
 * The object is built by the variant's urlencoded parser from an equivalent form, so nesting, arrays, `depth`
 * and prototype safety are urlencoded's own, not a second copy of them. Names without brackets, where qs's
 * reading is flat, skip the round trip through text (test/multipart/fields.test.ts proves the two equal).
 */
export function createFieldAssembler (settings: MultipartSettings, variant: ParserRules, forms: FormParsers, decode: BuildDecode): FieldAssembler {
  const parseForm = createUrlencodedParse({
    extended: settings.extended,
    depth: settings.depth,
    // The part reader counts fields against parameterLimit as they arrive; the form is never larger.
    parameterLimit: Infinity
  } as AnyOptions, variant, forms) as (body: string, charset: string) => Record<string, unknown>
  // compat(v1): body-parser 1.x's simple mode is Node's querystring, which flat pairs do not follow.
  const readsFlatPairs = settings.extended || !variant.urlencoded.simpleIsQuerystring
  // Validated when the options were read.
  const defaultDecode = decoderFor(settings.defaultCharset, decode) as BytesDecode
  return function assembleFields (fields) {
    const decodeValue = formDecoder(fields, defaultDecode, decode)
    if (readsFlatPairs && fields.every(hasFlatName)) {
      const result: Record<string, string | string[]> = {}
      for (const { name, value } of fields) addFlatPair(result, name, typeof value === 'string' ? value : decodeValue(value))
      return result
    }
    let form = ''
    for (let index = 0; index < fields.length; index++) {
      const { name, value } = fields[index]
      form += (index === 0 ? '' : '&') + escapeFormText(name) + '=' + escapeFormText(typeof value === 'string' ? value : decodeValue(value))
    }
    return parseForm(form, 'utf-8')
  }
}

/** A name qs reads as one key, whatever the depth: brackets are all that make it nest (dots are off). */
function hasFlatName (field: FormField): boolean {
  return !field.name.includes('[') && !field.name.includes(']')
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
