// Real NestJS 11 apps on Express for the tests: an echo controller, parsers chosen per app, one listening port each.
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { Body, Controller, HttpCode, Module, Post, Req, type MiddlewareConsumer } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import type { NestExpressApplication } from '@nestjs/platform-express'
import { encode } from '../helpers/server'

/** What a route answers: the body it got (tagged as test/helpers/server.ts tags it) and `req.rawBody`, if any. */
export interface Echo {
  body?: unknown
  nullPrototype?: true
  rawBody?: string
}

type ParamDecorator = (target: object, key: string | symbol | undefined, index: number) => void

/**
 * Decorates `name` of `controller` as a POST route at `path` answering 200. Decorators are applied as calls:
 * the tests run through esbuild, which has no decorator metadata, and Nest needs none for these.
 */
function post (controller: { prototype: object }, name: string, path: string, params: ParamDecorator[]): void {
  const descriptor = Object.getOwnPropertyDescriptor(controller.prototype, name) as PropertyDescriptor
  Post(path)(controller.prototype, name, descriptor)
  HttpCode(200)(controller.prototype, name, descriptor)
  params.forEach((param, index) => param(controller.prototype, name, index))
}

/** The request as a route sees it through `@Body()` and `@Req()`. */
function echo (body: unknown, req: { rawBody?: unknown }): Echo {
  const answer: Echo = {}
  if (body !== undefined) answer.body = encode(body)
  if (body !== null && typeof body === 'object' && Object.getPrototypeOf(body) === null) answer.nullPrototype = true
  if (Buffer.isBuffer(req.rawBody)) answer.rawBody = req.rawBody.toString('base64')
  return answer
}

/** `POST /echo` and `POST /large`, both answering {@link echo}. */
class EchoController {
  echo (body: unknown, req: { rawBody?: unknown }): Echo {
    return echo(body, req)
  }

  large (body: unknown, req: { rawBody?: unknown }): Echo {
    return echo(body, req)
  }
}
Controller()(EchoController)
post(EchoController, 'echo', 'echo', [Body(), Req()])
post(EchoController, 'large', 'large', [Body(), Req()])

/** What an app is built with. */
export interface NestAppOptions {
  /** NestFactory.create's options (`bodyParser`, `rawBody`). */
  factory?: { bodyParser?: boolean, rawBody?: boolean }
  /** Runs after NestFactory.create, before Nest is initialised (`app.use`, `app.useBodyParser`). */
  setup?: (app: NestExpressApplication) => void
  /** Nest's per-route middleware, as a module's `configure(consumer)` gives it. */
  configure?: (consumer: MiddlewareConsumer, controller: typeof EchoController) => void
}

export interface NestApp {
  app: NestExpressApplication
  port: number
}

/** Builds, initialises and starts a Nest app on 127.0.0.1; it closes itself after the test. */
export async function startNestApp (t: TestContext, options: NestAppOptions = {}): Promise<NestApp> {
  class AppModule {
    configure (consumer: MiddlewareConsumer): void {
      options.configure?.(consumer, EchoController)
    }
  }
  Module({ controllers: [EchoController] })(AppModule)
  const app = await NestFactory.create<NestExpressApplication>(AppModule, { logger: false, abortOnError: false, ...options.factory })
  options.setup?.(app)
  await app.listen(0, '127.0.0.1')
  t.after(() => app.close())
  return { app, port: (app.getHttpServer().address() as AddressInfo).port }
}

/** The handlers of the app's router stack named `name` (how Nest decides whether a parser is mounted). */
export function layersNamed (app: NestExpressApplication, name: string): unknown[] {
  const router = (app.getHttpAdapter().getInstance() as { router: { stack: Array<{ handle?: { name?: string } }> } }).router
  return router.stack.filter((layer) => layer.handle?.name === name).map((layer) => layer.handle)
}
