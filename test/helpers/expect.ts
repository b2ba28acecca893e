// Exact expectations for the HTTP suites: a whole reply (status and JSON) compared in one assertion.
import assert from 'node:assert/strict'
import type { Payload, Result } from './server'

const STATUS_NAMES: Record<number, string> = {
  400: 'BadRequestError',
  403: 'ForbiddenError',
  413: 'PayloadTooLargeError',
  415: 'UnsupportedMediaTypeError',
  500: 'InternalServerError'
}

/**
 * The payload of an http-errors error as the error handler echoes it. `name` defaults to the status
 * class name; pass it in `extra` when the error wraps another one (a SyntaxError keeps its name).
 */
export function httpError (status: number, message: string, extra: Payload = {}): Payload {
  return { name: STATUS_NAMES[status], message, status, statusCode: status, expose: status < 500, ...extra }
}

/** Asserts status and the whole JSON payload at once. */
export function assertReply (actual: Result, status: number, json: Payload): void {
  assert.deepEqual({ status: actual.status, json: actual.json }, { status, json })
}

/** Asserts a 200 whose `req.body` (as encoded by the server) equals `body`; other payload keys are ignored. */
export function assertBody (actual: Result, body: unknown): void {
  assert.deepEqual({ status: actual.status, body: actual.json.body }, { status: 200, body })
}

/** The message the running engine gives for `JSON.parse(text)`. */
export function jsonParseMessage (text: string): string {
  try {
    JSON.parse(text)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error('expected JSON.parse to fail for ' + JSON.stringify(text))
}
