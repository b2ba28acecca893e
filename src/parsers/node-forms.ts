// The Node builds' urlencoded parser: qs (its linear port for long forms) and bodykit/legacy's Node querystring read a form's text; loaded with the first urlencoded parser.
import querystring from 'querystring'
import { loadQs } from '../packages/qs'
import { parseFormLinear, type FormOptions } from './form'
import { createUrlencodedDefinition, type FormParsers } from './urlencoded'

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

/** The Node builds' form parsers. */
export const NODE_FORMS: FormParsers = { querystring: parseWithQuerystring, nested: parseWithQs }

/** urlencoded() of the Node builds. */
export const urlencodedDefinition = createUrlencodedDefinition(NODE_FORMS)
