// Each entry's errors through its framework's own error handling, in a real app over HTTP: the framework's default
// handler, and an app's handler that assigns its own status, exposure and message (as Koa's, Egg's and loggers do).
import assert from 'node:assert/strict'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, describe, it, type TestContext } from 'node:test'
import { serve } from '@hono/node-server'
import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import express5 from 'express'
import express4 from 'express-4'
import { Hono } from 'hono'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import bodykitMulter from '../../src/multer'
import bodyParser, { koaBody } from '../../src/koa'
import * as hono from '../../src/hono'
import * as nest from '../../src/nest'
import { KOA_MAJORS } from '../koa/apps'
import { defineController, defineModule } from '../nest/upload-apps'

const BOUNDARY = 'HandlersBoundary'
const FORM_TYPE = 'multipart/form-data; boundary=' + BOUNDARY
const BIG_FILE_FORM = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="avatar"; filename="a.txt"\r\n\r\n' + 'x'.repeat(500) + '\r\n--' + BOUNDARY + '--\r\n'
const BROKEN_FORM = '--' + BOUNDARY + '\r\nContent-Disposition: form-data; name="a"\r\nbroken header\r\n\r\n1\r\n--' + BOUNDARY + '--\r\n'

/** A request that an entry refuses, and the status that entry gives it. */
interface Refusal { route: string, contentType: string, body: string, status: number }

const JSON_REFUSALS: readonly Refusal[] = [
  { route: '/json', contentType: 'application/json', body: '{"a":', status: 400 },
  { route: '/json', contentType: 'application/json', body: JSON.stringify({ a: 'x'.repeat(200) }), status: 413 },
  { route: '/json', contentType: 'application/json; charset=koi8-x', body: '{}', status: 415 }
]
const FORM_REFUSALS: readonly Refusal[] = [
  { route: '/multipart', contentType: FORM_TYPE, body: BROKEN_FORM, status: 400 },
  { route: '/multipart', contentType: FORM_TYPE, body: BIG_FILE_FORM, status: 413 }
]
const MULTER_REFUSALS: readonly Refusal[] = [
  { route: '/multer', contentType: FORM_TYPE, body: BIG_FILE_FORM, status: 413 },
  { route: '/multer', contentType: FORM_TYPE, body: BROKEN_FORM, status: 400 },
  { route: '/multer-none', contentType: FORM_TYPE, body: BIG_FILE_FORM, status: 400 }
]

interface Answer { status: number, text: string }

function post (port: number, refusal: Refusal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: refusal.route, agent: false,
      headers: { 'content-type': refusal.contentType, 'content-length': Buffer.byteLength(refusal.body) }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode as number, text: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    req.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err) })
    req.end(refusal.body)
  })
}

/** What an app's error handler does to an error before it answers: its own status, exposure and message. */
function rewrite (err: unknown): void {
  const e = err as Record<string, unknown>
  e.status = 422
  e.statusCode = 422
  e.expose = true
  e.message = 'rewritten ' + String(e.status)
  e.type = 'app.rewritten'
}

/** Fails the test on any uncaught exception or unhandled rejection while it runs. */
function watchProcess (t: TestContext): unknown[] {
  const uncaught: unknown[] = []
  const record = (err: unknown): void => { uncaught.push(err) }
  process.on('uncaughtException', record)
  process.on('unhandledRejection', record)
  t.after(() => {
    process.off('uncaughtException', record)
    process.off('unhandledRejection', record)
  })
  return uncaught
}

async function listen (t: TestContext, listener: http.RequestListener): Promise<number> {
  const server = http.createServer(listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.close() })
  return (server.address() as AddressInfo).port
}

type Express = typeof express5

function expressApp (express: Express, entry: typeof bodykit, rewrites: boolean): http.RequestListener {
  const app = express()
  // Express logs every error its own handler answers, but in its test environment.
  app.set('env', 'test')
  app.post('/json', entry.json({ limit: 100 }), (_req, res) => { res.send('ok') })
  app.post('/multipart', bodykit.multipart({ files: { fileSizeLimit: 100 } }), (_req, res) => { res.send('ok') })
  app.post('/multer', bodykitMulter({ limits: { fileSize: 100 } }).single('avatar'), (_req, res) => { res.send('ok') })
  app.post('/multer-none', bodykitMulter().none(), (_req, res) => { res.send('ok') })
  if (rewrites) {
    app.use((err: unknown, _req: express5.Request, res: express5.Response, _next: express5.NextFunction) => {
      rewrite(err)
      const e = err as { status: number, message: string }
      res.status(e.status).send(e.message)
    })
  }
  return app as unknown as http.RequestListener
}

