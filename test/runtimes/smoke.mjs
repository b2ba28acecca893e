// Runtime smoke test (Node, Bun, Deno): an Express app with both entries, multipart() and bodykit/multer, asked
// over real HTTP; exits non-zero on the first wrong answer. Needs `npm run build` first.
/* global fetch, FormData, Blob */
import assert from 'node:assert/strict'
import { createRequire } from 'node:module'

const require = createRequire(import.meta.url)
const express = require('express')
const bodykit = require('../../dist/index.js')
const legacy = require('../../dist/legacy.js')
const multer = require('../../dist/multer.js')

const app = express()
const echo = (req, res) => res.json({ body: req.body ?? null, files: req.files ?? null, file: req.file ?? null })
app.post('/json', bodykit.json(), echo)
app.post('/legacy', legacy.urlencoded({ extended: true }), echo)
app.post('/multipart', bodykit.multipart({ files: true }), echo)
app.post('/multer', multer().single('f'), echo)
app.use((err, req, res, _next) => res.status(err.status ?? 500).json({ error: err.type ?? err.code ?? err.message }))

const server = app.listen(0, '127.0.0.1')
await new Promise((resolve) => server.once('listening', resolve))
const base = 'http://127.0.0.1:' + server.address().port
const post = async (path, body, headers = {}) => {
  const response = await fetch(base + path, { method: 'POST', body, headers })
  return { status: response.status, json: await response.json() }
}
const form = () => {
  const data = new FormData()
  data.append('name', 'bodykit')
  data.append('f', new Blob(['hello'], { type: 'text/plain' }), 'h.txt')
  return data
}

try {
  assert.deepEqual(await post('/json', '{"a":[1,2]}', { 'content-type': 'application/json' }), { status: 200, json: { body: { a: [1, 2] }, files: null, file: null } })
  assert.deepEqual(await post('/json', '{', { 'content-type': 'application/json' }), { status: 400, json: { error: 'entity.parse.failed' } })
  assert.deepEqual((await post('/legacy', 'a[b]=1', { 'content-type': 'application/x-www-form-urlencoded' })).json.body, { a: { b: '1' } })
  const multipart = await post('/multipart', form())
  assert.equal(multipart.status, 200)
  assert.deepEqual(multipart.json.body, { name: 'bodykit' })
  assert.deepEqual([multipart.json.files.length, multipart.json.files[0].originalName, multipart.json.files[0].size], [1, 'h.txt', 5])
  const uploaded = await post('/multer', form())
  assert.equal(uploaded.status, 200)
  assert.deepEqual(uploaded.json.body, { name: 'bodykit' })
  assert.deepEqual([uploaded.json.file.fieldname, uploaded.json.file.originalname, uploaded.json.file.size], ['f', 'h.txt', 5])
  const refused = new FormData()
  refused.append('other', new Blob(['x']), 'x.txt')
  assert.deepEqual(await post('/multer', refused), { status: 400, json: { error: 'LIMIT_UNEXPECTED_FILE' } })
  const runtime = globalThis.Bun ? 'Bun ' + globalThis.Bun.version : globalThis.Deno ? 'Deno ' + globalThis.Deno.version.deno : 'Node ' + process.version
  console.log('runtime smoke test passed on ' + runtime)
} finally {
  server.close()
}
