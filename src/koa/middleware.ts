// bodyParser()'s middleware: the libraries' rules for which requests to read, one read on the pipeline, the body set where
// Koa apps look for it, and refusals as the libraries' users see them.
import { isBodyParserError } from '../errors'
import { validateBody } from '../body-rules'
import { readWithSettings } from '../readers'
import { takeRawBytes, type KoaBody } from './reading'
import type { KoaSettings } from './settings'
import type { KoaContext, KoaMiddleware } from './types'

/** What @koa/bodyparser 6 answers, with 499, for a request whose stream closed before it ran. */
const CLOSED_REQUEST = 'Request already closed'

const NO_BYTES = Buffer.alloc(0)

/** Builds the middleware over validated settings. */
export function createKoaMiddleware (settings: KoaSettings): KoaMiddleware {
  const { methods, patchNode, takesNodeBody, answersClosedRequest, onError, rawBuffer, schema } = settings

  /** Requests the libraries leave alone: a method not parsed (6), a body already there (or on `ctx.req`, with `patchNode`). */
  function isLeftAlone (ctx: KoaContext): boolean {
    return (methods !== null && !methods.has(ctx.method.toUpperCase())) ||
      (patchNode && ctx.req.body !== undefined) ||
      ctx.request.body !== undefined
  }

  /** Sets the body (and, with `patchNode`, on `ctx.req` too); `rawBody` only where nothing set it before. */
  function setBody (ctx: KoaContext, parsed: unknown, raw: string | undefined): void {
    if (patchNode) {
      // An app may declare Node's `rawBody` as another library's (a Buffer): these are @koa/bodyparser's fields.
      const req: { body?: unknown, rawBody?: unknown } = ctx.req
      req.body = parsed
      if (req.rawBody === undefined) req.rawBody = raw
    }
    ctx.request.body = parsed
    if (ctx.request.rawBody === undefined) ctx.request.rawBody = raw
  }

  /** Reads the body of the kind the request's type picks, with its text; `{}` and no text when no enabled kind takes it. */
  async function readBody (ctx: KoaContext): Promise<KoaBody | { parsed: unknown, raw: undefined }> {
    const read = settings.pickRead(ctx)
    if (read === null) return { parsed: {}, raw: undefined }
    let body: KoaBody | undefined
    try {
      body = await readWithSettings(read, ctx.req, ctx.res) as KoaBody | undefined
    } finally {
      // Also for a refused body: a webhook logs what it refused.
      if (rawBuffer) ctx.request.rawBuffer = takeRawBytes(ctx.req) ?? NO_BYTES
    }
    // No body to read (a GET without one): co-body reads an empty text, so the body is the kind's parse of ''.
    return body ?? read.parse('' as string & Buffer, null) as KoaBody
  }

  /** The schema's output for a body; on a refusal, no body is left on `ctx.request.body` for the next middleware. */
  async function check (ctx: KoaContext, body: unknown): Promise<unknown> {
    try {
      return await validate(schema as NonNullable<typeof schema>, body)
    } catch (err) {
      ctx.request.body = undefined
      throw err
    }
  }

  return async function bodyParser (ctx, next) {
    if (ctx.disableBodyParser) {
      await next()
      return
    }
    try {
      if (isLeftAlone(ctx)) {
        if (schema !== null) ctx.request.body = await check(ctx, ctx.request.body)
      } else if (takesNodeBody && ctx.req.body !== undefined) {
        ctx.request.body = schema === null ? ctx.req.body : await check(ctx, ctx.req.body)
      } else if (answersClosedRequest && ctx.req.closed) {
        ctx.status = 499
        ctx.body = CLOSED_REQUEST
        return
      } else {
        const { parsed, raw } = await readBody(ctx)
        setBody(ctx, schema === null ? parsed : await check(ctx, parsed), raw)
      }
    } catch (err) {
      const error = asTheLibrariesError(err, ctx)
      if (onError === null) throw error
      await handled(onError(error as Error, ctx))
    }
    await next()
  }
}

/**
 * What a user hook returned, waited for when it is a promise: an async hook's rejection is then the request's error
 * (500, or the status it carries), where the libraries leave it unhandled.
 */
export function handled (result: unknown): Promise<void> | undefined {
  return isThenable(result) ? Promise.resolve(result).then(() => {}) : undefined
}

function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function'
}

/** The validation stage of the pipeline, as a promise: the schema's output, or its refusal. */
function validate (schema: NonNullable<KoaSettings['schema']>, body: unknown): Promise<unknown> {
  return new Promise((resolve, reject) => { validateBody(schema, body, reject, resolve) })
}

/**
 * compat(koa): co-body's own errors and inflation's carry no `expose`, so Koa answers them with the status's text
 * (`Bad Request`, `Unsupported Media Type`), and inflation names the encoding as sent; raw-body's errors (413, the
 * length and abort 400s) are bodykit's as they are. bodykit's `type` stays on each.
 */
export function asTheLibrariesError (err: unknown, ctx: KoaContext): unknown {
  if (!isBodyParserError(err)) return err
  const error = err as { type?: string, message: string, expose: boolean, headers?: Record<string, unknown> }
  // A body too large to read off closes its connection after the answer; Koa's error handler removes the headers set
  // before it and sets the error's own, so the client is told through those.
  if (ctx.res.getHeader('connection') === 'close') error.headers = { ...error.headers, connection: 'close' }
  if (error.type === 'encoding.unsupported') {
    error.message = 'Unsupported Content-Encoding: ' + String(ctx.req.headers['content-encoding'])
    error.expose = false
  } else if (error.type === 'entity.parse.failed' || error.type === undefined) {
    // A damaged compressed body (zlib's error, no type) is the client's 400, where co-body's is a 500 (docs/koa.md).
    error.expose = false
  }
  return err
}
