// Demo server for `npm start`: a playground page at GET /, and POST / echoing each parsed body back as JSON (node:http, or node:http2 with HTTP2=1).
'use strict'

const fs = require('node:fs')
const http = require('node:http')
const http2 = require('node:http2')
const path = require('node:path')
const { createSelfSignedCertificate } = require('./self-signed')

const { z } = require('zod')

const HOST = '127.0.0.1'
const PORT = Number(process.env.PORT ?? 3000)
const PAGE = path.join(__dirname, 'playground.html')

/** What `req.body` looks like as JSON: a Buffer (raw) as `{ "base64": ... }`, nothing parsed as `null`. */
function toJson (body) {
  if (Buffer.isBuffer(body)) return { base64: body.toString('base64') }
  return body === undefined ? null : body
}

function send (res, status, type, payload) {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(payload) })
  res.end(payload)
}

function sendJson (res, status, value) {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value))
}

/** Runs the parsers one after another, as Express would, and calls `done` with the first error. */
function runParsers (parsers, req, res, done) {
  let index = 0
  function next (err) {
    if (err || index === parsers.length) {
      done(err)
      return
    }
    parsers[index++](req, res, next)
  }
  next()
}

/** The signup the schema card posts: what `req.body` must be, with a coerced age and defaults. */
const Signup = z.object({
  name: z.string().trim().min(1),
  email: z.email(),
  age: z.coerce.number().int().min(13).default(18),
  langs: z.array(z.string()).max(3).default([])
})

/**
 * An error as the client sees it: its status, and `{ type, message }` (a message only when `expose` is true,
 * as in Express); a refused body adds its issues, each as `{ path, message }` with the path's keys.
 */
function describeError (err) {
  // Every bodykit error has `status` and `type`; zlib errors (a corrupt gzip body) have status 400 and a
  // `code` instead of a `type`.
  const status = err.status || err.statusCode || 500
  const answer = { status, type: err.type ?? null, message: err.expose ? err.message : http.STATUS_CODES[status] }
  if (err.type === 'entity.validation.failed') {
    answer.issues = err.issues.map((issue) => ({
      path: (issue.path ?? []).map((segment) => typeof segment === 'object' ? segment.key : segment),
      message: issue.message
    }))
  }
  return answer
}

/**
 * The demo server, built on a body-parser-compatible module (`require('bodykit')` by default; the tests pass
 * body-parser and the legacy entry too, to compare what a browser sees). With `options.tls` (`{ key, cert }`) it
 * is an HTTP/2 server over TLS (node:http2's compatibility API; HTTP/1.1 clients are served too), else node:http.
 */
function createPlayground (bodyParser = require('bodykit'), options = {}) {
  const handleRequest = createHandler(bodyParser)
  return options.tls
    ? http2.createSecureServer({ ...options.tls, allowHTTP1: true }, handleRequest)
    : http.createServer(handleRequest)
}

/** What the page shows of uploaded files (multipart): their names, types and sizes, not their bytes. */
function describeFiles (files) {
  if (!Array.isArray(files)) return {}
  return { files: files.map(({ fieldName, originalName, mimeType, size }) => ({ fieldName, originalName, mimeType, size })) }
}

