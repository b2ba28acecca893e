// The `schema` option of the promise API, and in Express 5 and 4 apps with the README's error handler.
import assert from 'node:assert/strict'
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http'
import { describe, it } from 'node:test'
import type { TestContext } from 'node:test'
import express from 'express'
import * as v from 'valibot'
import { z } from 'zod'
import bodykit, { isBodyParserError, readJson, readRaw, readText, readUrlencoded } from '../../src/index'
import legacy from '../../src/legacy'
import { describeError, encode, listen } from '../helpers/server'

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'

const User = z.object({ name: z.string(), age: z.coerce.number().default(18) })

type Read = (req: IncomingMessage, res: ServerResponse) => Promise<unknown>

/** A node:http server whose handler awaits `read`, then answers the body (200) or the rejection, described. */
async function serveRead (t: TestContext, read: Read): Promise<Awaited<ReturnType<typeof listen>>> {
  return listen(t, (req, res) => {
    read(req, res).then((body) => {
      res.writeHead(200, { 'content-type': JSON_TYPE, connection: 'close' }).end(JSON.stringify({ body: encode(body), reqBody: 'body' in req }))
    }, (err: unknown) => {
      const { status, json } = describeError(err)
      res.writeHead(status, { 'content-type': JSON_TYPE, connection: 'close' }).end(JSON.stringify({ ...json, guarded: isBodyParserError(err) }))
    })
  })
}

describe('promise API with schema', () => {
  it('each reader resolves with the schema\'s output and leaves req.body alone', async (t) => {
    const cases: Array<[Read, string, string, unknown]> = [
      [async (req) => { const user = await readJson(req, { schema: User }); return { ...user, next: user.age + 1 } }, JSON_TYPE, '{"name":"tobi","age":"4"}', { name: 'tobi', age: 4, next: 5 }],
      [(req) => readRaw(req, { schema: z.instanceof(Buffer).transform((bytes) => bytes.length) }), 'application/octet-stream', 'abc', 3],
      [(req) => readText(req, { schema: z.string().toUpperCase() }), 'text/plain', 'hi', 'HI'],
      [(req) => readUrlencoded(req, { schema: v.object({ n: v.pipe(v.string(), v.toNumber()) }) }), FORM_TYPE, 'n=5', { n: 5 }]
    ]
    for (const [read, type, body, expected] of cases) {
      const server = await serveRead(t, read)
      assert.deepEqual((await server.post(type, body)).json, { body: expected, reqBody: false })
    }
  })

  it('rejects a refused body with the middleware\'s error, and checks undefined when there is nothing to read', async (t) => {
    const server = await serveRead(t, (req, res) => readJson(req, { schema: User, res }))
    const refused = await server.post(JSON_TYPE, '{"age":1}')
    assert.equal(refused.status, 400)
    assert.deepEqual([refused.json.type, refused.json.body, refused.json.guarded], ['entity.validation.failed', { age: 1 }, true])
    assert.match(String(refused.json.message), /^invalid body at name: /)
    const empty = await server.request({ method: 'GET' })
    assert.deepEqual([empty.status, empty.json.type, empty.json.body], [400, 'entity.validation.failed', { $undefined: true }])
    assert.match(String(empty.json.message), /^invalid body: /)

    const optional = await serveRead(t, (req) => readJson(req, { schema: User.optional() }))
    assert.deepEqual((await optional.request({ method: 'GET' })).json, { body: { $undefined: true }, reqBody: false })
  })

  it('a throwing schema rejects with its error as a 500, never an unhandled rejection', async (t) => {
    const broken = { '~standard': { version: 1 as const, vendor: 'broken', validate: async (): Promise<never> => { throw new Error('schema bug') } } }
    const server = await serveRead(t, (req) => readJson(req, { schema: broken }))
    const reply = await server.post(JSON_TYPE, '{}')
    assert.deepEqual([reply.status, reply.json.message, reply.json.expose, reply.json.guarded], [500, 'schema bug', false, false])
  })

  it('rejects an invalid schema with the factory\'s TypeError', async () => {
    await assert.rejects(readJson({} as IncomingMessage, { schema: {} as never }), { name: 'TypeError', message: /^option schema must be a Standard Schema/ })
  })
})

