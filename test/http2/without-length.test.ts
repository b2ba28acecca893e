// Issue 25: an HTTP/2 body without Content-Length is read or left to the app by one switch, readHttp2WithoutLength:
// on in bodykit, off in bodykit/legacy (body-parser 1.x), so an Express app that reads the stream itself after the
// parser (the workaround for body-parser's gap) keeps working; either entry can turn it the other way.
import assert from 'node:assert/strict'
import http, { type RequestListener } from 'node:http'
import http2 from 'node:http2'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { describe, it } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { connect, forHttp2, h2Request, listen, postHttp1, testCertificate } from './helpers'

const load = createRequire(__filename)
type ExpressApp = RequestListener & { request: object, response: object, post: (...args: unknown[]) => void, use: (...args: unknown[]) => void }
type Express = () => ExpressApp
type Entry = typeof bodykit | typeof legacy

/** The workaround: the parser first, then the handler reads whatever of the stream is left. */
function createApp (express: Express, entry: Entry, switchOption: boolean | undefined): ExpressApp {
  const app = express()
  const options = switchOption === undefined ? {} : { readHttp2WithoutLength: switchOption }
  const readStreamToo = async (req: http.IncomingMessage & { body?: unknown }, res: { json: (value: unknown) => void }): Promise<void> => {
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    res.json({ body: req.body === undefined ? 'undefined' : req.body, streamed: Buffer.concat(chunks).toString() })
  }
  app.post('/json', entry.json(options), readStreamToo)
  app.post('/form', entry.urlencoded({ extended: false, ...options }), readStreamToo)
  return app
}

const EXPRESSES = [['Express 4', 'express-4'], ['Express 5', 'express']] as const
const ENTRIES = [['default', bodykit, true], ['legacy', legacy, false]] as const

for (const [expressName, module] of EXPRESSES) {
  for (const [entryName, entry, defaultOn] of ENTRIES) {
    describe(`${expressName} over HTTP/2, ${entryName} entry: readHttp2WithoutLength (default ${defaultOn ? 'on' : 'off'})`, () => {
      for (const switchOption of [undefined, true, false]) {
        const on = switchOption ?? defaultOn
        it(`${switchOption === undefined ? 'by default' : 'set to ' + switchOption}: ${on ? 'the parser reads the body; the handler\'s own read ends at once' : 'the parser skips it; the handler reads every byte'}`, async (t) => {
          const express = load(module) as Express
          const h2 = await listen(http2.createSecureServer({ ...testCertificate() }, forHttp2(createApp(express, entry, switchOption)) as unknown as Parameters<typeof http2.createSecureServer>[1]), true)
          const session = await connect(h2.origin)
          t.after(async () => {
            session.close()
            await h2.close()
          })
          const json = '{"sent":"without a length","n":[1,2]}'
          const form = 'a=1&b=2'
          const unread = entryName === 'legacy' ? {} : 'undefined'
          for (const [path, type, body, parsed] of [['/json', 'application/json', json, { sent: 'without a length', n: [1, 2] }], ['/form', 'application/x-www-form-urlencoded', form, { a: '1', b: '2' }]] as const) {
            const answer = await h2Request(session, { path, headers: { 'content-type': type }, body: [body.slice(0, 5), body.slice(5)] })
            assert.equal(answer.status, 200)
            assert.deepEqual(answer.json, on ? { body: parsed, streamed: '' } : { body: unread, streamed: body })
            // With a length, both positions read the body, as body-parser does.
            const sized = await h2Request(session, { path, headers: { 'content-type': type }, body, length: true })
            assert.deepEqual(sized.json, { body: parsed, streamed: '' })
          }
        })
      }
    })
  }
}

describe('readHttp2WithoutLength', () => {
  it('must be a boolean, in every parser of both entries and in the readers', async () => {
    for (const entry of [bodykit, legacy] as const) {
      for (const factory of [entry.json, entry.raw, entry.text, entry.urlencoded, entry.multipart] as Array<(options: object) => unknown>) {
        for (const bad of ['yes', 1, null]) assert.throws(() => factory({ readHttp2WithoutLength: bad }), { name: 'TypeError', message: 'option readHttp2WithoutLength must be a boolean' })
        assert.equal(typeof factory({ readHttp2WithoutLength: false }), 'function')
      }
    }
    await assert.rejects(bodykit.readJson({} as http.IncomingMessage, { readHttp2WithoutLength: 'no' as unknown as boolean }), TypeError)
  })

  it('leaves HTTP/1.1 alone: a chunked body is read in both positions', async (t) => {
    const app = (switchOption: boolean): http.Server => http.createServer((req, res) => {
      legacy.json({ readHttp2WithoutLength: switchOption })(req, res, (err?: unknown) => {
        res.end(JSON.stringify(err === undefined ? (req as { body?: unknown }).body : { error: true }))
      })
    })
    for (const switchOption of [true, false]) {
      const server = app(switchOption)
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
      t.after(() => { server.close() })
      const answer = await postHttp1((server.address() as AddressInfo).port, '/', { 'content-type': 'application/json' }, [Buffer.from('{"chun'), Buffer.from('ked":1}')], true)
      assert.deepEqual(answer.json, { chunked: 1 })
    }
  })

  it('the promise API: resolves undefined with the switch off, the body with it on', async (t) => {
    const outcomes: unknown[] = []
    const server = http2.createServer((req, res) => {
      const on = req.url === '/on'
      bodykit.readJson(req as unknown as http.IncomingMessage, { readHttp2WithoutLength: on }).then(async (body) => {
        let streamed = ''
        for await (const chunk of req) streamed += String(chunk)
        outcomes.push({ on, body, streamed })
        res.end('{}')
      }, () => { res.statusCode = 500; res.end('{}') })
    })
    const h2 = await listen(server, false)
    const session = await connect(h2.origin)
    t.after(async () => {
      session.close()
      await h2.close()
    })
    for (const path of ['/on', '/off']) await h2Request(session, { path, headers: { 'content-type': 'application/json' }, body: '{"x":1}' })
    assert.deepEqual(outcomes, [{ on: true, body: { x: 1 }, streamed: '' }, { on: false, body: undefined, streamed: '{"x":1}' }])
  })
})
