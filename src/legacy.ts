// Legacy entry (`require('bodykit/legacy')`): the four parsers with body-parser 1.x behaviour, and its generic.
import type { IncomingMessage } from 'node:http'
import { createFactories, type BodyParser } from './factories'
import type * as Options from './options'
import { legacy } from './variants'

const factories = createFactories(legacy)

/** Options of the deprecated generic parser: those of json and urlencoded, shared by both. */
type GenericOptions = Omit<Options.JsonOptions, 'type' | 'defaultCharset'> & Omit<Options.LegacyUrlencodedOptions, 'type'> & { type?: unknown }

let warnedGeneric = false

/**
 * body-parser 1.x's deprecated generic: json, then urlencoded, sharing every option except `type`,
 * which each resets to its own default.
 * @deprecated use the individual json and urlencoded middlewares
 */
function bodykitLegacy (options?: GenericOptions | null): BodyParser {
  if (!warnedGeneric) {
    warnedGeneric = true
    process.emitWarning('bodyParser: use individual json/urlencoded middlewares', 'DeprecationWarning', 'BODYKIT_GENERIC')
  }
  // compat(v1): the options object stays the prototype, so inherited options are read as 1.x reads them.
  const shared = Object.create(options || null, {
    type: { configurable: true, enumerable: true, value: undefined, writable: true }
  })
  const parseUrlencoded = factories.urlencoded(shared)
  const parseJson = factories.json(shared)
  return function bodyParser (req, res, next) {
    parseJson(req, res, (err) => {
      if (err) {
        next(err)
        return
      }
      parseUrlencoded(req, res, next)
    })
  }
}

// The function merges with a namespace so `require('bodykit/legacy')` is callable and carries the factories.
// eslint-disable-next-line @typescript-eslint/no-namespace
namespace bodykitLegacy {
  /**
   * Parses JSON bodies (`application/json` by default) into `req.body`, as body-parser 1.x.
   * @example
   * app.use(require('bodykit/legacy').json())
   */
  export const json: (options?: Options.JsonOptions | null) => BodyParser = factories.json
  /**
   * Reads `application/octet-stream` bodies (by default) into a Buffer on `req.body`, as body-parser 1.x.
   * @example
   * app.post('/upload', legacy.raw({ limit: '5mb' }), handler)
   */
  export const raw: (options?: Options.RawOptions | null) => BodyParser = factories.raw
  /**
   * Decodes `text/plain` bodies (by default) into a string on `req.body`, as body-parser 1.x.
   * @example
   * app.post('/note', legacy.text(), handler)
   */
  export const text: (options?: Options.TextOptions | null) => BodyParser = factories.text
  /**
   * Parses form bodies into `req.body`, as body-parser 1.x (`extended` defaults to true, deprecated).
   * @example
   * app.use(legacy.urlencoded({ extended: false }))
   */
  export const urlencoded: (options?: Options.LegacyUrlencodedOptions | null) => BodyParser = factories.urlencoded as (options?: Options.LegacyUrlencodedOptions | null) => BodyParser
  export type Middleware = BodyParser
  export type JsonOptions = Options.JsonOptions
  export type RawOptions = Options.RawOptions
  export type TextOptions = Options.TextOptions
  export type UrlencodedOptions = Options.LegacyUrlencodedOptions
  export type PoisoningAction = Options.PoisoningAction
  export type RawBodyRequest<T extends IncomingMessage = IncomingMessage> = Options.RawBodyRequest<T>
}

export = bodykitLegacy

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { json } from 'bodykit/legacy'` works.
const { json, raw, text, urlencoded } = factories
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { json, raw, text, urlencoded })