/** The README's error handler: a refused body answers its type and issues (keys only), other errors pass on. */
function onValidationError (err: unknown, _req: IncomingMessage, res: ServerResponse & { status: (code: number) => { json: (value: unknown) => void } }, next: (err?: unknown) => void): void {
  if (isBodyParserError(err) && err.type === 'entity.validation.failed') {
    res.status(400).json({
      error: err.type,
      issues: err.issues.map((issue) => ({ message: issue.message, path: issue.path?.map((segment) => typeof segment === 'object' ? segment.key : segment) }))
    })
    return
  }
  next(err)
}

describe('in Express', () => {
  it('Express 5: an app-wide json() and a per-route schema; the README\'s error handler', async (t) => {
    const app = express()
    app.use(bodykit.json())
    app.post('/users', bodykit.json({ schema: User }), (req, res) => { res.json({ name: req.body.name, age: req.body.age }) })
    app.post('/form', bodykit.urlencoded({ extended: false, schema: v.object({ name: v.string() }) }), (req, res) => { res.json({ name: req.body.name }) })
    app.use(onValidationError)
    const server = await listen(t, app as unknown as RequestListener)
    const ok = await server.request({ path: '/users', headers: { 'content-type': JSON_TYPE }, body: '{"name":"tobi"}' })
    assert.deepEqual([ok.status, ok.json], [200, { name: 'tobi', age: 18 }])
    const bad = await server.request({ path: '/users', headers: { 'content-type': JSON_TYPE }, body: '{"name":["x"]}' })
    assert.deepEqual([bad.status, bad.json], [400, { error: 'entity.validation.failed', issues: [{ message: 'Invalid input: expected string, received array', path: ['name'] }] }])
    const form = await server.request({ path: '/form', headers: { 'content-type': FORM_TYPE }, body: 'name=loki' })
    assert.deepEqual([form.status, form.json], [200, { name: 'loki' }])
    const missing = await server.request({ path: '/form', headers: { 'content-type': FORM_TYPE }, body: 'nom=loki' })
    assert.deepEqual([missing.status, missing.json.error, (missing.json.issues as Array<{ path: unknown }>)[0].path], [400, 'entity.validation.failed', ['name']])
  })

  it('Express 4 with bodykit/legacy: the same', async (t) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const express4 = require('express-4') as typeof express
    const app = express4()
    app.use(legacy.json())
    app.post('/users', legacy.json({ schema: User }), (req, res) => { res.json({ name: req.body.name, age: req.body.age }) })
    app.use(onValidationError)
    const server = await listen(t, app as unknown as RequestListener)
    const ok = await server.request({ path: '/users', headers: { 'content-type': JSON_TYPE }, body: '{"name":"tobi","age":"30"}' })
    assert.deepEqual([ok.status, ok.json], [200, { name: 'tobi', age: 30 }])
    // No body: legacy's req.body is {}, which the schema refuses.
    const none = await server.request({ path: '/users' })
    assert.deepEqual([none.status, none.json], [400, { error: 'entity.validation.failed', issues: [{ message: 'Invalid input: expected string, received undefined', path: ['name'] }] }])
  })
})

describe('the playground\'s schema card', () => {
  it('POST /try/schema answers the issues of a refused signup, and the output of a valid one', async (t) => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const { createPlayground } = require('../../examples/server.js') as { createPlayground: (parsers: unknown) => import('node:http').Server }
    const playground = createPlayground(bodykit)
    const server = await listen(t, (req, res) => { playground.emit('request', req, res) })
    const refused = await server.request({ path: '/try/schema', headers: { 'content-type': JSON_TYPE }, body: '{"name":"Ada","email":"ada@example","age":"12","langs":["en","fr","de","it"]}' })
    assert.equal(refused.status, 400)
    assert.equal(refused.json.type, 'entity.validation.failed')
    assert.deepEqual((refused.json.issues as Array<{ path: unknown[] }>).map((issue) => issue.path), [['email'], ['age'], ['langs']])
    const ok = await server.request({ path: '/try/schema', headers: { 'content-type': JSON_TYPE }, body: '{"name":" Ada ","email":"ada@example.com","age":"36"}' })
    assert.deepEqual([ok.status, ok.json], [200, { status: 200, type: null, body: { name: 'Ada', email: 'ada@example.com', age: 36, langs: [] } }])
  })
})
