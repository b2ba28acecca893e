// The Node builds' urlencoded parser: qs (its linear port for long forms) and bodykit/legacy's Node querystring read a form's text; qs loads with the first parser that can use it.
import querystring from 'querystring'
import { loadQs } from '../packages/qs'
import { parseFormLinear, type FormOptions } from './form'
import { createUrlencodedDefinition, type FormParsers, type NestedParse } from './urlencoded'

/**
 * Above this many parameters the linear port of qs parses the form (qs is quadratic in duplicates and
 * array merges). At or below it, which covers the default parameterLimit, qs itself runs.
 */
export const LINEAR_PARSE_THRESHOLD = 1000

/**
 * qs's `parse` (qs loads now: a parser that can use it is being created), or its linear port past
 * LINEAR_PARSE_THRESHOLD parameters (test/parsers/form.test.ts compares them).
 */
export function createQsParse (): NestedParse {
  const qs = loadQs()
  return function parseWithQs (body: string, options: FormOptions, count: number): unknown {
    // Security: a raised parameterLimit must not make parsing quadratic (seconds of CPU for 100 KB).
    return count > LINEAR_PARSE_THRESHOLD ? parseFormLinear(body, options) : qs.parse(body, options)
  }
}

/** compat(v1): simple mode is Node's querystring (null-prototype object, U+FFFD for bad escapes). */
export function parseWithQuerystring (body: string, maxKeys: number): Record<string, unknown> {
  return querystring.parse(body, undefined, undefined, { maxKeys })
}

/** The Node builds' form parsers. */
export const NODE_FORMS: FormParsers = { querystring: parseWithQuerystring, nestedParser: createQsParse }

/** urlencoded() of the Node builds. */
export const urlencodedDefinition = createUrlencodedDefinition(NODE_FORMS)
