// Smoke tests of the built package through its name (package self-reference), from ES modules.
/* global fetch, Blob, FormData, Request, TextDecoder */
import assert from 'node:assert/strict'
import http from 'node:http'
import { describe, it } from 'node:test'
import bodykit, { isBodyParserError, json, raw, text, urlencoded, multipart, readJson, readRaw, readText, readUrlencoded, readMultipart } from 'bodykit'
import legacy, * as legacyNamespace from 'bodykit/legacy'
import { isBodyParserError as isLegacyError } from 'bodykit/legacy'
import multer, * as multerNamespace from 'bodykit/multer'
import { diskStorage, memoryStorage, MulterError } from 'bodykit/multer'
import * as honoNamespace from 'bodykit/hono'
import { json as honoJson, text as honoText } from 'bodykit/hono'
import { Hono } from 'hono'
import koaBodyParser, * as koaNamespace from 'bodykit/koa'
import { bodyParser as namedKoaBodyParser, UnsupportedBodyTypeError, koaBody, HttpMethodEnum } from 'bodykit/koa'
import Koa from 'koa'
import * as nestNamespace from 'bodykit/nest'
import { FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor } from 'bodykit/nest'
import { Body, Controller, Module, Post, UploadedFiles, UseInterceptors } from '@nestjs/common'
import { NestFactory } from '@nestjs/core'
import { HTTPException } from 'hono/http-exception'
import * as webNamespace from 'bodykit/web'
import * as h3Namespace from 'bodykit/h3'
import { createApp, createEvent, H3Error, defineEventHandler, toNodeListener } from 'h3'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'

const GENERIC_SPLIT = 'The bodyParser() generic has been split into individual middleware to use instead.'

