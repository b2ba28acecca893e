// The json parser: JSON.parse with body-parser's strict mode and its exact SyntaxError messages, and an opt-in prototype-poisoning guard.
import { loadSecureJsonParse } from '../packages/secure-json-parse'
import type { AnyOptions, PoisoningAction } from '../options'
import type { ParserDefinition } from './definition'

/** Builds the parse function for the `reviver`, `strict`, `onProtoPoisoning` and `onConstructorPoisoning` options. */
function createJsonParse (options: AnyOptions): (body: string) => unknown {
  const reviver = options?.reviver as ((key: string, value: unknown) => unknown) | undefined
  const strict = options?.strict !== false
  const guard = createPoisoningGuard(readPoisoningAction(options, 'onProtoPoisoning'), readPoisoningAction(options, 'onConstructorPoisoning'))
  return function parseJson (body) {
    // An empty body is a common client mistake; body-parser answers {} rather than a syntax error.
    if (body.length === 0) return {}
    if (strict) {
      const first = firstNonWhitespace(body)
      if (first !== OPEN_BRACE && first !== OPEN_BRACKET) throw createStrictSyntaxError(body, first)
    }
    let value: unknown
    try {
      value = JSON.parse(body, reviver)
    } catch (err) {
      throw normalizeSyntaxError(err as SyntaxError, (err as Error).message)
    }
    if (guard !== null) guard(value, body)
    return value
  }
}

/** Reads a poisoning option; anything but the three actions throws when the middleware is created. */
export function readPoisoningAction (options: AnyOptions, name: 'onProtoPoisoning' | 'onConstructorPoisoning'): PoisoningAction {
  const action = options?.[name]
  if (action === undefined) return 'ignore'
  if (action !== 'ignore' && action !== 'remove' && action !== 'error') {
    throw new TypeError('option ' + name + ' must be "ignore", "remove" or "error"')
  }
  return action
}

/** A `\u` escape of a character from `P` to DEL: how `__proto__` or `constructor` can be spelt in disguise. */
const ESCAPED_ASCII = /\\u00[5-7]/

/**
 * The check secure-json-parse (fastify's) makes, run on the value JSON.parse gave (so invalid JSON keeps
 * its exact message): `'remove'` deletes the keys, `'error'` throws its SyntaxError, which the pipeline
 * reports as 400 `entity.parse.failed`. Null when both actions are `'ignore'`.
 */
export function createPoisoningGuard (protoAction: PoisoningAction, constructorAction: PoisoningAction): ((value: unknown, text: string) => void) | null {
  if (protoAction === 'ignore' && constructorAction === 'ignore') return null
  const actions = { protoAction, constructorAction }
  // secure-json-parse loads now, when a parser with a guard is created.
  const { scan } = loadSecureJsonParse()
  const proto = protoAction !== 'ignore'
  const ctor = constructorAction !== 'ignore'
  return function guardPrototypes (value, text) {
    if (value === null || typeof value !== 'object') return
    // A body that cannot hold such a key is not walked: the key is written as is, or with `\u` escapes of
    // its ASCII letters and `_` (\u005f to \u0075). Escaped non-ASCII text (`\u00e9`, `\u6771`) is not
    // enough, so bodies from encoders that escape it are not walked either. indexOf first: a backslash is
    // rare, so it is several times faster than the regex on bodies without escapes.
    if (!(proto && text.indexOf('__proto__') !== -1) && !(ctor && text.indexOf('constructor') !== -1) &&
      !(text.indexOf('\\u00') !== -1 && ESCAPED_ASCII.test(text))) return
    scan(value, actions)
  }
}

const OPEN_BRACE = 0x7b
const OPEN_BRACKET = 0x5b

/** Whether a JSON text opens an object or an array after RFC 7159 whitespace: what strict mode accepts. */
export function opensObjectOrArray (body: string): boolean {
  const first = firstNonWhitespace(body)
  return first === OPEN_BRACE || first === OPEN_BRACKET
}

/** Char code of the first character that is not RFC 7159 whitespace, or -1 when there is none. */
function firstNonWhitespace (body: string): number {
  for (let i = 0; i < body.length; i++) {
    const code = body.charCodeAt(i)
    if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) return code
  }
  return -1
}

/**
 * The error JSON.parse itself would give at the first character, so messages match the running Node:
 * the text from that character on is replaced by `#`, parsed, and the `#`s in the message put back.
 */
function createStrictSyntaxError (body: string, firstCode: number): SyntaxError {
  const index = firstCode === -1 ? -1 : body.indexOf(String.fromCharCode(firstCode))
  const partial = index === -1 ? '' : body.substring(0, index) + '#'.repeat(body.length - index)
  try {
    JSON.parse(partial)
  } catch (err) {
    const message = (err as Error).message.replace(/#+/g, (placeholder) => body.substring(index, index + placeholder.length))
    return normalizeSyntaxError(err as SyntaxError, message)
  }
  /* c8 ignore next */
  return new SyntaxError('strict violation')
}

/** Keeps only `message` and `stack` on the error, as body-parser does (no engine-specific fields). */
function normalizeSyntaxError (err: SyntaxError, message: string): SyntaxError {
  for (const key of Object.getOwnPropertyNames(err)) {
    if (key !== 'stack' && key !== 'message') delete (err as unknown as Record<string, unknown>)[key]
  }
  err.stack = (err.stack ?? '').replace(err.message, message)
  err.message = message
  return err
}

/** json(): objects and arrays (anything with `strict: false`) in any utf-* charset. */
export const jsonDefinition: ParserDefinition = {
  name: 'json',
  defaultType: 'application/json',
  // RFC 7159 section 8.1: JSON text is Unicode.
  acceptsCharset: () => (charset) => charset.slice(0, 4) === 'utf-',
  createParse: (options) => createJsonParse(options)
}
