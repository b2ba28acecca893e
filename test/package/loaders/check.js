// The requests every loader runs: an Express 4 app with one entry's json and urlencoded parsers (three posts), or
// bodykit/multer's upload.single('f') (one form); a Koa 2 app with bodykit/koa's bodyParser() and koaBody() (three
// posts); a Nest 11 app with bodykit/nest's FileInterceptor (two forms); on 127.0.0.1, the answers written to
// $LOADER_RESULTS/<label>.json for the matrix to compare. CommonJS with plain builtin names, so the oldest tool in
// the matrix loads it as it would an app's own file.
'use strict'
const fs = require('fs')
const http = require('http')
const os = require('os')
const path = require('path')
const express = require('express')
const Koa = require('koa')
const { Body, Controller, Module, Post, UploadedFile, UseInterceptors } = require('@nestjs/common')
const { NestFactory } = require('@nestjs/core')

/**
 * Posts `body` with `contentType` (none when undefined) and resolves with the JSON the app answered, or `{ text }`
 * for an answer that is not JSON (an error page), so that the matrix shows it.
 */
function post (port, route, contentType, body) {
  return new Promise((resolve, reject) => {
    const headers = { connection: 'close', 'content-length': Buffer.byteLength(body) }
    if (contentType) headers['content-type'] = contentType
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: route, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => {
        let answer
        try { answer = JSON.parse(text) } catch { answer = { text } }
        resolve({ status: res.statusCode, answer })
      })
    })
    req.on('error', reject)
    req.end(body)
  })
}

/** Runs the three requests through `entry` (bodykit or bodykit/legacy as the tool loaded it) and records them. */
async function check (entry, label) {
  const app = express()
  // `undefined` does not survive JSON, so the handler names it: the default entry leaves an unread body
  // undefined where the legacy one sets {}, which tells the two entries apart.
  const answer = (req, res) => res.json({ body: req.body === undefined ? 'undefined' : req.body })
  app.post('/json', entry.json(), answer)
  app.post('/form', entry.urlencoded({ extended: false }), answer)
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  try {
    const port = server.address().port
    return record(label, {
      json: await post(port, '/json', 'application/json', '{"hello":"world","n":[1,2]}'),
      form: await post(port, '/form', 'application/x-www-form-urlencoded', 'a=1&b=two+words'),
      unread: await post(port, '/json', undefined, '')
    })
  } finally {
    server.close()
  }
}

/** The type of each of `names` in `named`, and whether it is the one `module` carries under that name. */
function shapeOf (module, named, names) {
  const shape = {}
  for (const name of names) shape[name] = { type: typeof named[name], sameAsModule: named[name] === module[name] }
  return shape
}

/** Writes `results` to $LOADER_RESULTS/<label>.json for the matrix, and returns them. */
function record (label, results) {
  fs.writeFileSync(path.join(process.env.LOADER_RESULTS, label + '.json'), JSON.stringify(results))
  return results
}

const BOUNDARY = 'loaderFormBoundary42'

/** A form as a browser sends it: one field, then one small text file under the name `f`. */
const FORM = [
  '--' + BOUNDARY, 'Content-Disposition: form-data; name="title"', '', 'hello form',
  '--' + BOUNDARY, 'Content-Disposition: form-data; name="f"; filename="notes.txt"', 'Content-Type: text/plain', '', 'file contents',
  '--' + BOUNDARY + '--', ''
].join('\r\n')

/**
 * Runs one form through bodykit/multer as the tool loaded it: `multer` is the module (default export or require()),
 * `named` what the app took diskStorage, memoryStorage and MulterError from (named imports, or the module itself).
 * Records the module's shape, a MulterError it makes, and what upload.single('f') with memory storage put in
 * req.body and req.file (the buffer as its text).
 */
async function checkMulter (multer, named, label) {
  const shape = Object.assign({ multer: typeof multer }, shapeOf(multer, named, ['diskStorage', 'memoryStorage', 'MulterError']))
  const made = new named.MulterError('LIMIT_FILE_SIZE', 'f')
  const error = { name: made.name, code: made.code, field: made.field, message: made.message, isError: made instanceof Error }
  const app = express()
  const upload = multer({ storage: named.memoryStorage() })
  app.post('/upload', upload.single('f'), (req, res) => {
    const file = req.file && Object.assign({}, req.file, { buffer: Buffer.isBuffer(req.file.buffer) ? req.file.buffer.toString('utf8') : typeof req.file.buffer })
    res.json({ body: req.body, file: file === undefined ? 'undefined' : file })
  })
  app.use((err, req, res, _next) => res.status(500).json({ error: { name: err.name, code: err.code, message: err.message } }))
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  try {
    const port = server.address().port
    return record(label, { shape, error, upload: await post(port, '/upload', 'multipart/form-data; boundary=' + BOUNDARY, FORM) })
  } finally {
    server.close()
  }
}

