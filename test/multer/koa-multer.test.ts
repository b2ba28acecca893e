// bodykit/multer under @koa/multer (the Koa wrapper most Koa apps upload with) in Koa 2 and 3: every MulterError goes
// through Koa's own error handling, which assigns `err.status`, and the process stays up.
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs'
import Module, { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { describe, it, type TestContext } from 'node:test'
import type Koa from 'koa'
import bodykitMulter from '../../src/multer'
import { KOA_MAJORS } from '../koa/apps'

const load = createRequire(__filename)
const KOA_MULTER = load.resolve('@koa/multer')

type KoaMiddleware = (ctx: Koa.Context, next: () => Promise<unknown>) => Promise<unknown>
interface Upload { single: (name: string) => KoaMiddleware, array: (name: string) => KoaMiddleware, any: () => KoaMiddleware }
type KoaMulter = (options?: Record<string, unknown>) => Upload

/**
 * @koa/multer as a user who resolves `multer` to `bodykit/multer` has it (a bundler alias, an npm override): its own
 * file, compiled as a module of its own whose `require('multer')` is answered by bodykit's.
 */
function koaMulterOver (multer: unknown): KoaMulter {
  const wrapper = new Module(KOA_MULTER, module) as Module & { _compile: (code: string, filename: string) => void }
  wrapper.filename = KOA_MULTER
  wrapper.paths = load.resolve.paths('multer') ?? []
  const requireOwn = wrapper.require.bind(wrapper)
  wrapper.require = Object.assign((id: string) => id === 'multer' ? multer : requireOwn(id), requireOwn) as NodeJS.Require
  wrapper._compile(fs.readFileSync(KOA_MULTER, 'utf8'), KOA_MULTER)
  return wrapper.exports as KoaMulter
}

const BOUNDARY = 'KoaMulterBoundary'

interface Part { disposition: string, value: string | Buffer }

const field = (name: string, value: string): Part => ({ disposition: 'form-data; name="' + name + '"', value })
const file = (name: string, value: string | Buffer): Part => ({ disposition: 'form-data; name="' + name + '"; filename="a.bin"', value })

function formOf (parts: readonly Part[]): Buffer {
  const pieces: Buffer[] = []
  for (const part of parts) {
    pieces.push(Buffer.from('--' + BOUNDARY + '\r\nContent-Disposition: ' + part.disposition + '\r\n\r\n'), Buffer.from(part.value), Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from('--' + BOUNDARY + '--\r\n'))
  return Buffer.concat(pieces)
}

/** A form that makes multer report `code`, with the options and the selector that do it. */
interface Case { code: string, options: Record<string, unknown>, select: (upload: Upload) => KoaMiddleware, parts: readonly Part[] }

const CASES: readonly Case[] = [
  { code: 'LIMIT_FILE_SIZE', options: { limits: { fileSize: 200 } }, select: (u) => u.single('avatar'), parts: [file('avatar', Buffer.alloc(300 * 1024, 7))] },
  { code: 'LIMIT_PART_COUNT', options: { limits: { parts: 1 } }, select: (u) => u.any(), parts: [field('a', '1'), field('b', '2')] },
  { code: 'LIMIT_FILE_COUNT', options: { limits: { files: 1 } }, select: (u) => u.any(), parts: [file('a', 'x'), file('b', 'y')] },
  { code: 'LIMIT_FIELD_KEY', options: { limits: { fieldNameSize: 5 } }, select: (u) => u.any(), parts: [field('a-long-name', '1')] },
  { code: 'LIMIT_FIELD_VALUE', options: { limits: { fieldSize: 5 } }, select: (u) => u.any(), parts: [field('a', 'a long value')] },
  { code: 'LIMIT_FIELD_COUNT', options: { limits: { fields: 1 } }, select: (u) => u.any(), parts: [field('a', '1'), field('b', '2')] },
  { code: 'LIMIT_UNEXPECTED_FILE', options: {}, select: (u) => u.single('avatar'), parts: [file('other', 'x')] },
  { code: 'LIMIT_UNEXPECTED_FILE', options: {}, select: (u) => u.array('photos'), parts: [file('avatar', 'x')] },
  { code: 'MISSING_FIELD_NAME', options: {}, select: (u) => u.any(), parts: [{ disposition: 'form-data', value: '1' }] },
  { code: 'LIMIT_FIELD_NESTING', options: { limits: { fieldNestingDepth: 1 } }, select: (u) => u.any(), parts: [field('a[b][c]', '1')] },
  { code: 'LIMIT_FIELD_ARRAY_INDEX', options: { limits: { fieldArrayIndexLimit: 10 } }, select: (u) => u.any(), parts: [field('a[20]', '1')] },
  { code: 'INVALID_FIELD_NAME', options: {}, select: (u) => u.any(), parts: [field('items[4294967294]', 'a'), field('items[]', 'b')] }
]

/** multer's codes for a count or a size passed, which bodykit/multer answers 413 (docs/multer.md); the rest 400. */
const TOO_LARGE = new Set(['LIMIT_PART_COUNT', 'LIMIT_FILE_SIZE', 'LIMIT_FILE_COUNT', 'LIMIT_FIELD_KEY', 'LIMIT_FIELD_VALUE', 'LIMIT_FIELD_COUNT'])

interface Answer { status: number, text: string }

function post (port: number, route: number, body: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1', port, method: 'POST', path: '/' + route, agent: false,
      headers: { 'content-type': 'multipart/form-data; boundary=' + BOUNDARY, 'content-length': body.length }
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode as number, text: Buffer.concat(chunks).toString() }))
      res.on('error', reject)
    })
    // The server may answer before it has read the whole body (a limit): the rest is not needed.
    req.on('error', (err: NodeJS.ErrnoException) => { if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') reject(err) })
    req.end(body)
  })
}

