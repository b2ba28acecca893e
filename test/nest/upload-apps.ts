// Nest apps for the bodykit/nest upload suites: the same controllers over @nestjs/platform-express's upload interceptors and
// over bodykit/nest's, listening on 127.0.0.1, and what their handlers saw.
import fs from 'node:fs'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { TestContext } from 'node:test'
import {
  BadRequestException, Body, Controller, MaxFileSizeValidator, Module, ParseFilePipe, Post, UploadedFile, UploadedFiles, UseInterceptors,
  type CallHandler, type ExecutionContext, type INestApplication, type NestInterceptor, type Type
} from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import * as platformExpress from '@nestjs/platform-express'
import { MulterModule } from '@nestjs/platform-express'
import multer from 'multer'
import * as bodykitNest from '../../src/nest'

/** The interceptor factories of one library, typed loosely so that both fit (their option types differ a little). */
/* eslint-disable @typescript-eslint/no-explicit-any */
export interface UploadInterceptors {
  FileInterceptor: (fieldName: string, localOptions?: any) => Type<NestInterceptor>
  FilesInterceptor: (fieldName: string, maxCount?: number, localOptions?: any) => Type<NestInterceptor>
  FileFieldsInterceptor: (uploadFields: Array<{ name: string, maxCount?: number }>, localOptions?: any) => Type<NestInterceptor>
  AnyFilesInterceptor: (localOptions?: any) => Type<NestInterceptor>
  NoFilesInterceptor: (localOptions?: any) => Type<NestInterceptor>
}
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Nest's own interceptors (multer underneath) and bodykit/nest's. */
export const LIBRARIES: ReadonlyArray<{ name: 'nest' | 'bodykit', interceptors: UploadInterceptors }> = [
  { name: 'nest', interceptors: platformExpress },
  { name: 'bodykit', interceptors: bodykitNest }
]

/** The limits of the memory routes: small, so that the requests around them stay small. */
export const LIMITS = { fileSize: 64, files: 3, fields: 4, fieldSize: 32, parts: 6, fieldNameSize: 16, fieldNestingDepth: 2, fieldArrayIndexLimit: 100 }
/** The module's `fileSize` limit on the disk routes (MulterModule.register({ dest, limits })). */
export const DISK_FILE_SIZE = 128
/** The largest file ParseFilePipe lets through on /d/pipe. */
export const PIPE_MAX_SIZE = 10

/** What a handler saw of a file: its properties but the ones that name a place, its bytes, and the order of its keys. */
function describeFile (file: Record<string, unknown>): Record<string, unknown> {
  const { buffer, path: filePath, destination, filename, stream, ...rest } = file
  const described: Record<string, unknown> = { ...rest, keys: Object.keys(file).join(',') }
  if (Buffer.isBuffer(buffer)) described.bytes = buffer.toString('base64')
  if (typeof filePath === 'string') {
    // Disk files: paths differ by name only; the handler owns the file, and removes it once read.
    described.bytes = fs.readFileSync(filePath).toString('base64')
    described.named = /^[0-9a-f]{32}$/.test(String(filename)) && filePath === path.join(String(destination), String(filename))
    fs.unlinkSync(filePath)
  }
  if (stream !== undefined) described.stream = typeof stream
  return described
}

/** What a handler saw: `@Body()`, `@UploadedFile()` and `@UploadedFiles()`, in JSON. */
export function describeUpload (body: unknown, file?: unknown, files?: unknown): Record<string, unknown> {
  const described: Record<string, unknown> = { body, bodyPrototype: body === undefined ? 'none' : Object.getPrototypeOf(body) === null ? 'null' : 'object' }
  if (file !== undefined) described.file = describeFile(file as Record<string, unknown>)
  if (Array.isArray(files)) described.files = files.map((each) => describeFile(each))
  else if (files !== undefined) {
    described.files = Object.fromEntries(Object.entries(files as Record<string, Array<Record<string, unknown>>>).map(([name, list]) => [name, list.map(describeFile)]))
  }
  return described
}

type Decorate = (target: object, key: string, index: number) => void

/** A route: its path, the interceptor, its parameters' decorators and its handler. */
export interface Route {
  path: string
  interceptors: Array<Type<NestInterceptor>>
  params: Decorate[]
  handle: (...args: unknown[]) => unknown
}

