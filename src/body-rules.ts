// The pipeline's decisions that need no I/O, shared by the Node pipeline (read.ts) and the Web one (web/read-request.ts): the errors known from the headers, and the schema's verdict.
import type { HttpError } from 'http-errors'
import * as errors from './errors'
import type { StandardSchemaV1 } from './options'

/** What a build knows of encodings and charsets, for the refusals known from the headers. */
export interface DecodingRules {
  readonly decompressors: { has (encoding: string): boolean }
  readonly knowsCharset: (charset: string) => boolean
  /** With `verify`, whether an unknown charset is reported before an unsupported Content-Encoding. */
  readonly charsetErrorFirst: boolean
}

/** Errors known from the headers alone, in body-parser's order for this variant (`verify` counts only as given or not). */
export function refuseBeforeReading (settings: { readonly inflate: boolean, readonly verify: unknown }, build: DecodingRules,
  contentEncoding: string, charset: string | null): HttpError | null {
  let encodingError: HttpError | null = null
  if (contentEncoding !== 'identity') {
    if (!settings.inflate) encodingError = errors.inflateDisabled(contentEncoding)
    else if (!build.decompressors.has(contentEncoding)) encodingError = errors.unsupportedContentEncoding(contentEncoding)
  }
  // With `verify`, body-parser checks the charset up front (the raw Buffer must be decodable later).
  const charsetError = settings.verify && charset !== null && !build.knowsCharset(charset)
    ? errors.unsupportedCharset(charset.toLowerCase())
    : null
  return build.charsetErrorFirst
    ? charsetError ?? encodingError
    : encodingError ?? charsetError
}

/**
 * Runs a callback after the current one, outside any promise: Node's nextTick where there is one (the order Node
 * code has always seen), else a microtask (Web runtimes without `process`).
 */
const defer: (callback: () => void) => void = typeof process === 'object' && typeof process?.nextTick === 'function'
  ? (callback) => { process.nextTick(callback) }
  : (callback) => { queueMicrotask(callback) }

/**
 * The validation stage: the schema's output goes to `deliver`, its issues give 400 `entity.validation.failed`,
 * and a `validate` that throws, rejects or returns no result gives its error (a 500 by default), each to
 * `refuse`. A synchronous result is handed on at once; an asynchronous one is handed on outside its promise,
 * so an error thrown further down the chain is an exception, as on every other path, and never an unhandled
 * rejection.
 */
export function validateBody (schema: StandardSchemaV1.Props, body: unknown, refuse: (err: unknown) => void, deliver: (value: unknown) => void): void {
  let outcome: unknown
  let pending: boolean
  try {
    outcome = schema.validate(body)
    pending = isThenable(outcome)
  } catch (err) {
    refuse(errors.validationCrashed(err))
    return
  }
  if (!pending) {
    settleValidation(body, outcome, refuse, deliver)
    return
  }
  Promise.resolve(outcome).then(function onValidated (result) {
    defer(() => { settleValidation(body, result, refuse, deliver) })
  }, function onCrashed (err: unknown) {
    defer(() => { refuse(errors.validationCrashed(err)) })
  })
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function'
}

/** Reads a Standard Schema result: `issues` means refused, otherwise `value` is the output. */
function settleValidation (body: unknown, result: unknown, refuse: (err: unknown) => void, deliver: (value: unknown) => void): void {
  if (result === null || typeof result !== 'object') {
    refuse(errors.validationCrashed(new TypeError('schema validate returned no result')))
    return
  }
  let issues: unknown
  let value: unknown
  try {
    ({ issues, value } = result as StandardSchemaV1.SuccessResult<unknown>)
  } catch (err) {
    refuse(errors.validationCrashed(err))
    return
  }
  if (issues === undefined) deliver(value)
  else if (Array.isArray(issues)) refuse(errors.validationFailed(issues as StandardSchemaV1.Issue[], body))
  else refuse(errors.validationCrashed(new TypeError('schema validate returned issues that are not an array')))
}