/**
 * Runs bodykit/koa as the tool loaded it in a Koa app: `bodyParser` is the module (default export or require()),
 * `named` what the app took bodyParser and koaBody from. Records the module's shape, the JSON and form bodies
 * bodyParser() read, and the field and file koaBody({ multipart: true }) read from the form, the file on disk.
 */
async function checkKoa (bodyParser, named, label) {
  const shape = Object.assign({ module: typeof bodyParser }, shapeOf(bodyParser, named, ['bodyParser', 'koaBody']))
  const uploadDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-loader-koa-'))
  const parse = named.bodyParser()
  const upload = named.koaBody({ multipart: true, formidable: { uploadDir } })
  const app = new Koa()
  app.use((ctx, next) => (ctx.path === '/upload' ? upload : parse)(ctx, next))
  app.use((ctx) => {
    const files = ctx.request.files
    const f = files && files.f
    const file = f && {
      originalFilename: f.originalFilename,
      size: f.size,
      mimetype: f.mimetype,
      content: fs.readFileSync(f.filepath, 'utf8'),
      inUploadDir: path.dirname(f.filepath) === uploadDir
    }
    ctx.body = { body: ctx.request.body, file: file === undefined ? 'undefined' : file }
  })
  const server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)) })
  try {
    const port = server.address().port
    return record(label, {
      shape,
      json: await post(port, '/json', 'application/json', '{"hello":"world","n":[1,2]}'),
      form: await post(port, '/form', 'application/x-www-form-urlencoded', 'a=1&b=two+words'),
      upload: await post(port, '/upload', 'multipart/form-data; boundary=' + BOUNDARY, FORM)
    })
  } finally {
    server.close()
    fs.rmSync(uploadDir, { recursive: true, force: true })
  }
}

const NEST_INTERCEPTORS = ['FileInterceptor', 'FilesInterceptor', 'FileFieldsInterceptor', 'AnyFilesInterceptor', 'NoFilesInterceptor']

/**
 * Runs bodykit/nest as the tool loaded it in a Nest app (decorators applied as calls, as apps built without decorator
 * syntax do): `nest` is the module (require() or a namespace import), `named` what the app took the interceptors
 * from. Records the interceptors' types and the class FileInterceptor('f') makes, what that interceptor gave @Body()
 * and @UploadedFile() for the form (the buffer as its text), and Nest's answer to a file over limits.fileSize; or,
 * where the tool cannot load Nest's Express adapter, why (NestFactory would exit the process).
 */
async function checkNest (nest, named, label) {
  const shape = shapeOf(nest, named, NEST_INTERCEPTORS)
  const Interceptor = named.FileInterceptor('f')
  shape.interceptor = { type: typeof Interceptor, intercept: typeof new Interceptor().intercept }
  try {
    require('@nestjs/platform-express')
  } catch (error) {
    return record(label, { shape, adapter: error.message })
  }
  class UploadController {}
  const routes = { upload: named.FileInterceptor('f'), limited: named.FileInterceptor('f', { limits: { fileSize: 4 } }) }
  for (const [key, interceptor] of Object.entries(routes)) {
    UploadController.prototype[key] = function (body, file) {
      if (file === undefined) return { body, file: 'undefined' }
      return { body, file: Object.assign({}, file, { buffer: Buffer.isBuffer(file.buffer) ? file.buffer.toString('utf8') : typeof file.buffer }) }
    }
    const descriptor = Object.getOwnPropertyDescriptor(UploadController.prototype, key)
    Post(key)(UploadController.prototype, key, descriptor)
    UseInterceptors(interceptor)(UploadController.prototype, key, descriptor)
    Body()(UploadController.prototype, key, 0)
    UploadedFile()(UploadController.prototype, key, 1)
  }
  Controller()(UploadController)
  class AppModule {}
  Module({ controllers: [UploadController] })(AppModule)
  const app = await NestFactory.create(AppModule, { logger: false })
  await app.listen(0, '127.0.0.1')
  try {
    const port = app.getHttpServer().address().port
    return record(label, {
      shape,
      upload: await post(port, '/upload', 'multipart/form-data; boundary=' + BOUNDARY, FORM),
      limited: await post(port, '/limited', 'multipart/form-data; boundary=' + BOUNDARY, FORM)
    })
  } finally {
    await app.close()
  }
}

module.exports = { check, checkMulter, checkKoa, checkNest }
