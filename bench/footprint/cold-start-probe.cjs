// One fresh process's cold start: require() of a library, creating its middleware, and its first parsed request.
// Usage: BODYKIT_DIST=<abs path of dist> node cold-start-probe.cjs <case>; prints JSON { require, first, modules }
// (milliseconds since just before the require(), and the modules loaded since then); exits 1 when the request fails.
'use strict'
// What every app has loaded before any body parser: Node's http stack (Express, Koa and node:http servers all load it).
const http = require('node:http')
const { Socket } = require('node:net')
const { isDeepStrictEqual } = require('node:util')
const { performance } = require('node:perf_hooks')

const dist = process.env.BODYKIT_DIST
if (!dist) throw new Error('BODYKIT_DIST must name the absolute path of bodykit\'s dist/ folder')

/** A request as Node's server hands it: an IncomingMessage with headers, then its body pushed. */
function fakeRequest (contentType, body, method = 'POST') {
  const req = new http.IncomingMessage(new Socket())
  req.method = method
  req.url = '/'
  req.headers = { 'content-type': contentType, 'content-length': String(body.length) }
  // complete: the parser got the whole message, as Node's own parser says once the body ended (else 'aborted' fires on destroy).
  process.nextTick(() => { req.push(body); req.complete = true; req.push(null) })
  return req
}

const json = '{"hello":"world","n":[1,2,3]}'
const form = '--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X\r\nContent-Disposition: form-data; name="f"; filename="f.txt"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--X--\r\n'

/** Each case: what to require, and how to create the middleware and run one request through it. */
const cases = {
  bodykit: { load: () => require(dist + '/index.js'), express: (m) => m.json() },
  // An app that creates every parser, forms with files included, and reads one JSON request.
  'bodykit (every parser)': { load: () => require(dist + '/index.js'), express: (m) => createEvery(m, () => m.multipart({ files: true })) },
  'body-parser + multer': { load: () => ({ ...require('body-parser'), multer: require('multer') }), express: (m) => createEvery(m, () => m.multer().any()) },
  'body-parser': { load: () => require('body-parser'), express: (m) => m.json() },
  'bodykit/legacy': { load: () => require(dist + '/legacy.js'), express: (m) => m.json() },
  'body-parser-1': { load: () => require('body-parser-1'), express: (m) => m.json() },
  'bodykit/multer': { load: () => require(dist + '/multer.js'), multer: true },
  multer: { load: () => require('multer'), multer: true },
  'bodykit/koa': { load: () => require(dist + '/koa.js').bodyParser, koa: true },
  'koa-bodyparser': { load: () => require('koa-bodyparser'), koa: true },
  'bodykit/koa (6)': { load: () => require(dist + '/koa.js').bodyParser, koa: true, koaOptions: { encoding: 'utf-8' } },
  '@koa/bodyparser': { load: () => require('@koa/bodyparser').bodyParser, koa: true },
  'bodykit/koa (koaBody)': { load: () => require(dist + '/koa.js').koaBody, koa: true },
  'koa-body': { load: () => require('koa-body').koaBody, koa: true },
  'bodykit/h3': { load: () => require(dist + '/h3.js').readBody, h3: true },
  h3: { load: () => require('h3').readBody, h3: true }
}

/** json(), once raw(), text(), urlencoded({ extended: true }) and the forms' middleware (`createForms`) are created. */
function createEvery (m, createForms) {
  m.raw()
  m.text()
  m.urlencoded({ extended: true })
  createForms()
  return m.json()
}

function runExpress (middleware, done) {
  const req = fakeRequest('application/json', Buffer.from(json))
  middleware(req, new http.ServerResponse(req), (err) => done(err, req.body))
}

function runMulter (m, done) {
  const upload = m({ storage: m.memoryStorage() }).single('f')
  const req = fakeRequest('multipart/form-data; boundary=X', Buffer.from(form))
  upload(req, new http.ServerResponse(req), (err) => done(err, req.file && req.file.buffer.toString()))
}

function runH3 (h3, readBody, done) {
  const req = fakeRequest('application/json', Buffer.from(json))
  // h3 1.x's own event, as its app hands it to a handler.
  readBody(h3.createEvent(req, new http.ServerResponse(req))).then((body) => done(null, body), done)
}

function runKoa (app, factory, options, done) {
  const middleware = factory(options)
  const req = fakeRequest('application/json', Buffer.from(json))
  // Koa's own context (ctx.is, ctx.request.get, ctx.res...), as a Koa app hands it to its middleware.
  const ctx = app.createContext(req, new http.ServerResponse(req))
  Promise.resolve(middleware(ctx, async () => {})).then(() => done(null, ctx.request.body), done)
}

const name = process.argv[2]
const c = cases[name]
if (!c) throw new Error('unknown case ' + name)
// A Koa app has Koa loaded before its body parser, and with it type-is, mime-types, http-errors and content-type,
// which the Koa parsers share: loading Koa inside the timing would charge it to whichever case loads those first.
const app = c.koa ? new (require('koa'))() : null
// An h3 app has h3 loaded (bodykit/h3 uses the app's h3 for its errors): loaded here for both cases, as Koa is.
const h3 = c.h3 ? require('h3') : null
let answered = false
const preloaded = Object.keys(require.cache).length
const t0 = performance.now()
const m = c.load()
const t1 = performance.now()
const finish = (err, body) => {
  const t2 = performance.now()
  answered = true
  if (err) { console.error(err); process.exit(1) }
  // Every case is asked the same thing: a parser that answered something else did not do the work being timed.
  const expected = c.multer ? 'hello' : JSON.parse(json)
  if (!isDeepStrictEqual(body, expected)) { console.error('parsed ' + JSON.stringify(body) + ', expected ' + JSON.stringify(expected)); process.exit(1) }
  process.stdout.write(JSON.stringify({ require: t1 - t0, first: t2 - t0, modules: Object.keys(require.cache).length - preloaded }) + '\n')
}
// A middleware that never calls back leaves the loop empty: say so instead of exiting 0 with nothing printed.
process.on('exit', () => { if (!answered) { console.error('the first request never finished'); process.exitCode = 1 } })
if (c.express) runExpress(c.express(m), finish)
else if (c.multer) runMulter(m, finish)
else if (c.h3) runH3(h3, m, finish)
else runKoa(app, m, c.koaOptions, finish)
