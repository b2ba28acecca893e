// Child process of test/loading/first-request.test.ts: loads one entry, serves one request with it over node:http, and prints what Node loaded.
// Each entry is required inside its case, so that the process loads only that entry, when the case runs.
/* eslint-disable @typescript-eslint/no-require-imports */
import http from 'node:http'
import path from 'node:path'

const src = path.join(__dirname, '..', '..', 'src')
type Handler = (req: http.IncomingMessage, res: http.ServerResponse, done: (err: unknown, body: unknown) => void) => void

/** A body-parser-style factory of an entry, created with options, for one request whose `req.body` is reported. */
function middlewareCase (entry: string, factory: string, options: unknown, type: string, body: string): { handler: Handler, type: string, body: string } {
  const parse = require(path.join(src, entry))[factory](options)
  return { handler: (req, res, done) => parse(req, res, (err: unknown) => done(err, (req as { body?: unknown }).body)), type, body }
}

/** bodykit/koa on a JSON request: the module's function (koa-bodyparser 4's) or its named export (@koa/bodyparser 6's). */
function koaJsonCase (named: boolean, options?: unknown): { handler: Handler, type: string, body: string } {
  const koa = require(path.join(src, 'koa.ts'))
  const middleware = (named ? koa.bodyParser : koa)(options)
  // The context koa-bodyparser reads, as Koa makes it for a JSON request (Koa itself would load type-is and more).
  return {
    handler: (req, _res, done) => {
      const request = { req, headers: req.headers, is: (...types: unknown[]) => types.flat().some((t) => /json/.test(String(t))) ? 'json' : false }
      const ctx = { req, request, method: req.method, headers: req.headers, is: request.is }
      Promise.resolve(middleware(ctx, async () => {})).then(() => done(null, (request as { body?: unknown }).body), (err: unknown) => done(err, null))
    },
    type: 'application/json',
    body: '{"a":1}'
  }
}

/** Each case: the middleware a fresh process creates, and the request it then gets. */
const cases: Record<string, () => { handler: Handler, type: string, body: string }> = {
  'default json': () => middlewareCase('index.ts', 'json', undefined, 'application/json', '{"a":[1,2]}'),
  'legacy json': () => middlewareCase('legacy.ts', 'json', undefined, 'application/json', '{"a":[1,2]}'),
  'default json, type given as an extension name': () => middlewareCase('index.ts', 'json', { type: 'json' }, 'application/json', '{"a":1}'),
  'default urlencoded, nested': () => middlewareCase('index.ts', 'urlencoded', { extended: true }, 'application/x-www-form-urlencoded', 'a[b]=1&c=2'),
  'readJson': () => {
    const { readJson } = require(path.join(src, 'index.ts'))
    return { handler: (req, _res, done) => { readJson(req).then((body: unknown) => done(null, body), (err: unknown) => done(err, null)) }, type: 'application/json', body: '{"a":1}' }
  },
  'multer memory upload': () => {
    const multer = require(path.join(src, 'multer.ts'))
    const upload = multer({ storage: multer.memoryStorage() }).single('f')
    return {
      handler: (req, res, done) => upload(req, res, (err: unknown) => {
        const r = req as { body?: unknown, file?: { buffer: Buffer } }
        done(err, { body: { ...r.body as object }, file: r.file?.buffer.toString() })
      }),
      type: 'multipart/form-data; boundary=X',
      body: '--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\n\r\nhello\r\n--X--\r\n'
    }
  },
  'koa bodyParser json': () => koaJsonCase(false),
  'koa named bodyParser json': () => koaJsonCase(true),
  'koa bodyParser json only': () => koaJsonCase(false, { enableTypes: ['json'] })
}

const make = cases[process.argv[2]]
if (make === undefined) throw new Error('no case ' + process.argv[2])
const { handler, type, body } = make()
const server = http.createServer((req, res) => {
  handler(req, res, (err, parsed) => {
    res.end()
    server.close()
    const loaded = Object.keys(require.cache)
    const packages = [...new Set(loaded.flatMap((file) => {
      const at = file.lastIndexOf('node_modules' + path.sep)
      if (at === -1) return []
      const parts = file.slice(at + 13).split(path.sep)
      return [parts[0].startsWith('@') ? parts[0] + '/' + parts[1] : parts[0]]
    }))].sort()
    const modules = loaded.filter((file) => file.startsWith(src + path.sep)).map((file) => path.relative(src, file).split(path.sep).join('/')).sort()
    process.stdout.write(JSON.stringify({ error: err ? String(err) : null, parsed, packages, modules }))
  })
})
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as { port: number }
  const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': type, 'content-length': Buffer.byteLength(body) } })
  req.on('response', (res) => res.resume())
  req.end(body)
})
