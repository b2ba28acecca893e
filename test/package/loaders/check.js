// The request every loader runs: an Express 4 app with one entry's json and urlencoded parsers, three posts on
// 127.0.0.1, the answers written to $LOADER_RESULTS/<label>.json for the matrix to compare. CommonJS with plain
// builtin names, so the oldest tool in the matrix loads it as it would an app's own file.
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

module.exports = { check }
