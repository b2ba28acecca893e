// Smoke tests of the built package through its name (package self-reference), from CommonJS.
/* global fetch */
'use strict'
const assert = require('node:assert/strict')
const http = require('node:http')
const { describe, it } = require('node:test')

const GENERIC_SPLIT = 'The bodyParser() generic has been split into individual middleware to use instead.'

/** Runs one middleware on a server, posts a body and returns the parsed req.body the handler saw. */
async function parseThrough (middleware, contentType, body) {
  const server = http.createServer((req, res) => {
    middleware(req, res, (err) => {
      res.setHeader('connection', 'close')
      res.end(JSON.stringify(err ? { error: err.type } : { body: req.body }))
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

describe('the exports map', () => {
  it('lists only ".", "./legacy" and "./package.json"', () => {
    const pkg = require('bodykit/package.json')
    assert.deepEqual([pkg.name, Object.keys(pkg.exports)], ['bodykit', ['.', './legacy', './package.json']])
  })

  it('refuses deep requires with ERR_PACKAGE_PATH_NOT_EXPORTED', () => {
    for (const deep of ['bodykit/dist/read.js', 'bodykit/dist/read', 'bodykit/dist/index.js', 'bodykit/dist/parsers/json.js', 'bodykit/src/index', 'bodykit/json', 'bodykit/lib/types/json']) {
      assert.throws(() => require(deep), { code: 'ERR_PACKAGE_PATH_NOT_EXPORTED' }, deep)
    }
  })
})