/** Runs one middleware on a server, posts a body and returns what the handler saw. */
async function parseThrough (middleware, contentType, body) {
  const server = http.createServer((req, res) => {
    middleware(req, res, (err) => {
      res.setHeader('connection', 'close')
      res.end(JSON.stringify(err
        ? { error: err.type ?? err.code, guard: isBodyParserError(err), ...(err instanceof MulterError && { multerError: true }) }
        : { body: Buffer.isBuffer(req.body) ? req.body.toString('hex') : req.body, ...(req.file && { file: { ...req.file, buffer: req.file.buffer.toString('hex') } }) }))
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const res = await fetch(`http://127.0.0.1:${server.address().port}/`, { method: 'POST', headers: { 'content-type': contentType }, body })
    return await res.json()
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

describe('import from \'bodykit\'', () => {
  it('gives the callable module as default export, which throws', () => {
    assert.equal(typeof bodykit, 'function')
    assert.throws(() => bodykit(), { name: 'Error', message: GENERIC_SPLIT })
  })

  it('gives json, raw, text and urlencoded as named exports, the same functions as on the default', () => {
    assert.deepEqual([json, raw, text, urlencoded], [bodykit.json, bodykit.raw, bodykit.text, bodykit.urlencoded])
    assert.deepEqual([json, raw, text, urlencoded].map((factory) => factory().name), ['jsonParser', 'rawParser', 'textParser', 'urlencodedParser'])
  })

  it('gives readJson, readRaw, readText and readUrlencoded as named exports, the same functions as on the default', () => {
    assert.deepEqual([readJson, readRaw, readText, readUrlencoded], [bodykit.readJson, bodykit.readRaw, bodykit.readText, bodykit.readUrlencoded])
    assert.deepEqual([readJson, readRaw, readText, readUrlencoded].map((reader) => typeof reader), ['function', 'function', 'function', 'function'])
  })

  it('gives multipart and readMultipart as named exports, and parses a FormData body', async () => {
    assert.deepEqual([multipart, readMultipart], [bodykit.multipart, bodykit.readMultipart])
    assert.equal(multipart().name, 'multipartParser')
    const form = new FormData()
    form.append('a', '1')
    const request = new Request('http://localhost/', { method: 'POST', body: form })
    const body = await request.text()
    assert.deepEqual(await parseThrough(multipart(), request.headers.get('content-type'), body), { body: { a: '1' } })
    assert.equal(typeof legacyNamespace.multipart, 'function')
  })

  it('reads a request with the promise API', async () => {
    const server = http.createServer((req, res) => {
      readJson(req, { res, rawBody: true }).then((body) => ({ body, raw: req.rawBody.toString() }), (err) => ({ error: err.type }))
        .then((result) => res.setHeader('connection', 'close').end(JSON.stringify(result)))
    })
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const post = async (body) => (await fetch(`http://127.0.0.1:${server.address().port}/`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).json()
      assert.deepEqual(await post('{"esm":1}'), { body: { esm: 1 }, raw: '{"esm":1}' })
      assert.deepEqual(await post('{"esm":'), { error: 'entity.parse.failed' })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })

  it('parses requests', async () => {
    assert.deepEqual(await parseThrough(json(), 'application/json', '{"esm":true}'), { body: { esm: true } })
    assert.deepEqual(await parseThrough(raw(), 'application/octet-stream', 'ab'), { body: '6162' })
    assert.deepEqual(await parseThrough(json(), 'application/json; charset=latin1', '{}'), { error: 'charset.unsupported', guard: true })
  })
})

describe('isBodyParserError as a named import', () => {
  it('is the same function from both entries and on the default exports', () => {
    assert.equal(typeof isBodyParserError, 'function')
    assert.deepEqual([isLegacyError, bodykit.isBodyParserError, legacy.isBodyParserError], [isBodyParserError, isBodyParserError, isBodyParserError])
  })

  it('recognises a legacy error and rejects a look-alike', async () => {
    assert.deepEqual(await parseThrough(legacyNamespace.json(), 'application/json', '['), { error: 'entity.parse.failed', guard: true })
    assert.equal(isLegacyError({ status: 400, statusCode: 400, expose: true, type: 'entity.parse.failed' }), false)
  })
})

describe('import from \'bodykit/legacy\'', () => {
  it('gives the generic parser as default export and the factories as named exports', () => {
    assert.equal(typeof legacy, 'function')
    assert.equal(legacy({ extended: false }).name, 'bodyParser')
    assert.deepEqual(['json', 'raw', 'text', 'urlencoded'].map((name) => legacyNamespace[name]), [legacy.json, legacy.raw, legacy.text, legacy.urlencoded])
  })

  it('parses requests with 1.x behaviour', async () => {
    assert.deepEqual(await parseThrough(legacyNamespace.text(), 'text/plain', 'legacy'), { body: 'legacy' })
    assert.deepEqual(await parseThrough(legacyNamespace.json(), 'text/plain', '{}'), { body: {} })
  })
})

describe('import from \'bodykit/multer\'', () => {
  it('gives multer\'s function as default export and diskStorage, memoryStorage and MulterError as named exports', () => {
    assert.equal(typeof multer, 'function')
    assert.deepEqual([diskStorage, memoryStorage, MulterError], [multer.diskStorage, multer.memoryStorage, multer.MulterError])
    assert.deepEqual([diskStorage, memoryStorage, MulterError].map((named) => typeof named), ['function', 'function', 'function'])
    assert.deepEqual(Object.keys(multerNamespace).sort(), ['MulterError', 'default', 'diskStorage', 'memoryStorage'])
    assert.equal(multerNamespace.default, multer)
    assert.equal(multer().single('f').name, 'multerMiddleware')
  })

  it('reads a form through upload.single(\'f\') with memory storage into req.file and req.body', async () => {
    const form = new FormData()
    form.append('title', 'from esm')
    form.append('f', new Blob(['\u00e9t\u00e9'], { type: 'text/plain' }), 'notes.txt')
    const request = new Request('http://localhost/', { method: 'POST', body: form })
    const body = Buffer.from(await request.arrayBuffer())
    const upload = multer({ storage: memoryStorage() })
    assert.deepEqual(await parseThrough(upload.single('f'), request.headers.get('content-type'), body), {
      body: { title: 'from esm' },
      file: { fieldname: 'f', originalname: 'notes.txt', encoding: '7bit', mimetype: 'text/plain', buffer: Buffer.from('\u00e9t\u00e9').toString('hex'), size: 5 }
    })
    assert.deepEqual(await parseThrough(multer({ storage: memoryStorage(), limits: { fileSize: 4 } }).single('f'), request.headers.get('content-type'), body),
      { error: 'LIMIT_FILE_SIZE', guard: false, multerError: true })
  })
})

describe('import from \'bodykit/hono\'', () => {
  it('gives json, raw, text, urlencoded and multipart as named exports, from the ES module build (dist/hono.mjs)', () => {
    assert.deepEqual(Object.keys(honoNamespace).sort(), ['json', 'multipart', 'raw', 'text', 'urlencoded'])
    assert.deepEqual([honoJson, honoText], [honoNamespace.json, honoNamespace.text])
    assert.match(import.meta.resolve('bodykit/hono'), /\/dist\/hono\.mjs$/)
  })

  it('refuses a body with the HTTPException class an ES module app imports (instanceof holds in onError)', async () => {
    const app = new Hono()
    app.post('/', honoJson({ limit: 20 }), (c) => c.json(c.req.valid('json')))
    app.post('/note', honoText(), (c) => c.text(c.var.body ?? 'nothing'))
    app.onError((err, c) => c.json({ httpException: err instanceof HTTPException, type: err.cause.type, guard: isBodyParserError(err.cause) }, err.status))
    const post = (path, body, headers) => app.request(path, { method: 'POST', body, headers })
    const ok = await post('/', '{"esm":1}', { 'content-type': 'application/json' })
    assert.deepEqual([ok.status, await ok.json()], [200, { esm: 1 }])
    const refused = await post('/', '{"esm":', { 'content-type': 'application/json' })
    assert.deepEqual([refused.status, await refused.json()], [400, { httpException: true, type: 'entity.parse.failed', guard: true }])
    const note = await post('/note', 'caf\xe9', { 'content-type': 'text/plain; charset=utf-8' })
    assert.deepEqual([note.status, await note.text()], [200, 'caf\xe9'])
    const skipped = await post('/note', '{}', { 'content-type': 'application/json' })
    assert.deepEqual([skipped.status, await skipped.text()], [200, 'nothing'])
  })
})

describe('import from \'bodykit/web\'', () => {
  it('gives the five readers and the guard from the self-contained ES module (dist/web.mjs), which reads a Request', async () => {
    assert.deepEqual(Object.keys(webNamespace).filter((name) => !['checkWebOptions', 'webInternals'].includes(name)).sort(), ['isBodyParserError', 'readJson', 'readMultipart', 'readRaw', 'readText', 'readUrlencoded'])
    assert.match(import.meta.resolve('bodykit/web'), /\/dist\/web\.mjs$/)
    const form = new FormData()
    form.append('name', 'ada')
    form.append('cv', new Blob(['hello'], { type: 'text/plain' }), 'cv.txt')
    const result = await webNamespace.readMultipart(new Request('http://127.0.0.1/', { method: 'POST', body: form }), { files: true })
    assert.deepEqual([result.fields, result.files.map((file) => [file.fieldName, file.originalName, new TextDecoder().decode(file.buffer)])], [{ name: 'ada' }, [['cv', 'cv.txt', 'hello']]])
    const err = await webNamespace.readJson(new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/json', 'content-encoding': 'zstd-not' }, body: '{}' })).catch((error) => error)
    assert.deepEqual([err.status, err.type, webNamespace.isBodyParserError(err)], [415, 'encoding.unsupported', true])
  })

  it('is what bodykit/hono resolves to under the conditions Workers and edge bundlers set (workerd, edge-light, worker, browser)', () => {
    for (const condition of ['workerd', 'edge-light', 'worker', 'browser']) {
      const script = "const hono = await import('bodykit/hono'); const { Hono } = await import('hono'); const app = new Hono();" +
        " app.post('/', hono.json({ limit: 8 }), (c) => c.json(c.req.valid('json'))); app.onError((e, c) => c.text(e.cause.type, e.status));" +
        " const post = (body) => app.request('/', { method: 'POST', headers: { 'content-type': 'application/json' }, body });" +
        " const [ok, big] = await Promise.all([post('{}'), post('{\"a\":123456}')]);" +
        " console.log(JSON.stringify([import.meta.resolve('bodykit/hono').split('/').pop(), ok.status, big.status, await big.text()]))"
      const output = execFileSync(process.execPath, ['--conditions=' + condition, '--input-type=module', '-e', script], { cwd: import.meta.dirname, encoding: 'utf8' })
      assert.deepEqual(JSON.parse(output), ['hono-web.mjs', 200, 413, 'entity.too.large'], condition)
    }
  })
})

describe('import from \'bodykit/h3\'', () => {
  it('gives h3\'s readers, the factory and isBodyParserError, from the ES module build (dist/h3.mjs)', () => {
    assert.deepEqual(Object.keys(h3Namespace).sort(), ['createBodyReaders', 'isBodyParserError', 'readBody', 'readFormData', 'readMultipartFormData', 'readRawBody', 'readValidatedBody'])
    assert.match(import.meta.resolve('bodykit/h3'), /\/dist\/h3\.mjs$/)
  })

  it('reads in an h3 1.x app and refuses as the H3Error of h3\'s ES module build', async () => {
    const app = createApp()
    app.use(defineEventHandler(async (event) => ({ body: await h3Namespace.readBody(event, { limit: 20 }) })))
    const server = http.createServer(toNodeListener(app))
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const post = (body) => fetch(`http://127.0.0.1:${server.address().port}/`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body })
      const ok = await post('{"esm":true}')
      assert.deepEqual(await ok.json(), { body: { esm: true } })
      const big = await post(JSON.stringify({ big: 'x'.repeat(40) }))
      assert.deepEqual([big.status, (await big.json()).data], [413, { type: 'entity.too.large' }])
    } finally {
      server.close()
    }
    const req = Object.assign(new (await import('node:stream')).PassThrough(), { method: 'POST', url: '/', headers: { 'content-type': 'application/json', 'content-length': '999999' } })
    const err = await h3Namespace.readBody(createEvent(req, {})).catch((error) => error)
    assert.ok(err instanceof H3Error)
    assert.equal(h3Namespace.isBodyParserError(err.cause), true)
  })

  it('works with h3 2.x as the app\'s h3: the Node build, and the Web build under the conditions Workers and edge bundlers set', () => {
    // An app whose `h3` is 2.x: the package's files, its dependencies, and h3 2 installed as `h3`.
    const project = mkdtempSync(path.join(os.tmpdir(), 'bodykit-h3-2-'))
    try {
      const root = path.join(import.meta.dirname, '..', '..')
      const modules = path.join(project, 'node_modules')
      mkdirSync(path.join(modules, 'bodykit'), { recursive: true })
      cpSync(path.join(root, 'dist'), path.join(modules, 'bodykit', 'dist'), { recursive: true })
      cpSync(path.join(root, 'package.json'), path.join(modules, 'bodykit', 'package.json'))
      const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))
      for (const name of Object.keys(manifest.dependencies)) symlinkSync(path.join(root, 'node_modules', name), path.join(modules, name))
      symlinkSync(path.join(root, 'node_modules', 'h3-2'), path.join(modules, 'h3'))
      writeFileSync(path.join(project, 'package.json'), '{"type":"module"}')
      const script = "const bk = await import('bodykit/h3'); const { H3, HTTPError } = await import('h3');" +
        " const app = new H3().post('/', async (event) => { try { return { body: await bk.readBody(event, { limit: 20 }) } } catch (err) { return { refused: err instanceof HTTPError, status: err.status, type: err.data.type } } });" +
        " const post = (body) => app.fetch(new Request('http://localhost/', { method: 'POST', headers: { 'content-type': 'application/json' }, body })).then((r) => r.json());" +
        " console.log(JSON.stringify([import.meta.resolve('bodykit/h3').split('/').pop(), await post('{\"a\":1}'), await post(JSON.stringify({ big: 'x'.repeat(40) }))]))"
      for (const [condition, file] of [[null, 'h3.mjs'], ['workerd', 'h3-web.mjs'], ['edge-light', 'h3-web.mjs'], ['worker', 'h3-web.mjs'], ['browser', 'h3-web.mjs']]) {
        const args = [...(condition === null ? [] : ['--conditions=' + condition]), '--input-type=module', '-e', script]
        const output = execFileSync(process.execPath, args, { cwd: project, encoding: 'utf8' })
        assert.deepEqual(JSON.parse(output), [file, { body: { a: 1 } }, { refused: true, status: 413, type: 'entity.too.large' }], String(condition))
      }
    } finally {
      rmSync(project, { recursive: true, force: true })
    }
  })
})

describe('import from \'bodykit/koa\'', () => {
  it('gives koa-bodyparser 4\'s function as default export and @koa/bodyparser 6\'s as bodyParser, with UnsupportedBodyTypeError', () => {
    assert.equal(typeof koaBodyParser, 'function')
    assert.deepEqual([koaNamespace.bodyParser, koaNamespace.default], [namedKoaBodyParser, koaBodyParser])
    assert.equal(typeof namedKoaBodyParser, 'function')
    assert.notEqual(namedKoaBodyParser, koaBodyParser)
    assert.throws(() => namedKoaBodyParser({ extendTypes: { json: 'application/x-json' } }), UnsupportedBodyTypeError)
    assert.throws(() => koaBodyParser({ enableTypes: ['yaml'] }), UnsupportedBodyTypeError)
    assert.deepEqual([typeof koaBody, koaBody().name, HttpMethodEnum.GET], ['function', 'koaBody', 'GET'])
  })

  it('reads a body in a Koa app, and throws a refusal with the library\'s message and bodykit\'s type', async () => {
    const app = new Koa()
    app.silent = true
    const types = []
    app.use(async (ctx, next) => {
      try {
        await next()
      } catch (err) {
        types.push([err.type, isBodyParserError(err)])
        throw err
      }
    })
    app.use(namedKoaBodyParser({ parsedMethods: ['POST'] }))
    app.use((ctx) => { ctx.body = { body: ctx.request.body ?? null } })
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const post = (body, method = 'POST') => fetch(`http://127.0.0.1:${server.address().port}/`, { method, headers: { 'content-type': 'application/json', connection: 'close' }, body })
      const ok = await post('{"esm":1}')
      assert.deepEqual([ok.status, await ok.json()], [200, { body: { esm: 1 } }])
      const refused = await post('{"esm":')
      assert.deepEqual([refused.status, await refused.text(), types], [400, 'Bad Request', [['entity.parse.failed', true]]])
      const put = await post('{"esm":1}', 'PUT')
      assert.deepEqual([put.status, await put.json()], [200, { body: null }])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('import from \'bodykit/nest\'', () => {
  it('gives Nest\'s five upload interceptors as named exports (the CommonJS build, through Node\'s ESM loader)', () => {
    // `default` (module.exports) and `__esModule` (the flag tsc's CommonJS output sets) come with any such build.
    assert.deepEqual(Object.keys(nestNamespace).filter((name) => name !== 'default' && name !== '__esModule').sort(), ['AnyFilesInterceptor', 'FileFieldsInterceptor', 'FileInterceptor', 'FilesInterceptor', 'NoFilesInterceptor'])
    assert.deepEqual([FileInterceptor, FilesInterceptor, FileFieldsInterceptor, AnyFilesInterceptor, NoFilesInterceptor].map((factory) => typeof factory), ['function', 'function', 'function', 'function', 'function'])
    assert.match(import.meta.resolve('bodykit/nest'), /\/dist\/nest\.js$/)
  })

  it('reads files into @UploadedFiles() in a Nest app, and refuses an unexpected one as Nest does', async () => {
    // Decorators applied as calls: this file is plain JavaScript.
    class UploadController {
      upload (body, files) { return { body, files: files.map((file) => file.originalname) } }
    }
    const descriptor = Object.getOwnPropertyDescriptor(UploadController.prototype, 'upload')
    Post('upload')(UploadController.prototype, 'upload', descriptor)
    UseInterceptors(FilesInterceptor('files', 2))(UploadController.prototype, 'upload', descriptor)
    Body()(UploadController.prototype, 'upload', 0)
    UploadedFiles()(UploadController.prototype, 'upload', 1)
    Controller()(UploadController)
    class AppModule {}
    Module({ controllers: [UploadController] })(AppModule)
    const app = await NestFactory.create(AppModule, { logger: false })
    await app.listen(0, '127.0.0.1')
    try {
      const send = (names) => {
        const form = new FormData()
        form.append('title', 'from esm')
        for (const name of names) form.append('files', new Blob(['x']), name)
        return fetch(`http://127.0.0.1:${app.getHttpServer().address().port}/upload`, { method: 'POST', body: form })
      }
      const ok = await send(['a.txt', 'b.txt'])
      assert.deepEqual([ok.status, await ok.json()], [201, { body: { title: 'from esm' }, files: ['a.txt', 'b.txt'] }])
      const tooMany = await send(['a.txt', 'b.txt', 'c.txt'])
      assert.deepEqual([tooMany.status, await tooMany.json()], [400, { statusCode: 400, message: 'Unexpected file field - files', error: 'Bad Request' }])
    } finally {
      await app.close()
    }
  })
})

describe('deep imports', () => {
  it('are refused with ERR_PACKAGE_PATH_NOT_EXPORTED', async () => {
    for (const deep of ['bodykit/dist/read.js', 'bodykit/dist/legacy.js', 'bodykit/package', 'bodykit/dist/variants.js', 'bodykit/dist/multer.js', 'bodykit/dist/multer/storage.js', 'bodykit/multer/package.json', 'bodykit/dist/hono.mjs', 'bodykit/dist/hono/adapter.js', 'bodykit/hono/package.json', 'bodykit/dist/koa.js', 'bodykit/koa/package.json', 'bodykit/dist/nest.js', 'bodykit/nest/package.json', 'bodykit/dist/web.mjs', 'bodykit/dist/hono-web.mjs', 'bodykit/web/package.json', 'bodykit/dist/h3.mjs', 'bodykit/dist/h3/adapter.js', 'bodykit/h3/package.json']) {
      await assert.rejects(import(deep), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }, deep)
    }
  })

  it('allow bodykit/package.json', async () => {
    const { default: pkg } = await import('bodykit/package.json', { with: { type: 'json' } })
    assert.equal(pkg.name, 'bodykit')
  })
})
