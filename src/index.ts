// Default entry (`require('bodykit')`): the four parsers with body-parser 2.x behaviour.
import type { IncomingMessage } from 'node:http'
import { createFactories, type BodyParser } from './factories'
import type * as Options from './options'
import * as readers from './readers'
import { modern } from './variants'

const factories = createFactories(modern)

/**
 * body-parser 2.x's module is callable only to say the generic parser is gone; bodykit keeps that shape.
 * @throws always
 */
function bodykit (): never {
  throw new Error('The bodyParser() generic has been split into individual middleware to use instead.')
}

// The function merges with a namespace so `require('bodykit')` is callable and carries the factories.
// eslint-disable-next-line @typescript-eslint/no-namespace
namespace bodykit {
  /**
   * Parses JSON bodies (`application/json` by default) into `req.body`.
   * @example
   * app.post('/api', bodykit.json({ limit: '1mb' }), (req, res) => res.json(req.body))
   */
  export const json: (options?: Options.JsonOptions | null) => BodyParser = factories.json
  /**
   * Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`.
   * @example
   * app.post('/upload', bodykit.raw({ type: 'image/*', limit: '5mb' }), (req, res) => res.end(String(req.body.length)))
   */
  export const raw: (options?: Options.RawOptions | null) => BodyParser = factories.raw
  /**
   * Decodes `text/plain` bodies (by default) into a string on `req.body`.
   * @example
   * app.post('/note', bodykit.text({ defaultCharset: 'utf-8' }), (req, res) => res.send(req.body))
   */
  export const text: (options?: Options.TextOptions | null) => BodyParser = factories.text
  /**
   * Parses `application/x-www-form-urlencoded` bodies (by default) into an object on `req.body`.
   * @example
   * router.post('/login', bodykit.urlencoded({ extended: false }), (req, res) => res.send(req.body.user))
   */
  export const urlencoded: (options?: Options.UrlencodedOptions | null) => BodyParser = factories.urlencoded
  /**
   * Reads and parses a JSON body as `json(options)` does, without setting `req.body`: resolves with the body
   * (`undefined` when there is none to parse), rejects with the error the middleware passes to `next`.
   * @example
   * const body = await bodykit.readJson(req, { limit: '1mb', res })
   */
  export const readJson: (req: IncomingMessage, options?: readers.ReadJsonOptions | null) => Promise<unknown> = readers.readJson
  /**
   * Reads a body into a Buffer as `raw(options)` does (`undefined` when there is none to read).
   * @example
   * const pdf = await bodykit.readRaw(req, { type: 'application/pdf', limit: '10mb', res })
   */
  export const readRaw: (req: IncomingMessage, options?: readers.ReadRawOptions | null) => Promise<Buffer | undefined> = readers.readRaw
  /**
   * Reads and decodes a text body as `text(options)` does (`undefined` when there is none to read).
   * @example
   * const csv = await bodykit.readText(ctx.req, { type: 'text/csv', res: ctx.res })
   */
  export const readText: (req: IncomingMessage, options?: readers.ReadTextOptions | null) => Promise<string | undefined> = readers.readText
  /**
   * Reads and parses a form body as `urlencoded(options)` does (`undefined` when there is none to read).
   * @example
   * const form = await bodykit.readUrlencoded(req, { extended: true, res })
   */
  export const readUrlencoded: (req: IncomingMessage, options?: readers.ReadUrlencodedOptions | null) => Promise<Record<string, unknown> | undefined> = readers.readUrlencoded
  export type Middleware = BodyParser
  export type JsonOptions = Options.JsonOptions
  export type RawOptions = Options.RawOptions
  export type TextOptions = Options.TextOptions
  export type UrlencodedOptions = Options.UrlencodedOptions
  export type PoisoningAction = Options.PoisoningAction
  export type RawBodyRequest<T extends IncomingMessage = IncomingMessage> = Options.RawBodyRequest<T>
  export type ReadOptions = readers.ReadOptions
  export type ReadJsonOptions = readers.ReadJsonOptions
  export type ReadRawOptions = readers.ReadRawOptions
  export type ReadTextOptions = readers.ReadTextOptions
  export type ReadUrlencodedOptions = readers.ReadUrlencodedOptions
}

export = bodykit

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { json } from 'bodykit'` works.
const { json, raw, text, urlencoded } = factories
const { readJson, readRaw, readText, readUrlencoded } = readers
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { json, raw, text, urlencoded, readJson, readRaw, readText, readUrlencoded })
