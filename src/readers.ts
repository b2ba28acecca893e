// The promise API (readJson, readRaw, readText, readUrlencoded, readMultipart): the middlewares' pipeline, for code that is not connect-style.
import type { IncomingMessage, ServerResponse } from 'http'
import { settingsPerOptions, type AnyOptions, type ReadJsonOptions, type ReadMultipartOptions, type ReadRawOptions, type ReadTextOptions, type ReadUrlencodedOptions } from './options'
import { readBody, type ReadSettings } from './read'
import { createReadSettings } from './read-settings'
import { loadDefinition } from './parsers/catalog'
import { isWebBodyUsed, isWebRequest, viewOfWebRequest } from './sources/web'
import type { FormReader, Reader, WebRequest } from './types'
import { modern, type ParserName, type Variant } from './variants'

/** The callback a reader passes to the pipeline as `next`: an error, or the parsed body (none when skipped). */
type ReadCallback = (err?: unknown, body?: unknown) => void

/**
 * The default entry's behaviour, except that `req.body` is never touched: the body goes to the reader's callback.
 * @internal
 */
export const untouched: Variant = {
  ...modern,
  // A Request's body read by something else (`bodyUsed`, or a reader holding it) counts as already read.
  isAlreadyRead: (req) => isWebBodyUsed(req) ?? modern.isAlreadyRead(req),
  prepareBody: () => {},
  // A request with nothing to parse resolves with `undefined`, so that is what a schema checks.
  currentBody: () => undefined,
  deliverBody: (_req, next, body) => { (next as ReadCallback)(null, body) },
  deliverForm: (_req, next, fields, files) => { (next as ReadCallback)(null, { fields, files: files ?? [] }) }
}

/**
 * The multipart reader's: a form is always `{ fields, files }`, so with a schema a form not read is the schema's
 * output for `undefined`, with no files (deliverBody is reached only for a request not read).
 * @internal
 */
export const untouchedForm: Variant = {
  ...untouched,
  deliverBody: (_req, next, fields) => { (next as ReadCallback)(null, { fields, files: [] }) }
}

type UntypedReader = (req: IncomingMessage | WebRequest, options?: AnyOptions) => Promise<unknown>

/**
 * One parser's reader: validated settings are cached per options object, so a shared object is validated once. The
 * parser's code loads on the first read.
 */
function createReader (kind: ParserName, variant = untouched): UntypedReader {
  const settingsFor = settingsPerOptions((options) => createReadSettings(loadDefinition(kind), options, variant))
  return function read (req, options) {
    let settings: ReadSettings
    try {
      settings = settingsFor(options)
    } catch (err) {
      // A bad option rejects, with the TypeError the factory would throw.
      return Promise.reject(err)
    }
    return readWithSettings(settings, req, options?.res as ServerResponse)
  }
}

/**
 * One read of the pipeline with settings fixed beforehand: resolves with what the variant delivers, rejects with
 * the error the middleware would pass to `next`. The readers' core, and framework adapters' (bodykit/koa).
 * @internal
 */
export function readWithSettings (settings: ReadSettings, req: IncomingMessage | WebRequest, res: ServerResponse | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const onRead: ReadCallback = (err, body) => {
      if (err) reject(err)
      else resolve(body)
    }
    // A Request is read through a view with a Node request's fields: the same pipeline, from another source.
    readBody(settings, isWebRequest(req) ? viewOfWebRequest(req) as unknown as IncomingMessage : req, res as ServerResponse, onRead)
  })
}

/**
 * Reads and parses a JSON body as `json(options)` would, without setting `req.body`. Resolves with the
 * parsed body, or `undefined` when there is nothing to parse (no body, another Content-Type, a request
 * already read); with `schema`, resolves with the schema's output for either (typed as it); rejects with
 * the error the middleware would pass to `next`.
 * @example
 * const body = await readJson(req, { limit: '1mb', res })
 */
export const readJson = createReader('json') as Reader<unknown, ReadJsonOptions>

/**
 * Reads a body into a Buffer as `raw(options)` would; `undefined` when there is nothing to read.
 * @example
 * const bytes = await readRaw(req, { type: 'application/pdf', limit: '10mb' })
 */
export const readRaw = createReader('raw') as Reader<Buffer | undefined, ReadRawOptions>

/**
 * Reads and decodes a text body as `text(options)` would; `undefined` when there is nothing to read.
 * @example
 * const csv = await readText(req, { type: 'text/csv' })
 */
export const readText = createReader('text') as Reader<string | undefined, ReadTextOptions>

/**
 * Reads and parses a form body as `urlencoded(options)` would; `undefined` when there is nothing to read.
 * @example
 * const form = await readUrlencoded(req, { extended: true })
 */
export const readUrlencoded = createReader('urlencoded') as Reader<Record<string, unknown> | undefined, ReadUrlencodedOptions>

/**
 * Reads a multipart form as `multipart(options)` would: resolves with `{ fields, files }` (`undefined` when there
 * is nothing to read; with `schema`, `{ fields: <its output for undefined>, files: [] }`). With `res`, disk files
 * are removed once the response has finished, as for the middleware; without it they are the caller's to move or
 * remove.
 * @example
 * const { fields, files } = await readMultipart(req, { files: { storage: 'disk' }, res })
 */
export const readMultipart = createReader('multipart', untouchedForm) as FormReader<ReadMultipartOptions>