/** A controller class with these routes, decorated with calls (tsx emits no decorator metadata; Nest needs none here). */
export function defineController (prefix: string, routes: Route[]): Type<unknown> {
  class UploadController {}
  const prototype = UploadController.prototype as Record<string, unknown>
  routes.forEach((route, index) => {
    const key = 'route' + index
    // A function of its own per route: Nest keeps a route's metadata on its handler function.
    prototype[key] = function (...args: unknown[]) { return route.handle(...args) }
    const descriptor = Object.getOwnPropertyDescriptor(prototype, key) as PropertyDescriptor
    Post(route.path)(prototype, key, descriptor)
    UseInterceptors(...route.interceptors)(prototype, key, descriptor)
    route.params.forEach((decorate, position) => decorate(prototype, key, position))
  })
  Controller(prefix)(UploadController)
  return UploadController
}

/** A module class with these imports and controllers. */
export function defineModule (metadata: { imports?: unknown[], controllers: Array<Type<unknown>> }): Type<unknown> {
  class UploadModule {}
  Module(metadata as Parameters<typeof Module>[0])(UploadModule)
  return UploadModule
}

/** A fileFilter that decides by the file's name: throws, calls back with an error, skips or stores. */
function filterByName (file: { originalname: string }, callback: (error: Error | null, acceptFile: boolean) => void): void {
  switch (file.originalname) {
    case 'throw-http.txt': throw new BadRequestException('refused by the filter')
    case 'throw-error.txt': throw new Error('the filter failed')
    case 'throw-falsy.txt': throw 0
    case 'callback-http.txt': return callback(new BadRequestException('refused by its callback'), false)
    case 'callback-multer-message.txt': return callback(Object.assign(new Error('Too many files'), { field: 'picked' }), false)
    case 'skip.txt': return callback(null, false)
    default: return callback(null, true)
  }
}

/**
 * The memory routes (no module options) under /m: each interceptor with LIMITS, one with no limits (Nest's default
 * `parts`), a `limits` function, and fileFilters that throw, reject, call back with errors or skip.
 */
function memoryRoutes (uploads: UploadInterceptors): Route[] {
  const limits = { limits: LIMITS }
  const single: Pick<Route, 'params' | 'handle'> = { params: [Body(), UploadedFile()], handle: (body, file) => describeUpload(body, file) }
  const many: Pick<Route, 'params' | 'handle'> = { params: [Body(), UploadedFiles()], handle: (body, files) => describeUpload(body, undefined, files) }
  return [
    { path: 'single', interceptors: [uploads.FileInterceptor('file', limits)], ...single },
    { path: 'array', interceptors: [uploads.FilesInterceptor('files', 2, limits)], ...many },
    { path: 'fields', interceptors: [uploads.FileFieldsInterceptor([{ name: 'a', maxCount: 1 }, { name: 'b', maxCount: 2 }], limits)], ...many },
    { path: 'any', interceptors: [uploads.AnyFilesInterceptor(limits)], ...many },
    { path: 'none', interceptors: [uploads.NoFilesInterceptor(limits)], params: [Body()], handle: (body) => describeUpload(body) },
    { path: 'unlimited', interceptors: [uploads.AnyFilesInterceptor()], ...many },
    // A storage engine of the multer package, as an app migrating keeps it: bodykit/multer takes any engine.
    { path: 'multer-storage', interceptors: [uploads.FilesInterceptor('files', 2, { storage: multer.memoryStorage(), limits: LIMITS })], ...many },
    { path: 'limits-function', interceptors: [uploads.AnyFilesInterceptor({ limits: () => ({ fileSize: 16 }) })], ...many },
    { path: 'limits-function-null', interceptors: [uploads.AnyFilesInterceptor({ limits: () => null })], ...many },
    { path: 'filter', interceptors: [uploads.FilesInterceptor('files', 3, { fileFilter: (_req: unknown, file: { originalname: string }, callback: (error: Error | null, acceptFile: boolean) => void) => filterByName(file, callback) })], ...many },
    {
      path: 'async-filter',
      interceptors: [uploads.FilesInterceptor('files', 3, {
        fileFilter: async (_req: unknown, file: { originalname: string }, callback: (error: Error | null, acceptFile: boolean) => void) => {
          await sleep(1)
          filterByName(file, callback)
        }
      })],
      ...many
    }
  ]
}

