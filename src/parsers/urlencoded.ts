// The urlencoded parser: flat or qs-nested forms, with parameterLimit, depth and charset options.
import * as errors from '../errors'
import type { AnyOptions } from '../options'
import type { ParserRules } from '../variants'
import type { ParserDefinition } from './definition'
import { isFlatForm, parseFlatForm } from './flat-form'
import type { FormOptions } from './form'

let warnedExtendedUndefined = false

/** Validates the urlencoded options and builds the parse function for a variant. */
export function createUrlencodedParse (options: AnyOptions, variant: ParserRules, forms: FormParsers): (body: string, charset: string | null) => unknown {
  const rules = variant.urlencoded
  if (rules.warnWhenExtendedUndefined && options?.extended === undefined && !warnedExtendedUndefined) {
    warnedExtendedUndefined = true
    process.emitWarning('undefined extended: provide extended option', 'DeprecationWarning', 'BODYKIT_EXTENDED')
  }
  const extended = rules.isExtended(options?.extended)
  const defaultCharset = options?.defaultCharset || 'utf-8'
  if (rules.charsetOptions && defaultCharset !== 'utf-8' && defaultCharset !== 'iso-8859-1') {
    throw new TypeError('option defaultCharset must be either utf-8 or iso-8859-1')
  }
  // Loose checks on purpose: body-parser coerces (`'10'` is a valid limit, `null` is not).
  let parameterLimit = options?.parameterLimit !== undefined ? options.parameterLimit as number : 1000
  const depth = extended ? (options?.depth !== undefined ? options.depth as number : 32) : 0
  if (isNaN(parameterLimit) || parameterLimit < 1) {
    throw new TypeError('option parameterLimit must be a positive number')
  }
  if (isNaN(depth) || depth < 0) {
    throw new TypeError('option depth must be a zero or a positive number')
  }
  if (isFinite(parameterLimit)) parameterLimit = parameterLimit | 0
  const limit = parameterLimit

  if (!extended && rules.simpleIsQuerystring) {
    return function parseSimpleForm (body) {
      if (body.length === 0) return {}
      countParameters(body, limit)
      return forms.querystring(body, limit)
    }
  }

  const parseNested = forms.nestedParser()
  const charsetSentinel = rules.charsetOptions ? options?.charsetSentinel as boolean | undefined : undefined
  const interpretNumericEntities = rules.charsetOptions ? options?.interpretNumericEntities as boolean | undefined : undefined
  // qs reads the sentinel option only when it is a real boolean.
  const sentinelActive = charsetSentinel === true
  return function parseForm (body, charset) {
    if (body.length === 0) return {}
    const count = countParameters(body, limit)
    if (charset === 'utf-8' && !sentinelActive && isFlatForm(body)) return parseFlatForm(body)
    // One literal shape per call keeps qs's many option reads monomorphic.
    const formOptions: FormOptions = {
      // Security (CVE-2024-45590): depth is bounded and exceeding it throws instead of flattening.
      depth,
      strictDepth: true,
      allowPrototypes: true,
      parameterLimit: limit,
      arrayLimit: extended ? Math.max(100, count) : count,
      charset: (charset ?? undefined) as 'utf-8' | 'iso-8859-1' | undefined,
      charsetSentinel,
      interpretNumericEntities
    }
    try {
      return parseNested(body, formOptions, count)
    } catch (err) {
      if (err instanceof RangeError) throw errors.depthExceeded()
      throw err
    }
  }
}

/**
 * Counts parameters (`&` plus one) and throws 413 past the limit. Security (CVE-2025-13466): it stops at
 * the limit instead of splitting the whole body first.
 */
function countParameters (body: string, limit: number): number {
  let count = 0
  let index = -1
  do {
    count++
    if (count > limit) throw errors.tooManyParameters()
    index = body.indexOf('&', index + 1)
  } while (index !== -1)
  return count
}

/**
 * How a build reads a form's text: the Node builds with qs (its linear port for long forms) and bodykit/legacy's
 * Node querystring (parsers/node-forms.ts), the Web build with the linear port alone (web/settings.ts).
 */
export interface FormParsers {
  /** compat(v1): the simple mode of a variant whose simple mode is Node's querystring (null-prototype object, U+FFFD for bad escapes). */
  readonly querystring: (body: string, maxKeys: number) => Record<string, unknown>
  /**
   * Makes qs's reading of a form (with depth 0 in simple mode), given the options and the count of parameters: called
   * when a parser that can reach it is created, so that the Node builds load qs then, never while a form is read.
   */
  readonly nestedParser: () => NestedParse
}

/** A form's text read as qs reads it, with these options; `count` is its number of parameters. */
export type NestedParse = (body: string, options: FormOptions, count: number) => unknown

/** urlencoded(): form bodies, utf-8 (and iso-8859-1 in the default entry), read by a build's form parsers. */
export function createUrlencodedDefinition (forms: FormParsers): ParserDefinition {
  return {
    name: 'urlencoded',
    defaultType: 'application/x-www-form-urlencoded',
    acceptsCharset: (variant) => {
      const charsets = variant.urlencoded.charsets
      return (charset) => charsets.includes(charset)
    },
    createParse: (options, variant) => createUrlencodedParse(options, variant, forms)
  }
}
