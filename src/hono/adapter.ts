// bodykit/hono's middleware, built over a build's promise readers (the Node build's or the Web build's) for a given HTTPException class (the entries pass Hono's own).
import type { Env, Input, MiddlewareHandler, ValidationTargets } from 'hono'
import type { HTTPException } from 'hono/http-exception'
import type { AnyOptions, ReadJsonOptions, ReadMultipartOptions, ReadRawOptions, ReadTextOptions, ReadUrlencodedOptions, StandardSchemaV1 } from '../options'
import type { BodyFor, UploadedFile, WebRequest, WithSchema } from '../types'
import type { ParserName } from '../variants'

/** Options of `json()`: those of `readJson()` without `res` (a Hono handler has no Node response). */
export type HonoJsonOptions = Omit<ReadJsonOptions, 'res'>
/** Options of `raw()`: those of `readRaw()` without `res`. */
export type HonoRawOptions = Omit<ReadRawOptions, 'res'>
/** Options of `text()`: those of `readText()` without `res`. */
export type HonoTextOptions = Omit<ReadTextOptions, 'res'>
/** Options of `urlencoded()`: those of `readUrlencoded()` without `res`. */
export type HonoUrlencodedOptions = Omit<ReadUrlencodedOptions, 'res'>
/** Options of `multipart()`: those of `readMultipart()` without `res` (disk files are removed once the handler has returned). */
export type HonoMultipartOptions = Omit<ReadMultipartOptions, 'res'>

/** The input type of a schema of type `S` (what Hono's RPC client sends), else `Fallback`. */
export type SchemaInputFor<S, Fallback> = [S] extends [undefined]
  ? Fallback
  : StandardSchemaV1 extends S
    ? Fallback
    : S extends { readonly '~standard': { readonly types?: { readonly input: infer In } | undefined } } ? In : Fallback

/** What a body middleware declares to Hono for `c.req.valid(target)`: `In` for the RPC client, `Out` for the handler. */
export interface Validated<Target extends 'json' | 'form', In, Out> extends Input {
  in: { [K in Target]: In }
  out: { [K in Target]: Out }
}

/** The context variables `text()` and `raw()` set: `c.var.body`. */
export interface BodyVariables<Body> extends Env {
  Variables: { body: Body }
}

/** The context variable `multipart()` sets besides `c.req.valid('form')`: `c.var.files`. */
export interface FilesVariables<File = UploadedFile> extends Env {
  Variables: { files: File[] }
}

/**
 * The five Hono middleware factories. `Bytes` and `File` are what the build reads bytes into: Node's Buffer and
 * UploadedFile, or the Web build's Uint8Array and its in-memory file.
 */
export interface HonoParsers<Bytes = Buffer, File = UploadedFile> {
  /**
   * Reads a JSON body (`application/json` by default) as `readJson()` does; the handler gets it as
   * `c.req.valid('json')` (`undefined` when there was nothing to read), or the `schema`'s output, typed as it.
   */
  json: <S extends StandardSchemaV1 | undefined = undefined, E extends Env = Env, P extends string = string>
  (options?: WithSchema<HonoJsonOptions, S> | null) => MiddlewareHandler<E, P, Validated<'json', SchemaInputFor<S, unknown>, BodyFor<S, unknown>>>
  /**
   * Reads a form (`application/x-www-form-urlencoded` by default) as `readUrlencoded()` does; the handler gets it
   * as `c.req.valid('form')` (`undefined` when there was nothing to read), or the `schema`'s output.
   */
  urlencoded: <S extends StandardSchemaV1 | undefined = undefined, E extends Env = Env, P extends string = string>
  (options?: WithSchema<HonoUrlencodedOptions, S> | null) => MiddlewareHandler<E, P, Validated<'form', SchemaInputFor<S, ValidationTargets['form']>, BodyFor<S, Record<string, unknown> | undefined>>>
  /**
   * Reads a `multipart/form-data` form as `readMultipart()` does: its fields (what `schema` checks) are
   * `c.req.valid('form')`, as for `urlencoded()`, and its files are `c.var.files` (`[]` when there are none).
   */
  multipart: <S extends StandardSchemaV1 | undefined = undefined, P extends string = string>
  (options?: WithSchema<HonoMultipartOptions, S> | null) => MiddlewareHandler<FilesVariables<File>, P, Validated<'form', SchemaInputFor<S, ValidationTargets['form']>, BodyFor<S, Record<string, unknown> | undefined>>>
  /** Decodes a text body (`text/plain` by default) as `readText()` does, into `c.var.body`. */
  text: <S extends StandardSchemaV1 | undefined = undefined, P extends string = string>
  (options?: WithSchema<HonoTextOptions, S> | null) => MiddlewareHandler<BodyVariables<BodyFor<S, string | undefined>>, P>
  /** Reads a body (`application/octet-stream` by default) into a Buffer (the Web build: a Uint8Array) as `readRaw()` does, into `c.var.body`. */
  raw: <S extends StandardSchemaV1 | undefined = undefined, P extends string = string>
  (options?: WithSchema<HonoRawOptions, S> | null) => MiddlewareHandler<BodyVariables<BodyFor<S, Bytes | undefined>>, P>
}

