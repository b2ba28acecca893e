// The Web build (`bodykit/web`): the promise readers for a Web `Request` on Web primitives only, for edge runtimes, Workers, Deno, Bun and Node.
import { readContentTypeLeniently } from './content-type'
import { invalidBoundary, isBodyParserError as isBodyParserErrorGuard, parseFailed, requestAborted, unsupportedCharset } from './errors'
import { createPoisoningGuard, readPoisoningAction } from './parsers/json'
import { settingsPerOptions, type AnyOptions } from './options'
import type { BodyParserError } from './types'
import type { ParserName } from './variants'
import { decodeWebBody, knowsWebCharset } from './web/decode'
import { readRequest } from './web/read-request'
import { createWebSettings, type WebSettings } from './web/settings'
import type { WebFormReaderFunction, WebJsonOptions, WebRawOptions, WebReader, WebTextOptions, WebUrlencodedOptions } from './web/types'

export type * from './web/types'
export type { BodyParserError, BodyParserErrorType } from './types'

/**
 * Whether a value is an error a reader rejected with for the body (its `status`, `type` and message are the
 * client's to see), and not one of the app's own.
 * @example
 * try { await readJson(request) } catch (err) { if (isBodyParserError(err)) return new Response(err.message, { status: err.status }) }
 */
export const isBodyParserError: (value: unknown) => value is BodyParserError = isBodyParserErrorGuard

/** One parser's reader: settings are validated once per options object (a bad option rejects with its TypeError). */
function createReader (kind: ParserName): (request: unknown, options?: unknown) => Promise<unknown> {
  const settingsFor = settingsPerOptions((options) => createWebSettings(kind, options))
  return function read (request, options) {
    let settings: WebSettings
    try {
      settings = settingsFor(options as AnyOptions)
    } catch (err) {
      // A bad option rejects, with the TypeError the factory would throw.
      return Promise.reject(err)
    }
    return readRequest(settings, request as never)
  }
}

/**
 * Validates a reader's options as its first read would (bodykit/hono's factories check them when the middleware is made).
 * @internal
 */
export function checkWebOptions (kind: ParserName, options: AnyOptions): void {
  createWebSettings(kind, options)
}

/**
 * The pieces of the Web build that bodykit/h3's Web build reads with (so that dist/h3-web.mjs imports dist/web.mjs
 * instead of carrying a second copy).
 * @internal
 */
export const webInternals = {
  createWebSettings,
  readRequest,
  knowsWebCharset,
  decodeWebBody,
  shared: { readContentType: readContentTypeLeniently, errors: { isBodyParserError: isBodyParserErrorGuard, unsupportedCharset, invalidBoundary, parseFailed, requestAborted }, createPoisoningGuard, readPoisoningAction }
}

/**
 * Reads and parses a JSON body as `json(options)` would. Resolves with the parsed body, or `undefined` when there is
 * nothing to parse (no body, another Content-Type, a body already read); with `schema`, with the schema's output.
 * @example
 * const body = await readJson(request, { limit: '1mb' })
 */
export const readJson = createReader('json') as WebReader<unknown, WebJsonOptions>

/**
 * Reads a body's bytes as `raw(options)` would, as a Uint8Array; `undefined` when there is nothing to read.
 * @example
 * const bytes = await readRaw(request, { type: 'application/pdf', limit: '10mb' })
 */
export const readRaw = createReader('raw') as WebReader<Uint8Array | undefined, WebRawOptions>

/**
 * Reads and decodes a text body as `text(options)` would; `undefined` when there is nothing to read.
 * @example
 * const csv = await readText(request, { type: 'text/csv' })
 */
export const readText = createReader('text') as WebReader<string | undefined, WebTextOptions>

/**
 * Reads and parses a form body as `urlencoded(options)` would; `undefined` when there is nothing to read.
 * @example
 * const form = await readUrlencoded(request, { extended: true })
 */
export const readUrlencoded = createReader('urlencoded') as WebReader<Record<string, unknown> | undefined, WebUrlencodedOptions>

/**
 * Reads a multipart form as `multipart(options)` would, files in memory: `{ fields, files }`, `undefined` when there
 * is nothing to read.
 * @example
 * const { fields, files } = await readMultipart(request, { files: { fileSizeLimit: '5mb' } })
 */
export const readMultipart = createReader('multipart') as WebFormReaderFunction