/**
 * Serves every case on its own route (`/<index>`) with Koa's default error handling, or with an app's error
 * middleware that assigns its own `status`, `expose` and `message` before rethrowing, as apps do.
 */
async function startApp (t: TestContext, KoaClass: typeof Koa, multer: KoaMulter, rewrites: boolean): Promise<{ port: number, uncaught: unknown[] }> {
  const uncaught: unknown[] = []
  const record = (err: unknown): void => { uncaught.push(err) }
  process.on('uncaughtException', record)
  process.on('unhandledRejection', record)
  t.after(() => {
    process.off('uncaughtException', record)
    process.off('unhandledRejection', record)
  })
  const app = new KoaClass()
  app.silent = true
  if (rewrites) {
    app.use(async (_ctx, next) => {
      try {
        await next()
      } catch (err) {
        const e = err as Record<string, unknown>
        e.status = 422
        e.statusCode = 422
        e.expose = true
        e.message = 'rewritten ' + String(e.code)
        throw err
      }
    })
  }
  const routes = CASES.map((entry) => entry.select(multer(entry.options)))
  app.use(async (ctx, next) => {
    const route = routes[Number(ctx.path.slice(1))]
    await route(ctx, next)
  })
  app.use((ctx) => { ctx.body = 'SUCCESS' })
  const server = http.createServer(app.callback())
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => { server.close() })
  return { port: (server.address() as AddressInfo).port, uncaught }
}

describe('bodykit/multer under @koa/multer: Koa\'s error handler can change every MulterError', () => {
  for (const { name, Koa: KoaClass } of KOA_MAJORS) {
    for (const rewrites of [false, true]) {
      it(`${name}, ${rewrites ? 'an app that rewrites the error' : 'Koa\'s default handler'}: every code answered, the process up`, async (t) => {
        const multer = await startApp(t, KoaClass, load('@koa/multer') as KoaMulter, rewrites)
        const bodykit = await startApp(t, KoaClass, koaMulterOver(bodykitMulter), rewrites)
        for (const [index, entry] of CASES.entries()) {
          const body = formOf(entry.parts)
          const expected = await post(multer.port, index, body)
          const actual = await post(bodykit.port, index, body)
          if (rewrites) {
            // The app's own status and message, the same for both.
            assert.deepEqual(actual, expected, entry.code)
            assert.deepEqual(actual, { status: 422, text: 'rewritten ' + entry.code }, entry.code)
          } else {
            // multer's errors carry no status: Koa answers 500; bodykit/multer's answer 413 or 400 (docs/multer.md).
            assert.deepEqual(expected, { status: 500, text: 'Internal Server Error' }, entry.code)
            assert.deepEqual(actual, TOO_LARGE.has(entry.code) ? { status: 413, text: 'Payload Too Large' } : { status: 400, text: 'Bad Request' }, entry.code)
          }
        }
        assert.deepEqual(multer.uncaught, [])
        assert.deepEqual(bodykit.uncaught, [])
        // The process is still serving.
        assert.deepEqual(await post(bodykit.port, 0, formOf([file('avatar', 'small')])), { status: 200, text: 'SUCCESS' })
      })
    }
  }
})