/** The playground's request handler; the same function serves HTTP/1.1 and HTTP/2 requests. */
function createHandler (bodyParser) {
  // POST / : tried in order; the first whose `type` matches the Content-Type reads the body, and the others
  // then skip the request because its body has been read.
  const echo = [bodyParser.json(), bodyParser.urlencoded({ extended: true }), bodyParser.text(), bodyParser.raw()]
  // The playground's routes: one parser each, and a chain with a small limit for uploads.
  const routes = {
    '/try/form': [bodyParser.urlencoded({ extended: true })],
    '/try/latin1': [bodyParser.urlencoded({ extended: true, charsetSentinel: true, interpretNumericEntities: true })],
    '/try/text': [bodyParser.text()],
    '/try/json': [bodyParser.json()],
    '/try/schema': [bodyParser.json({ schema: Signup })],
    '/try/upload': [
      bodyParser.json({ limit: '1kb' }),
      bodyParser.urlencoded({ extended: true, limit: '1kb' }),
      bodyParser.text({ limit: '1kb' }),
      bodyParser.raw({ type: () => true, limit: '1kb' })
    ],
    // body-parser (which the client tests run this page against too) has no multipart parser.
    ...(bodyParser.multipart ? { '/try/multipart': [bodyParser.multipart({ files: { fileSizeLimit: '100kb', fileLimit: 1 } })] } : {})
  }
  const page = fs.readFileSync(PAGE)
  // What the last /try/ request gave (a beacon's sender never sees its answer).
  let last = null

  return function handleRequest (req, res) {
    const url = req.url.split('?')[0]
    if (req.method === 'GET' && url === '/') {
      send(res, 200, 'text/html; charset=utf-8', page)
      return
    }
    if (req.method === 'GET' && url === '/try/last') {
      sendJson(res, 200, last)
      return
    }
    if (req.method === 'POST' && url === '/') {
      runParsers(echo, req, res, function respond (err) {
        if (err) {
          const { status, type, message } = describeError(err)
          sendJson(res, status, { type, message })
          return
        }
        sendJson(res, 200, toJson(req.body))
      })
      return
    }
    if (req.method === 'POST' && Object.hasOwn(routes, url)) {
      // The playground's answers carry their status too: a form's result is read from the page it loads.
      runParsers(routes[url], req, res, function respond (err) {
        last = err ? describeError(err) : { status: 200, type: null, body: toJson(req.body), ...describeFiles(req.files) }
        sendJson(res, last.status, last)
      })
      return
    }
    // The body is never read here, so read it off to let the connection be reused.
    req.resume()
    sendJson(res, 404, { message: 'Cannot ' + req.method + ' ' + req.url })
  }
}

/** Starts the demo on PORT and prints how to use it; Ctrl+C stops it. */
function main () {
  // HTTP2=1: HTTP/2 over TLS, with a certificate made now for this run (browsers need it: they speak h2 only over TLS).
  const overHttp2 = process.env.HTTP2 === '1'
  const server = createPlayground(undefined, overHttp2 ? { tls: createSelfSignedCertificate() } : {})
  const sessions = new Set()
  server.on('session', (session) => {
    sessions.add(session)
    session.on('close', () => sessions.delete(session))
  })
  server.listen(PORT, HOST, function printUsage () {
    const { port } = server.address()
    const url = (overHttp2 ? 'https://' : 'http://') + HOST + ':' + port + '/'
    const curl = overHttp2 ? 'curl -sk --http2' : 'curl -s'
    if (overHttp2) {
      console.log('bodykit playground over HTTP/2: open ' + url + ' in a browser and accept its self-signed certificate')
      console.log('  (for a headless Chromium: --ignore-certificate-errors)')
    } else {
      console.log('bodykit playground: open ' + url + ' in a browser')
    }
    console.log('Or try POST ' + url + ' with curl:')
    console.log('  ' + curl + " -H 'Content-Type: application/json' -d '{\"name\":\"Ada\",\"tags\":[\"x\",\"y\"]}' " + url)
    console.log('  ' + curl + " -d 'user[name]=Ada&user[langs][]=en&user[langs][]=fr' " + url)
    console.log("  printf '{\"zipped\":true}' | gzip | " + curl + " -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' --data-binary @- " + url)
    if (overHttp2) console.log("  printf '{\"streamed\":true}' | " + curl + " -H 'Content-Type: application/json' -X POST -T - " + url + '   (no Content-Length)')
    console.log('Ctrl+C stops it.')
  })

  /** Stops accepting connections, lets requests in flight finish, then lets the process exit. */
  function stop (signal) {
    console.log(signal + ' received, closing')
    server.close(function onClosed () {
      console.log('closed')
    })
    if (overHttp2) {
      for (const session of sessions) session.close()
    } else {
      server.closeIdleConnections()
    }
    // Keep-alive clients that hold a connection open must not keep the process alive for long.
    setTimeout(function closeRest () {
      if (overHttp2) for (const session of sessions) session.destroy()
      else server.closeAllConnections()
    }, 2000).unref()
  }

  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
}

module.exports = { createPlayground }

if (require.main === module) main()
