// Koa apps for the bodykit/koa suites: Koa 2 and 3 over real HTTP, a recorder of what each request ended with, and a plain client.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { createRequire } from 'node:module'
import type { TestContext } from 'node:test'
import type Koa from 'koa'
import { encode } from '../helpers/server'

const load = createRequire(__filename)

/** A Koa middleware as these tests pass them around (the libraries' and bodykit's). */
export type KoaMiddleware = (ctx: Koa.Context, next: () => Promise<unknown>) => Promise<unknown>
export type MiddlewareFactory = (options?: Record<string, unknown>) => KoaMiddleware

/** Both Koa majors the entry supports: Koa 2 (an npm alias) and Koa 3. */
export const KOA_MAJORS: ReadonlyArray<{ name: string, Koa: typeof Koa }> = [
  { name: 'Koa 2', Koa: load('koa2') as typeof Koa },
  { name: 'Koa 3', Koa: load('koa') as typeof Koa }
]

// The libraries are loaded untyped: @koa/bodyparser's declarations give every IncomingMessage a `rawBody: string`,
// which would retype bodykit's own sources in this program.
/** koa-bodyparser 4's factory. */
export const koaBodyparser4 = load('koa-bodyparser') as MiddlewareFactory
/** @koa/bodyparser 6's factory. */
export const koaBodyparser6 = (load('@koa/bodyparser') as { bodyParser: MiddlewareFactory }).bodyParser

/** What a request ended with on the server: the error the middleware threw, or the status and body the app answered. */
export interface Outcome {
  status: number
  body?: unknown
  error?: { name: unknown, message: unknown, status: unknown, expose: unknown, type?: unknown }
}

export interface KoaApp {
  port: number
  /** The outcome of the request sent with `x-id: id`, once the app is done with it. */
  outcome: (id: string) => Promise<Outcome>
}

/**
 * Starts a Koa app on 127.0.0.1: a recorder, the test hooks (headers that set `ctx.disableBodyParser`, a body, a
 * rawBody or `ctx.req.body` before the parser, or wait for the request to close), `middleware`, and a handler that
 * answers with what the parser set (or `handler`). Koa's own error handler answers refusals. Closed after the test.
 */
export async function startKoaApp (t: TestContext, KoaClass: typeof Koa, middleware: KoaMiddleware, handler?: (ctx: Koa.Context) => void): Promise<KoaApp> {
  const app = new KoaClass()
  // Koa logs every 5xx it answers: the answers are what is compared here.
  app.silent = true
  const outcomes = new Map<string, Outcome>()
  const waiters = new Map<string, (outcome: Outcome) => void>()
  const record = (id: string, outcome: Outcome): void => {
    outcomes.set(id, outcome)
    waiters.get(id)?.(outcome)
  }
  app.use(async (ctx, next) => {
    const id = ctx.get('x-id')
    try {
      await next()
      record(id, { status: ctx.status, body: ctx.body })
    } catch (err) {
      const e = err as Record<string, unknown>
      record(id, { status: typeof e.status === 'number' ? e.status : 500, error: { name: e.name, message: e.message, status: e.status, expose: e.expose, type: e.type } })
      throw err
    }
  })
  app.use(async (ctx, next) => {
    if (ctx.get('x-disable') !== '') ctx.disableBodyParser = true
    const request = ctx.request as Koa.Request & { body?: unknown, rawBody?: unknown }
    if (ctx.get('x-preset-body') !== '') request.body = JSON.parse(ctx.get('x-preset-body'))
    if (ctx.get('x-preset-raw') !== '') request.rawBody = ctx.get('x-preset-raw')
    if (ctx.get('x-preset-req-body') !== '') (ctx.req as { body?: unknown }).body = JSON.parse(ctx.get('x-preset-req-body'))
    if (ctx.get('x-wait-close') !== '' && !ctx.req.closed) await new Promise((resolve) => ctx.req.once('close', resolve))
    await next()
  })
  app.use(middleware)
  app.use((ctx) => {
    if (handler) return handler(ctx)
    ctx.body = describeContext(ctx)
  })
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => {
    server.closeAllConnections()
    server.close()
  })
  return {
    port: (server.address() as AddressInfo).port,
    outcome: (id) => outcomes.has(id) ? Promise.resolve(outcomes.get(id) as Outcome) : new Promise((resolve) => waiters.set(id, resolve))
  }
}

/** What the parser left on the context, as JSON can carry it (undefined and Buffers tagged, own `__proto__` keys kept). */
export function describeContext (ctx: Koa.Context): Record<string, unknown> {
  const request = ctx.request as Koa.Request & { body?: unknown, rawBody?: unknown, rawBuffer?: unknown }
  const req = ctx.req as { body?: unknown, rawBody?: unknown }
  return {
    body: encode(request.body),
    rawBody: encode(request.rawBody),
    has: ['body', 'rawBody'].filter((key) => key in request),
    ...('body' in req || 'rawBody' in req ? { req: { body: encode(req.body), rawBody: encode(req.rawBody) } } : {})
  }
}

export interface KoaRequest {
  method?: string
  headers?: Record<string, string>
  /** A string or Buffer goes with its Content-Length; a list of pieces is sent chunked. */
  body?: string | Buffer | ReadonlyArray<string | Buffer>
}

/** What a client got: the status and the body's text. */
export interface Answer {
  status: number
  text: string
}

/** Sends one request with node:http, without keep-alive, and reads the answer. */
export function send (port: number, id: string, request: KoaRequest): Promise<Answer> {
  const { method = 'POST', body } = request
  const headers: Record<string, string | number> = { ...request.headers, 'x-id': id }
  const chunked = Array.isArray(body)
  if (body !== undefined && !chunked) headers['content-length'] = Buffer.byteLength(body as string | Buffer)
  if (chunked) headers['transfer-encoding'] = 'chunked'
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: '/', headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => { resolve({ status: res.statusCode as number, text: Buffer.concat(chunks).toString('utf8') }) })
      res.on('error', reject)
    })
    // A refusal answered before the whole body was sent may reset the upload: the answer still counts.
    req.on('error', reject)
    if (chunked) {
      for (const piece of body as ReadonlyArray<string | Buffer>) req.write(piece)
      req.end()
    } else {
      req.end(body as string | Buffer | undefined)
    }
  })
}
