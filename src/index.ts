// Default entry (`require('bodykit')`): the four parsers with body-parser 2.x behaviour.
import { createFactories, type BodyParser } from './factories'
import type * as Options from './options'
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
  export type Middleware = BodyParser
  export type JsonOptions = Options.JsonOptions
  export type RawOptions = Options.RawOptions
  export type TextOptions = Options.TextOptions
  export type UrlencodedOptions = Options.UrlencodedOptions
}

export = bodykit

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { json } from 'bodykit'` works.
const { json, raw, text, urlencoded } = factories
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { json, raw, text, urlencoded })
