// Issue 17: Express 4 and 5 apps served through node:http2's compat API, with bodykit's parsers: JSON, a form
// and an over-limit upload answer as the same app does over HTTP/1.1.
import assert from 'node:assert/strict'
import http, { type RequestListener } from 'node:http'
import http2, { type ClientHttp2Session } from 'node:http2'
import { createRequire } from 'node:module'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import { entries as allEntries, type Factories } from '../hostile/helpers'
import { connect, h2Request, listen, postHttp1, testCertificate, type H2Server, forHttp2, withHttp2Reading } from './helpers'

// bodykit's reading of HTTP/2 bodies without a length, on in both entries (bodykit/legacy's default is off).
const entries = withHttp2Reading(allEntries, true)

const load = createRequire(__filename)
type ExpressApp = RequestListener & { request: object, response: object, post: (...args: unknown[]) => void, use: (...args: unknown[]) => void }
type Express = () => ExpressApp

/** The app both protocols serve: each parser on a route, a 1 KiB upload route, errors as `{ type }` with their status. */
function createApp (express: Express, parsers: Factories): ExpressApp {
  const app = express()
  const echo = (req: { body?: unknown }, res: { json: (value: unknown) => void }): void => { res.json({ body: req.body === undefined ? 'undefined' : req.body }) }
  app.post('/json', parsers.json(), echo)
  app.post('/form', parsers.urlencoded({ extended: true }), echo)
  app.post('/upload', parsers.raw({ type: () => true, limit: '1kb' }), echo)
  app.use((err: { status?: number, type?: string }, _req: unknown, res: { status: (code: number) => { json: (value: unknown) => void } }, _next: unknown) => {
    res.status(err.status ?? 500).json({ type: err.type ?? null })
  })
  return app
}

const EXPRESSES: Array<{ name: string, module: string, entry: 'default' | 'legacy' }> = [
  { name: 'Express 4', module: 'express-4', entry: 'legacy' },
  { name: 'Express 4', module: 'express-4', entry: 'default' },
  { name: 'Express 5', module: 'express', entry: 'default' },
  { name: 'Express 5', module: 'express', entry: 'legacy' }
]

for (const { name, module, entry: entryName } of EXPRESSES) {
  const entry = entries.find((e) => e.name === entryName) as (typeof entries)[number]
  describe(`${name} over HTTP/2 (TLS), ${entryName} entry: as over HTTP/1.1`, () => {
    let h2: H2Server, h11: http.Server, session: ClientHttp2Session
    before(async () => {
      const express = load(module) as Express
      h2 = await listen(http2.createSecureServer({ ...testCertificate(), allowHTTP1: true }, forHttp2(createApp(express, entry.bodykit)) as unknown as Parameters<typeof http2.createSecureServer>[1]), true)
      h11 = http.createServer(createApp(express, entry.bodykit))
      await new Promise<void>((resolve) => h11.listen(0, '127.0.0.1', resolve))
      session = await connect(h2.origin)
    })
    after(async () => {
      session.close()
      await h2.close()
      h11.closeAllConnections()
      h11.close()
    })

    const cases: Array<[string, string, Buffer]> = [
      ['/json', 'application/json', Buffer.from('{"express":{"over":"h2","n":[1,2]}}')],
      ['/form', 'application/x-www-form-urlencoded', Buffer.from('user[name]=Ada&tags[]=a&tags[]=b')],
      ['/json', 'application/json', Buffer.from('{"broken":')],
      ['/upload', 'application/octet-stream', Buffer.alloc(5 * 1024 * 1024, 1)]
    ]
    for (const length of [true, false]) {
      it(`JSON, a form, malformed JSON and a 5 MiB upload to a 1 KiB route, ${length ? 'with' : 'without'} content-length`, async () => {
        const port = (h11.address() as AddressInfo).port
        for (const [path, type, body] of cases) {
          const over2 = await h2Request(session, { path, headers: { 'content-type': type }, body, length })
          const over11 = await postHttp1(port, path, { 'content-type': type }, [body], !length)
          assert.deepEqual({ status: over2.status, json: over2.json }, over11, `${path} ${type}`)
        }
      })
    }
  })
}