/**
 * Hono's HTTPException class, as the entry that loaded it has it: the ES module's in `import`, the CommonJS
 * build's in `require` (two different classes, and `instanceof` in an app's `onError` needs the one it imported).
 * @internal
 */
export type HTTPExceptionClass = typeof HTTPException

/** The one shape every parser's reader has here: a Request in, a promise of the body out. */
type WebReader = (req: WebRequest, options?: AnyOptions) => Promise<unknown>

/**
 * What the middlewares are built over: a build's readers, its option check (the factories' TypeErrors, at creation),
 * and what is done with a form's files once the handler has returned (the Node build removes disk files).
 * @internal
 */
export interface HonoBuild {
  readonly readers: Readonly<Record<ParserName, WebReader>>
  readonly checkOptions: (kind: ParserName, options: AnyOptions) => void
  readonly releaseFiles: (files: readonly unknown[]) => void
}

/** Hands a read body to the handler's context. Returns files to release after the handler. */
type Deliver = (c: Parameters<MiddlewareHandler>[0], body: unknown) => readonly unknown[] | undefined | void

/** The status and message a reader's rejection becomes, as http-errors carries them. */
interface ErrorLike { status?: unknown, expose?: unknown, message?: unknown }

/**
 * Builds the five middlewares around `HTTPException`, over a build's readers.
 * @internal
 */
export function createHonoParsers<Bytes, File> (HTTPExceptionClass: HTTPExceptionClass, build: HonoBuild): HonoParsers<Bytes, File> {
  /** A reader's rejection as Hono's HTTPException: its status (500 for anything else), its message only when exposable. */
  function toHttpException (err: unknown): HTTPException {
    const { status, expose, message } = (err ?? {}) as ErrorLike
    const code = typeof status === 'number' && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500
    // A 5xx message can name internals (a schema's crash): it stays on `cause`, for the app's onError.
    const shown = expose === true && code < 500 && typeof message === 'string' ? message : undefined
    return new HTTPExceptionClass(code as HTTPException['status'], { message: shown, cause: err })
  }

  /** Validates options now, as the middleware factories do, and returns them as the reader will get them on every request. */
  function prepare (kind: ParserName, options: Record<string, unknown> | null | undefined): AnyOptions {
    if (options == null) return undefined
    // `res` has no meaning here: a Hono handler has no Node response to pass to `verify` or to close.
    const { res: _res, ...rest } = options
    build.checkOptions(kind, rest)
    return rest
  }

  /**
   * One middleware reading `c.req.raw` with `read` and handing the body to `deliver` (which may return files to
   * remove once the handler has returned); a rejection becomes an HTTPException and the handler does not run.
   */
  function createMiddleware (name: string, read: WebReader, options: AnyOptions, deliver: Deliver): MiddlewareHandler {
    const middleware: MiddlewareHandler = async (c, next) => {
      let body: unknown
      try {
        body = await read(c.req.raw as WebRequest, options)
      } catch (err) {
        throw toHttpException(err)
      }
      const files = deliver(c, body)
      if (files === undefined) {
        await next()
        return
      }
      try {
        await next()
      } finally {
        // As multipart() does once the response has finished: the disk files the handler did not move are removed.
        build.releaseFiles(files)
      }
    }
    // Hono shows no names, but a stack trace does: one name per parser, as the Express middlewares have.
    Object.defineProperty(middleware, 'name', { value: name })
    return middleware
  }

  const { readers } = build
  return {
    json: (options) => createMiddleware('jsonParser', readers.json, prepare('json', options), (c, body) => {
      c.req.addValidatedData('json', body as object)
    }),
    urlencoded: (options) => createMiddleware('urlencodedParser', readers.urlencoded, prepare('urlencoded', options), (c, body) => {
      c.req.addValidatedData('form', body as object)
    }),
    text: (options) => createMiddleware('textParser', readers.text, prepare('text', options), (c, body) => {
      c.set('body', body)
    }),
    raw: (options) => createMiddleware('rawParser', readers.raw, prepare('raw', options), (c, body) => {
      c.set('body', body)
    }),
    multipart: (options) => createMiddleware('multipartParser', readers.multipart, prepare('multipart', options), (c, result) => {
      // The reader resolves `{ fields, files }`, or `undefined` when there was no form to read and no schema.
      const form = result as { fields: unknown, files: unknown[] } | undefined
      c.req.addValidatedData('form', form?.fields as object)
      const files = form?.files ?? []
      c.set('files', files)
      return files
    })
  }
}
