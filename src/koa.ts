// Entry `bodykit/koa`: koa-bodyparser 4's and @koa/bodyparser 6's `bodyParser(options)` as Koa middleware over the promise readers' pipeline.
import { HttpMethodEnum as HttpMethodEnumValues } from './koa/http-methods'
import { koaBodyparser6 } from './koa/dialects'
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
   * @koa/bodyparser 6's `bodyParser`, under the name it exports it by (a named import, or `require('bodykit/koa').bodyParser`):
   * with none of either library's own options, it reads as @koa/bodyparser 6 does (POST, PUT and PATCH only, 499 for
   * a request closed before it was read, its `extendTypes` checks); koa-bodyparser 4's own options pick 4's behaviour.
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

  /**
   * Koa middleware as koa-body 7's and 8's `koaBody(options)`: JSON, form and text bodies (and, with `multipart: true`,
   * multipart forms, files on disk) into `ctx.request.body`, files into `ctx.request.files` with formidable's fields.
   * Multipart limits are bodykit's finite defaults (10 files of 10 MiB), not formidable's; bad options throw now.
   * @example
   * const { koaBody } = require('bodykit/koa') // was: require('koa-body')
   * app.use(koaBody({ multipart: true, formidable: { maxFileSize: 5 * 1024 * 1024 } }))
   * app.use((ctx) => { ctx.body = { fields: ctx.request.body, avatar: ctx.request.files?.avatar } })
   */
  export function koaBody (options?: KoaBodyOptions | null): KoaBodyMiddleware

  /** koa-body's methods, for `parsedMethods`. */
  export enum HttpMethodEnum {
    POST = 'POST',
    GET = 'GET',
    PUT = 'PUT',
    PATCH = 'PATCH',
    DELETE = 'DELETE',
    HEAD = 'HEAD'
  }

  /** Options of `koaBody()`: koa-body 7's and 8's (`parsedMethods` takes `HttpMethodEnum` values or their strings). */
  export type KoaBodyOptions = Omit<KoaTypes.KoaBodyOptions, 'parsedMethods'> & {
    /**
     * The methods whose bodies are read; other requests are left alone.
     * @default [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH]
     */
    parsedMethods?: ReadonlyArray<HttpMethodEnum | KoaTypes.KoaBodyMethod> | undefined
  }
  /** The `formidable` options `koaBody()` reads. */
  export type KoaBodyFormidableOptions = KoaTypes.KoaBodyFormidableOptions
  /** The middleware `koaBody()` returns. */
  export type KoaBodyMiddleware = KoaTypes.KoaBodyMiddleware
  /** A file on `ctx.request.files`, with formidable's fields. */
  export type KoaBodyFile = KoaTypes.KoaBodyFile
  /** `ctx.request.files`: one file or an array of them per field. */
  export type KoaBodyFiles = KoaTypes.KoaBodyFiles

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

/** koaBody(): koa-body's options over the same pipeline. Its code (and the multipart stage) loads on the first call. */
function koaBody (options?: bodyParser.KoaBodyOptions | null): bodyParser.KoaBodyMiddleware {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createKoaBody } = require('./koa/koa-body') as typeof import('./koa/koa-body')
  return createKoaBody(options as KoaTypes.KoaBodyOptions | null | undefined)
}

/** The named export: as the module itself, but @koa/bodyparser 6's unless given koa-bodyparser 4's own options. */
const namedBodyParser = function bodyParser (options?: bodyParser.Options | null): bodyParser.Middleware {
  return createKoaMiddleware(createKoaSettings(options, koaBodyparser6))
}

Object.assign(bodyParser, { bodyParser: namedBodyParser, UnsupportedBodyTypeError: UnsupportedBodyTypeErrorClass, koaBody, HttpMethodEnum: HttpMethodEnumValues })

export = bodyParser

// Lists the export names for Node's ESM loader (cjs-module-lexer), so `import { bodyParser } from 'bodykit/koa'` works.
const { UnsupportedBodyTypeError, HttpMethodEnum } = bodyParser
// eslint-disable-next-line @typescript-eslint/no-unused-expressions, no-constant-binary-expression
0 && (module.exports = { bodyParser: namedBodyParser, UnsupportedBodyTypeError, koaBody, HttpMethodEnum })