/** The disk routes under /d, in a module that imports MulterModule.register({ dest, limits }). */
function diskRoutes (uploads: UploadInterceptors): Route[] {
  return [
    { path: 'single', interceptors: [uploads.FileInterceptor('file')], params: [Body(), UploadedFile()], handle: (body, file) => describeUpload(body, file) },
    // Nil route options keep the module's: still on disk, still its fileSize.
    { path: 'nil-options', interceptors: [uploads.FileInterceptor('file', { dest: undefined, storage: null, limits: undefined, fileFilter: null })], params: [Body(), UploadedFile()], handle: (body, file) => describeUpload(body, file) },
    { path: 'array', interceptors: [uploads.FilesInterceptor('files', 3)], params: [Body(), UploadedFiles()], handle: (body, files) => describeUpload(body, undefined, files) },
    { path: 'fields', interceptors: [uploads.FileFieldsInterceptor([{ name: 'a', maxCount: 1 }, { name: 'b' }])], params: [Body(), UploadedFiles()], handle: (body, files) => describeUpload(body, undefined, files) },
    {
      path: 'pipe',
      interceptors: [uploads.FileInterceptor('file')],
      params: [Body(), UploadedFile(new ParseFilePipe({ validators: [new MaxFileSizeValidator({ maxSize: PIPE_MAX_SIZE })] }))],
      handle: (body, file) => describeUpload(body, file)
    },
    // An interceptor bound before the upload answers 503 after 100 ms, as a timeout would, while the body is still coming.
    { path: 'answered-first', interceptors: [AnswerFirst, uploads.FileInterceptor('file')], params: [Body(), UploadedFile()], handle: (body, file) => describeUpload(body, file) }
  ]
}

/** Answers 503 after 100 ms and goes on to the next interceptor: a timeout that does not stop the upload it answered for. */
class AnswerFirst implements NestInterceptor {
  intercept (context: ExecutionContext, next: CallHandler): ReturnType<CallHandler['handle']> {
    const res = context.switchToHttp().getResponse<http.ServerResponse>()
    setTimeout(() => {
      if (!res.headersSent) {
        res.writeHead(503, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ statusCode: 503, message: 'answered first' }))
      }
    }, 100)
    return next.handle()
  }
}

export interface NestApp {
  name: 'nest' | 'bodykit'
  port: number
  /** The folder of the disk routes' files. */
  dir: string
  app: INestApplication
}

/** Starts an app with `uploads`' interceptors: memory routes under /m, disk routes under /d. Closed (and its folder removed) after the test. */
export async function startNestApp (t: Pick<TestContext, 'after'>, library: (typeof LIBRARIES)[number]): Promise<NestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-nest-' + library.name + '-'))
  const DiskModule = defineModule({
    imports: [MulterModule.register({ dest: dir, limits: { fileSize: DISK_FILE_SIZE } })],
    controllers: [defineController('d', diskRoutes(library.interceptors))]
  })
  const AppModule = defineModule({ imports: [DiskModule], controllers: [defineController('m', memoryRoutes(library.interceptors))] })
  const app = await NestFactory.create(AppModule, { logger: false })
  await app.listen(0, '127.0.0.1')
  const server = app.getHttpServer() as http.Server
  t.after(async () => {
    server.closeAllConnections()
    await app.close()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return { name: library.name, port: (server.address() as AddressInfo).port, dir, app }
}

/**
 * Registers, in the describe block it is called in, one app per library started before its tests and closed after
 * them; the returned list is filled once they run.
 */
export function appsForSuite (before: (fn: () => Promise<void>) => void, after: (fn: () => Promise<void>) => void): NestApp[] {
  const apps: NestApp[] = []
  const hooks: Array<() => Promise<void>> = []
  before(async () => {
    for (const library of LIBRARIES) apps.push(await startNestApp({ after: (hook) => { hooks.push(hook as () => Promise<void>) } }, library))
  })
  after(async () => {
    for (const hook of hooks) await hook()
  })
  return apps
}

/** Files left in a folder. */
export function filesIn (dir: string): string[] {
  return fs.readdirSync(dir)
}

/** Resolves once the folder is empty, or with what is left after `ms`. */
export async function untilEmpty (dir: string, ms = 2000): Promise<string[]> {
  const deadline = Date.now() + ms
  while (filesIn(dir).length > 0 && Date.now() < deadline) await sleep(10)
  return filesIn(dir)
}

/** What a client got: the status and the JSON body (or the text, if it is not JSON). */
export interface Answer {
  status: number
  json: unknown
}

/** Posts `body` to `path` with node:http, no keep-alive; chunks are written one by one. */
export function post (port: number, urlPath: string, body: Buffer | readonly Buffer[], headers: Record<string, string | number>): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const chunks = Buffer.isBuffer(body) ? [body] : body
    const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: urlPath, agent: false, headers: { 'content-length': length, ...headers } }, (res) => {
      const received: Buffer[] = []
      res.on('data', (chunk: Buffer) => received.push(chunk))
      res.on('end', () => {
        const text = Buffer.concat(received).toString('utf8')
        let json: unknown
        try {
          json = JSON.parse(text)
        } catch {
          json = { text }
        }
        resolve({ status: res.statusCode as number, json })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
}
