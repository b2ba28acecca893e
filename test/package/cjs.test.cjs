// Smoke tests of the built package through its name (package self-reference), from CommonJS.
/* global fetch, Blob, FormData, Request */
'use strict'
const assert = require('node:assert/strict')
const http = require('node:http')
const { describe, it } = require('node:test')

const GENERIC_SPLIT = 'The bodyParser() generic has been split into individual middleware to use instead.'

/** Runs one middleware on a server, posts a body and returns the parsed req.body (and req.file, if set) the handler saw. */
async function parseThrough (middleware, contentType, body) {
  const server = http.createServer((req, res) => {
    middleware(req, res, (err) => {
      res.setHeader('connection', 'close')
      res.end(JSON.stringify(err ? { error: err.type ?? err.code } : { body: req.body, ...(req.file && { file: describeFile(req.file) }) }))
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

/** A file multer's memory storage made, as JSON carries it: the buffer as its text, or what it was if not a Buffer. */
function describeFile (file) {
  return { ...file, buffer: Buffer.isBuffer(file.buffer) ? file.buffer.toString() : typeof file.buffer }
}

/** Encodes a form of one field and one text file as a browser does: its content type and its bytes. */
async function encodeForm () {
  const form = new FormData()
  form.append('title', 'from cjs')
  form.append('f', new Blob(['file contents'], { type: 'text/plain' }), 'notes.txt')
  const request = new Request('http://localhost/', { method: 'POST', body: form })
  return [request.headers.get('content-type'), Buffer.from(await request.arrayBuffer())]
}

describe('require(\'bodykit\')', () => {
  const bodykit = require('bodykit')

  it('is a function that throws the "generic has been split" error', () => {
    assert.equal(typeof bodykit, 'function')
    assert.throws(() => bodykit(), { name: 'Error', message: GENERIC_SPLIT })
  })

  it('carries json, raw, text and urlencoded, also as require(\'bodykit\').json', () => {
    assert.deepEqual(['json', 'raw', 'text', 'urlencoded'].map((name) => typeof bodykit[name]), ['function', 'function', 'function', 'function'])
    assert.equal(require('bodykit').json, bodykit.json)
    assert.equal(require('bodykit').json().name, 'jsonParser')
  })

  it('carries the promise API: readJson, readRaw, readText and readUrlencoded', async () => {
    assert.deepEqual(['readJson', 'readRaw', 'readText', 'readUrlencoded'].map((name) => typeof bodykit[name]), ['function', 'function', 'function', 'function'])
    const { Readable } = require('node:stream')
    // Any readable with request headers will do for a quick check; a real request is tested from ESM.
    const req = Object.assign(Readable.from([Buffer.from('{"cjs":1}')]), { headers: { 'content-type': 'application/json', 'content-length': '9' } })
    assert.deepEqual(await bodykit.readJson(req), { cjs: 1 })
    await assert.rejects(bodykit.readJson(req, { limit: 'x' }), { name: 'TypeError', message: 'option limit "x" is invalid' })
  })

  it('loads no framework: no @nestjs/*, rxjs, hono or koa (in a process of its own, as this file loads them)', () => {
    const script = "require('bodykit'); require('bodykit/legacy'); require('bodykit/multer'); console.log(JSON.stringify(Object.keys(require.cache)))"
    const loaded = JSON.parse(require('node:child_process').execFileSync(process.execPath, ['-e', script], { cwd: __dirname, encoding: 'utf8' }))
    assert.ok(loaded.some((file) => file.endsWith('dist/index.js')))
    assert.deepEqual(loaded.filter((file) => /[\\/]node_modules[\\/](@nestjs|rxjs|hono|koa)[\\/]/.test(file)), [])
  })

  it('resolves to the built dist/index.js', () => {
    assert.equal(require.resolve('bodykit'), require('node:path').resolve(__dirname, '../../dist/index.js'))
  })

  it('parses a request', async () => {
    assert.deepEqual(await parseThrough(bodykit.json(), 'application/json', '{"cjs":true}'), { body: { cjs: true } })
    assert.deepEqual(await parseThrough(bodykit.urlencoded(), 'application/x-www-form-urlencoded', 'a[b]=1'), { body: { 'a[b]': '1' } })
  })
})

describe('require(\'bodykit/legacy\')', () => {
  const legacy = require('bodykit/legacy')

  it('is the generic parser and carries the four factories', () => {
    assert.equal(typeof legacy, 'function')
    assert.equal(legacy({ extended: true }).name, 'bodyParser')
    assert.deepEqual(['json', 'raw', 'text', 'urlencoded'].map((name) => typeof legacy[name]), ['function', 'function', 'function', 'function'])
    assert.equal(require('bodykit/legacy').json().name, 'jsonParser')
  })

  it('parses a request', async () => {
    assert.deepEqual(await parseThrough(legacy.json(), 'application/json', '{"legacy":1}'), { body: { legacy: 1 } })
    assert.deepEqual(await parseThrough(legacy.urlencoded({ extended: true }), 'application/x-www-form-urlencoded', 'a[b]=1'), { body: { a: { b: '1' } } })
    assert.deepEqual(await parseThrough(legacy.text(), 'text/csv', 'x'), { body: {} })
  })
})

describe('require(\'bodykit/multer\')', () => {
  const multer = require('bodykit/multer')

  it('is multer\'s function, carrying diskStorage, memoryStorage and MulterError', () => {
    assert.equal(typeof multer, 'function')
    assert.deepEqual(['diskStorage', 'memoryStorage', 'MulterError'].map((name) => typeof multer[name]), ['function', 'function', 'function'])
    assert.equal(require('bodykit/multer').memoryStorage, multer.memoryStorage)
    const error = new multer.MulterError('LIMIT_FILE_SIZE', 'f')
    assert.ok(error instanceof Error)
    assert.deepEqual([error.name, error.code, error.field, error.message], ['MulterError', 'LIMIT_FILE_SIZE', 'f', 'File too large'])
    assert.deepEqual(['single', 'array', 'fields', 'none', 'any'].map((method) => typeof multer()[method]), ['function', 'function', 'function', 'function', 'function'])
  })

  it('resolves to the built dist/multer.js', () => {
    assert.equal(require.resolve('bodykit/multer'), require('node:path').resolve(__dirname, '../../dist/multer.js'))
  })

  it('reads a form through upload.single(\'f\') with memory storage into req.file and req.body', async () => {
    const upload = multer({ storage: multer.memoryStorage() })
    assert.deepEqual(await parseThrough(upload.single('f'), ...await encodeForm()), {
      body: { title: 'from cjs' },
      file: { fieldname: 'f', originalname: 'notes.txt', encoding: '7bit', mimetype: 'text/plain', buffer: 'file contents', size: 13 }
    })
    assert.deepEqual(await parseThrough(upload.single('other'), ...await encodeForm()), { error: 'LIMIT_UNEXPECTED_FILE' })
  })
})

describe('require(\'bodykit/hono\')', () => {
  const { Hono } = require('hono')
  const { HTTPException } = require('hono/http-exception')
  const hono = require('bodykit/hono')

  it('carries json, raw, text, urlencoded and multipart, and resolves to the built dist/hono.js', () => {
    assert.deepEqual(Object.keys(hono).sort(), ['json', 'multipart', 'raw', 'text', 'urlencoded'])
    assert.deepEqual(['json', 'multipart', 'raw', 'text', 'urlencoded'].map((name) => hono[name]().name), ['jsonParser', 'multipartParser', 'rawParser', 'textParser', 'urlencodedParser'])
    assert.equal(require.resolve('bodykit/hono'), require('node:path').resolve(__dirname, '../../dist/hono.js'))
  })

  it('reads a body into c.req.valid(), and refuses one with the HTTPException class of require(\'hono/http-exception\')', async () => {
    const app = new Hono()
    app.post('/', hono.json({ limit: 20 }), (c) => c.json(c.req.valid('json')))
    app.post('/form', hono.multipart({ files: true }), (c) => c.json({ form: c.req.valid('form'), files: c.var.files.map((file) => file.originalName) }))
    app.onError((err, c) => c.json({ httpException: err instanceof HTTPException, type: err.cause.type }, err.status))
    const post = (path, body, headers) => app.request(path, { method: 'POST', body, headers })
    const ok = await post('/', '{"cjs":1}', { 'content-type': 'application/json' })
    assert.deepEqual([ok.status, await ok.json()], [200, { cjs: 1 }])
    const tooLarge = await post('/', JSON.stringify({ cjs: 'x'.repeat(30) }), { 'content-type': 'application/json' })
    assert.deepEqual([tooLarge.status, await tooLarge.json()], [413, { httpException: true, type: 'entity.too.large' }])
    const [contentType, body] = await encodeForm()
    const form = await post('/form', body, { 'content-type': contentType })
    assert.deepEqual([form.status, await form.json()], [200, { form: { title: 'from cjs' }, files: ['notes.txt'] }])
  })
})

describe('require(\'bodykit/koa\')', () => {
  it('loads without Koa, and is koa-bodyparser\'s function carrying bodyParser and UnsupportedBodyTypeError', () => {
    const bodyParser = require('bodykit/koa')
    // Koa is an optional peer: the entry takes a Koa context as it comes and never loads Koa itself.
    assert.deepEqual(Object.keys(require.cache).filter((file) => /[\\/]node_modules[\\/]koa[\\/]/.test(file)), [])
    assert.equal(typeof bodyParser, 'function')
    // The named export is @koa/bodyparser 6's: another function, which refuses what 6 refuses when created.
    assert.equal(typeof bodyParser.bodyParser, 'function')
    assert.notEqual(bodyParser.bodyParser, bodyParser)
    assert.throws(() => bodyParser.bodyParser({ extendTypes: { json: 'application/x-json' } }), bodyParser.UnsupportedBodyTypeError)
    assert.doesNotThrow(() => bodyParser({ extendTypes: { json: 'application/x-json' } }))
    assert.equal(bodyParser().name, 'bodyParser')
    assert.throws(() => bodyParser({ enableTypes: ['yaml'] }), bodyParser.UnsupportedBodyTypeError)
    // koa-body's koaBody and HttpMethodEnum, as named exports.
    assert.equal(bodyParser.koaBody().name, 'koaBody')
    assert.equal(bodyParser.HttpMethodEnum.DELETE, 'DELETE')
    assert.equal(require.resolve('bodykit/koa'), require('node:path').resolve(__dirname, '../../dist/koa.js'))
  })

  it('reads a body into ctx.request.body in a Koa app, and refuses one as koa-bodyparser does', async () => {
    const Koa = require('koa')
    const bodyParser = require('bodykit/koa')
    const app = new Koa()
    app.silent = true
    app.use(bodyParser({ jsonLimit: 20 }))
    app.use((ctx) => { ctx.body = { body: ctx.request.body, rawBody: ctx.request.rawBody } })
    const server = app.listen(0, '127.0.0.1')
    await new Promise((resolve) => server.once('listening', resolve))
    try {
      const post = (body) => fetch(`http://127.0.0.1:${server.address().port}/`, { method: 'POST', headers: { 'content-type': 'application/json', connection: 'close' }, body })
      const ok = await post('{"cjs":1}')
      assert.deepEqual([ok.status, await ok.json()], [200, { body: { cjs: 1 }, rawBody: '{"cjs":1}' }])
      const tooLarge = await post(JSON.stringify({ cjs: 'x'.repeat(30) }))
      assert.deepEqual([tooLarge.status, await tooLarge.text()], [413, 'request entity too large'])
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe('require(\'bodykit/nest\')', () => {
  it('loads without multer or @nestjs/platform-express, and gives Nest\'s five upload interceptors', () => {
    const nest = require('bodykit/nest')
    // bodykit/multer reads the uploads: the entry never loads multer, nor the package Nest's own interceptors are in.
    assert.deepEqual(Object.keys(require.cache).filter((file) => /[\\/]node_modules[\\/](multer|@nestjs[\\/]platform-express)[\\/]/.test(file)), [])
    assert.deepEqual(Object.keys(nest).sort(), ['AnyFilesInterceptor', 'FileFieldsInterceptor', 'FileInterceptor', 'FilesInterceptor', 'NoFilesInterceptor'])
    assert.equal(typeof nest.FileInterceptor('file'), 'function')
    assert.equal(require.resolve('bodykit/nest'), require('node:path').resolve(__dirname, '../../dist/nest.js'))
  })

  it('reads an upload into @UploadedFile() in a Nest app, options from MulterModule.register(), and answers a file too large with 413', async () => {
    const { Body, Controller, Module, Post, UploadedFile, UseInterceptors } = require('@nestjs/common')
    const { NestFactory } = require('@nestjs/core')
    const { MulterModule } = require('@nestjs/platform-express')
    const { FileInterceptor } = require('bodykit/nest')
    // Decorators applied as calls: this file is plain CommonJS.
    class UploadController {
      upload (body, file) { return { body, name: file.originalname, text: file.buffer.toString() } }
    }
    const descriptor = Object.getOwnPropertyDescriptor(UploadController.prototype, 'upload')
    Post('upload')(UploadController.prototype, 'upload', descriptor)
    UseInterceptors(FileInterceptor('file'))(UploadController.prototype, 'upload', descriptor)
    Body()(UploadController.prototype, 'upload', 0)
    UploadedFile()(UploadController.prototype, 'upload', 1)
    Controller()(UploadController)
    class AppModule {}
    Module({ imports: [MulterModule.register({ limits: { fileSize: 20 } })], controllers: [UploadController] })(AppModule)
    const app = await NestFactory.create(AppModule, { logger: false })
    await app.listen(0, '127.0.0.1')
    try {
      const send = (text) => {
        const form = new FormData()
        form.append('title', 'from cjs')
        form.append('file', new Blob([text], { type: 'text/plain' }), 'notes.txt')
        return fetch(`http://127.0.0.1:${app.getHttpServer().address().port}/upload`, { method: 'POST', body: form })
      }
      const ok = await send('file contents')
      assert.deepEqual([ok.status, await ok.json()], [201, { body: { title: 'from cjs' }, name: 'notes.txt', text: 'file contents' }])
      const tooLarge = await send('x'.repeat(21))
      assert.deepEqual([tooLarge.status, await tooLarge.json()], [413, { statusCode: 413, message: 'File too large', error: 'Payload Too Large' }])
    } finally {
      await app.close()
    }
  })
})

/** Runs one middleware on a server with a body that fails and returns what `isBodyParserError` said of the error. */
async function guardSays (middleware, isBodyParserError, contentType, body) {
  let said
  const server = http.createServer((req, res) => {
    middleware(req, res, (err) => {
      said = isBodyParserError(err)
      res.setHeader('connection', 'close')
      res.end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    await (await fetch(`http://127.0.0.1:${server.address().port}/`, { method: 'POST', headers: { 'content-type': contentType }, body })).arrayBuffer()
    return said
  } finally {
    server.closeAllConnections()
    server.close()
  }
}

describe('isBodyParserError', () => {
  const bodykit = require('bodykit')
  const legacy = require('bodykit/legacy')

  it('is exported by both entries, as one function', () => {
    assert.equal(typeof bodykit.isBodyParserError, 'function')
    assert.equal(legacy.isBodyParserError, bodykit.isBodyParserError)
  })

  it('recognises the errors of either entry and nothing else', async () => {
    assert.equal(await guardSays(bodykit.json(), legacy.isBodyParserError, 'application/json', '{'), true)
    assert.equal(await guardSays(legacy.urlencoded({ extended: false, parameterLimit: 1 }), bodykit.isBodyParserError, 'application/x-www-form-urlencoded', 'a&b'), true)
    assert.equal(bodykit.isBodyParserError(Object.assign(new Error('x'), { status: 400, type: 'entity.parse.failed' })), false)
  })
})

describe('require(\'bodykit/web\')', () => {
  const web = require('bodykit/web')

  it('carries the five readers and the guard, and resolves to the built dist/web.js', () => {
    assert.deepEqual(Object.keys(web).filter((name) => !['checkWebOptions', 'webInternals'].includes(name)).sort(), ['isBodyParserError', 'readJson', 'readMultipart', 'readRaw', 'readText', 'readUrlencoded'])
    assert.equal(require.resolve('bodykit/web'), require('node:path').resolve(__dirname, '../../dist/web.js'))
  })

  it('reads a Request, and refuses one past its limit with the error bodykit passes', async () => {
    const post = (body) => new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    assert.deepEqual(await web.readJson(post('{"a":1}')), { a: 1 })
    const err = await web.readJson(post('{"a":"0123456789"}'), { limit: 10 }).catch((error) => error)
    assert.deepEqual([err.status, err.type, web.isBodyParserError(err)], [413, 'entity.too.large', true])
    const bytes = new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': 'application/pdf' }, body: new Uint8Array([1, 2]) })
    assert.deepEqual(await web.readRaw(bytes, { type: 'pdf' }), new Uint8Array([1, 2]))
  })
})

describe('the exports map', () => {
  it('lists only ".", "./legacy", "./multer", "./koa", "./nest", "./hono", "./h3", "./web" and "./package.json"', () => {
    const pkg = require('bodykit/package.json')
    assert.deepEqual([pkg.name, Object.keys(pkg.exports)], ['bodykit', ['.', './legacy', './multer', './koa', './nest', './hono', './h3', './web', './package.json']])
  })

  it('refuses deep requires with ERR_PACKAGE_PATH_NOT_EXPORTED', () => {
    for (const deep of ['bodykit/dist/read.js', 'bodykit/dist/read', 'bodykit/dist/index.js', 'bodykit/dist/parsers/json.js', 'bodykit/src/index', 'bodykit/json', 'bodykit/lib/types/json',
      'bodykit/dist/multer.js', 'bodykit/dist/multer', 'bodykit/dist/multer/storage.js', 'bodykit/multer/package.json', 'bodykit/multer/index',
      'bodykit/dist/hono.js', 'bodykit/dist/hono/adapter.js', 'bodykit/hono/package.json',
      'bodykit/dist/koa.js', 'bodykit/dist/koa/middleware.js', 'bodykit/koa/package.json',
      'bodykit/dist/nest.js', 'bodykit/dist/nest/run-upload.js', 'bodykit/nest/package.json',
      'bodykit/dist/web.js', 'bodykit/dist/web.mjs', 'bodykit/dist/hono-web.mjs', 'bodykit/dist/web/read-request.js', 'bodykit/web/package.json']) {
      assert.throws(() => require(deep), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }, deep)
    }
  })
})

describe('require(\'bodykit/h3\')', () => {
  const { Readable } = require('node:stream')
  const h3 = require('h3')
  const bodykitH3 = require('bodykit/h3')

  it('resolves to dist/h3.js and reads an h3 1.x event, refusing with the H3Error of h3\'s CommonJS build', async () => {
    assert.equal(require.resolve('bodykit/h3'), require('node:path').resolve(__dirname, '../../dist/h3.js'))
    const event = (length, body) => {
      const req = Object.assign(Readable.from([Buffer.from(body)]), { method: 'POST', url: '/', headers: { 'content-type': 'application/json', 'content-length': String(length) } })
      return h3.createEvent(req, {})
    }
    assert.deepEqual(await bodykitH3.readBody(event(9, '{"cjs":1}')), { cjs: 1 })
    const err = await bodykitH3.readBody(event(200000, '{}')).catch((error) => error)
    assert.ok(err instanceof h3.H3Error)
    assert.deepEqual([err.statusCode, err.data], [413, { type: 'entity.too.large' }])
  })
})
