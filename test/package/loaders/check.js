// The requests every loader runs: an Express 4 app with one entry's json and urlencoded parsers (three posts), or
// bodykit/multer's upload.single('f') (one form), on 127.0.0.1, the answers written to $LOADER_RESULTS/<label>.json
// for the matrix to compare. CommonJS with plain builtin names, so the oldest tool in the matrix loads it as it
// would an app's own file.
'use strict'
const fs = require('fs')
const http = require('http')
const path = require('path')
const express = require('express')

/** Posts `body` with `contentType` (none when undefined) and resolves with the JSON the app answered. */
function post (port, route, contentType, body) {
  return new Promise((resolve, reject) => {
    const headers = { connection: 'close', 'content-length': Buffer.byteLength(body) }
    if (contentType) headers['content-type'] = contentType
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: route, headers }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk) => { text += chunk })
      res.on('end', () => resolve({ status: res.statusCode, answer: JSON.parse(text) }))
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
    const results = {
      json: await post(port, '/json', 'application/json', '{"hello":"world","n":[1,2]}'),
      form: await post(port, '/form', 'application/x-www-form-urlencoded', 'a=1&b=two+words'),
      unread: await post(port, '/json', undefined, '')
    }
    fs.writeFileSync(path.join(process.env.LOADER_RESULTS, label + '.json'), JSON.stringify(results))
    return results
  } finally {
    server.close()
  }
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
  const names = ['diskStorage', 'memoryStorage', 'MulterError']
  const shape = { multer: typeof multer }
  for (const name of names) shape[name] = { type: typeof named[name], sameAsDefault: named[name] === multer[name] }
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
    const results = { shape, error, upload: await post(port, '/upload', 'multipart/form-data; boundary=' + BOUNDARY, FORM) }
    fs.writeFileSync(path.join(process.env.LOADER_RESULTS, label + '.json'), JSON.stringify(results))
    return results
  } finally {
    server.close()
  }
}

module.exports = { check, checkMulter }