describe('errors through each framework\'s own error handling', () => {
  for (const [name, express] of [['Express 4', express4 as unknown as Express], ['Express 5', express5]] as const) {
    for (const [entryName, entry] of [['bodykit', bodykit], ['bodykit/legacy', legacy as unknown as typeof bodykit]] as const) {
      it(`${name}, ${entryName}: the default handler answers each error's status; an app's handler rewrites it`, async (t) => {
        const uncaught = watchProcess(t)
        const plain = await listen(t, expressApp(express, entry, false))
        const rewriting = await listen(t, expressApp(express, entry, true))
        for (const refusal of [...JSON_REFUSALS, ...FORM_REFUSALS, ...MULTER_REFUSALS]) {
          assert.equal((await post(plain, refusal)).status, refusal.status, refusal.route + ' ' + refusal.body.slice(0, 40))
          assert.deepEqual(await post(rewriting, refusal), { status: 422, text: 'rewritten 422' }, refusal.route)
        }
        assert.deepEqual(uncaught, [])
      })
    }
  }

  for (const { name, Koa } of KOA_MAJORS) {
    it(`${name}, bodyParser() and koaBody(): Koa's own handler assigns err.status; an app's middleware rewrites it`, async (t) => {
      const uncaught = watchProcess(t)
      const start = async (rewrites: boolean): Promise<number> => {
        const app = new Koa()
        app.silent = true
        if (rewrites) {
          app.use(async (_ctx, next) => {
            try {
              await next()
            } catch (err) {
              rewrite(err)
              throw err
            }
          })
        }
        const json = bodyParser({ jsonLimit: 100 })
        const named = bodyParser.bodyParser({ jsonLimit: 100 })
        const form = koaBody({ multipart: true, formidable: { maxFileSize: 100 } })
        app.use(async (ctx, next) => {
          const middleware = ctx.path === '/json' ? json : ctx.path === '/named' ? named : form
          await middleware(ctx, next)
        })
        app.use((ctx) => { ctx.body = 'ok' })
        return listen(t, app.callback())
      }
      const plain = await start(false)
      const rewriting = await start(true)
      // The Koa parsers check no charset unless asked (checkCharset), as the libraries.
      const json = JSON_REFUSALS.filter((refusal) => refusal.status !== 415)
      const refusals = [...json, ...json.map((refusal) => ({ ...refusal, route: '/named' })), ...FORM_REFUSALS]
      for (const refusal of refusals) {
        const answer = await post(plain, refusal)
        assert.equal(answer.status, refusal.status, refusal.route + ' ' + refusal.body.slice(0, 40))
        assert.deepEqual(await post(rewriting, refusal), { status: 422, text: 'rewritten 422' }, refusal.route)
      }
      assert.deepEqual(uncaught, [])
    })
  }

  it('Hono: onError may rewrite the HTTPException and the bodykit error it carries', async (t) => {
    const uncaught = watchProcess(t)
    const app = new Hono()
      .post('/json', hono.json({ limit: 100 }), (c) => c.text('ok'))
      .post('/multipart', hono.multipart({ files: { fileSizeLimit: 100 } }), (c) => c.text('ok'))
    app.onError((err, c) => {
      rewrite(err)
      rewrite(err.cause)
      return c.text(err.message, (err as unknown as { status: 422 }).status)
    })
    const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' })
    await new Promise<void>((resolve) => server.once('listening', resolve))
    t.after(() => { server.close() })
    const port = (server.address() as AddressInfo).port
    for (const refusal of [...JSON_REFUSALS, ...FORM_REFUSALS]) {
      assert.deepEqual(await post(port, refusal), { status: 422, text: 'rewritten 422' }, refusal.route)
    }
    assert.deepEqual(uncaught, [])
  })

  describe('Nest: an exception filter may rewrite what an upload interceptor throws', () => {
    @Catch()
    class RewritingFilter implements ExceptionFilter {
      catch (exception: unknown, host: ArgumentsHost): void {
        rewrite(exception)
        const res = host.switchToHttp().getResponse<http.ServerResponse>()
        res.writeHead(422).end((exception as { message: string }).message)
      }
    }
    const apps: Array<{ port: number, close: () => Promise<void> }> = []
    const start = async (rewrites: boolean): Promise<number> => {
      const controller = defineController('', [
        { path: 'multer', interceptors: [nest.FileInterceptor('avatar', { limits: { fileSize: 100 } })], params: [], handle: () => 'ok' },
        { path: 'multer-none', interceptors: [nest.NoFilesInterceptor()], params: [], handle: () => 'ok' }
      ])
      const app = await NestFactory.create(defineModule({ controllers: [controller] }), { logger: false })
      if (rewrites) app.useGlobalFilters(new RewritingFilter())
      await app.listen(0, '127.0.0.1')
      const server = app.getHttpServer() as http.Server
      apps.push({ port: (server.address() as AddressInfo).port, close: async () => { server.closeAllConnections(); await app.close() } })
      return (server.address() as AddressInfo).port
    }
    after(async () => { for (const app of apps) await app.close() })

    it('Nest\'s own filter answers each status; a filter of the app rewrites the exception', async (t) => {
      const uncaught = watchProcess(t)
      const plain = await start(false)
      const rewriting = await start(true)
      for (const refusal of MULTER_REFUSALS) {
        assert.equal((await post(plain, refusal)).status, refusal.status, refusal.route)
        assert.deepEqual(await post(rewriting, refusal), { status: 422, text: 'rewritten 422' }, refusal.route)
      }
      assert.deepEqual(uncaught, [])
    })
  })
})
