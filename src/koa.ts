// Entry `bodykit/koa`: koa-bodyparser 4's and @koa/bodyparser 6's `bodyParser(options)` as Koa middleware over the promise readers' pipeline.
import { createKoaMiddleware } from './koa/middleware'
import { createKoaSettings } from './koa/settings'
import type * as KoaTypes from './koa/types'
import { UnsupportedBodyTypeError as UnsupportedBodyTypeErrorClass } from './koa/unsupported-body-type-error'

/**
 * Koa middleware that reads JSON and form bodies (text and XML with `enableTypes`) into `ctx.request.body`, and the
 * text they were decoded from into `ctx.request.rawBody`, as koa-bodyparser 4 does; given any of @koa/bodyparser 6's
 * own options (`parsedMethods`, `jsonStrict`, `onError`, `patchNode`, `enableRawChecking`), as that one does. A
 * refused body throws an error with its `status` (413, 415, 400...), the libraries' message and bodykit's `type`;
 * bad options throw now.
 * @example
 * const bodyParser = require('bodykit/koa') // was: require('koa-bodyparser')
 * app.use(bodyParser({ jsonLimit: '100kb' }))
 * app.use((ctx) => { ctx.body = { received: ctx.request.body } })
 */
function bodyParser (options?: bodyParser.Options | null): bodyParser.Middleware {
  return createKoaMiddleware(createKoaSettings(options))
}

// The function merges with a namespace so `require('bodykit/koa')` is callable, as koa-bodyparser's module is, and
// carries @koa/bodyparser's named exports. The namespace is ambient (no code): its values are assigned below.
declare namespace bodyParser {
  /**
   * The same function, under the name @koa/bodyparser 6 exports it by (a named import, or `require('bodykit/koa').bodyParser`).
   * @example
   * app.use(bodyParser({ parsedMethods: ['POST', 'PUT', 'PATCH'], enableTypes: ['json'] }))
   */
  export function bodyParser (options?: Options | null): Middleware

  /**
   * Thrown by `bodyParser()` for a kind of body it does not know in `enableTypes` or `extendTypes` (or, with
   * @koa/bodyparser 6's options, an `extendTypes` value that is not a list), as @koa/bodyparser 6's.
   */
  export class UnsupportedBodyTypeError extends Error {
    constructor (wrongType: string)
  }

  /** Options of `bodyParser()`: koa-bodyparser 4's or @koa/bodyparser 6's, and bodykit's own. */
  export type Options = KoaTypes.KoaBodyParserOptions
  /** The middleware `bodyParser()` returns. */
  export type Middleware = KoaTypes.KoaMiddleware
  /** A Koa context as the middleware uses it (Koa 2's and 3's have it). */
  export type Context = KoaTypes.KoaContext
  /** A Koa request as the middleware uses it: `body`, `rawBody`, `rawBuffer`. */
  export type Request = KoaTypes.KoaRequest
  /** The kinds of body: `'json'`, `'form'`, `'text'`, `'xml'`. */
  export type BodyType = KoaTypes.KoaBodyType
}

Object.assign(bodyParser, { bodyParser, UnsupportedBodyTypeError: UnsupportedBodyTypeErrorClass })

export = bodyParser

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { bodyParser } from 'bodykit/koa'` works.
const { UnsupportedBodyTypeError } = bodyParser
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { bodyParser, UnsupportedBodyTypeError })
