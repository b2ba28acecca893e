// The Node builds' readers of a form's text: qs (and its linear port for long forms), and bodykit/legacy's Node querystring; loaded with the first form.
import querystring from 'querystring'
import { loadQs } from '../dependencies'
import { parseFormLinear, type FormOptions } from './form'

/**
 * Above this many parameters the linear port of qs parses the form (qs is quadratic in duplicates and
 * array merges). At or below it, which covers the default parameterLimit, qs itself runs.
 */
export const LINEAR_PARSE_THRESHOLD = 1000

/** qs's `parse`, or its linear port past LINEAR_PARSE_THRESHOLD parameters (test/parsers/form.test.ts compares them). */
export function parseWithQs (body: string, options: FormOptions, count: number): unknown {
  // Security: a raised parameterLimit must not make parsing quadratic (seconds of CPU for 100 KB).
  return count > LINEAR_PARSE_THRESHOLD ? parseFormLinear(body, options) : loadQs().parse(body, options)
}

/** compat(v1): simple mode is Node's querystring (null-prototype object, U+FFFD for bad escapes). */
export function parseWithQuerystring (body: string, maxKeys: number): Record<string, unknown> {
  return querystring.parse(body, undefined, undefined, { maxKeys })
}
