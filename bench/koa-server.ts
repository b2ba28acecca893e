// The server side of the koa section: one Koa app per target (koa-bodyparser 4, or bodykit/koa from dist/, else src/),
// JSON and form bodies read by the parser on every route, a constant reply (the parsed body once, on `x-echo`).
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Server } from 'node:http'
import { join } from 'node:path'
import type Koa from 'koa'

const load = createRequire(__filename)
const root = join(__dirname, '..')

/** The Koa middleware factories measured, by target id. */
export const KOA_TARGETS = ['koa-bodyparser', 'bodykit/koa'] as const
export type KoaTarget = typeof KOA_TARGETS[number]

type Factory = (options?: Record<string, unknown>) => Koa.Middleware

function factoryOf (target: KoaTarget): Factory {
  if (target === 'koa-bodyparser') return load('koa-bodyparser') as Factory
  const built = join(root, 'dist', 'koa.js')
  return load(existsSync(built) ? built : join(root, 'src', 'koa.ts')) as Factory
}

/** Starts the target's Koa app on 127.0.0.1 and counts the requests it answers. */
export function startKoaServer (target: KoaTarget, onListening: (server: Server) => void, onRequest: () => void): void {
  const KoaClass = load('koa') as typeof Koa
  const app = new KoaClass()
  app.use(factoryOf(target)())
  app.use((ctx) => {
    onRequest()
    const body = (ctx.request as Koa.Request & { body?: unknown }).body
    if (body === null || typeof body !== 'object' || Object.keys(body).length === 0) ctx.throw(500, 'no body parsed')
    ctx.body = ctx.get('x-echo') === '' ? 'ok' : JSON.stringify(body)
  })
  const server = app.listen(0, '127.0.0.1', () => { onListening(server) })
  server.keepAliveTimeout = 60_000
}
