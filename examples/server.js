// Demo server for `npm start`: node:http plus bodykit's four parsers, echoing each parsed body back as JSON.
'use strict'

const http = require('node:http')
const bodykit = require('bodykit')

const HOST = '127.0.0.1'
const PORT = Number(process.env.PORT ?? 3000)

// Tried in order; the first whose `type` matches the Content-Type reads the body, and the others then
// skip the request because its body has been read.
const parsers = [
  bodykit.json(),
  bodykit.urlencoded({ extended: true }),
  bodykit.text(),
  bodykit.raw()
]

/** Runs the parsers one after another, as Express would, and calls `done` with the first error. */
function parseBody (req, res, done) {
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

/** What `req.body` looks like as JSON: a Buffer (raw) as `{ "base64": ... }`, nothing parsed as `null`. */
function toJson (body) {
  if (Buffer.isBuffer(body)) return { base64: body.toString('base64') }
  return body === undefined ? null : body
}

function sendJson (res, status, value) {
  const payload = JSON.stringify(value)
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(payload)
  })
  res.end(payload)
}

const server = http.createServer(function handleRequest (req, res) {
  if (req.method !== 'POST' || req.url !== '/') {
    // The body is never read here, so read it off to let the connection be reused.
    req.resume()
    sendJson(res, 404, { message: 'Cannot ' + req.method + ' ' + req.url })
    return
  }
  parseBody(req, res, function respond (err) {
    if (err) {
      // Every bodykit error has `status` and `type`; zlib errors (a corrupt gzip body) have status 400 and a
      // `code` instead of a `type`. As in Express, a message is shown only when `expose` is true.
      const status = err.status || err.statusCode || 500
      const message = err.expose ? err.message : http.STATUS_CODES[status]
      sendJson(res, status, { type: err.type ?? null, message })
      return
    }
    sendJson(res, 200, toJson(req.body))
  })
})

server.listen(PORT, HOST, function printUsage () {
  const { port } = server.address()
  const url = 'http://' + HOST + ':' + port + '/'
  console.log('bodykit demo listening on ' + url)
  console.log('Try:')
  console.log("  curl -s -H 'Content-Type: application/json' -d '{\"name\":\"Ada\",\"tags\":[\"x\",\"y\"]}' " + url)
  console.log("  curl -s -d 'user[name]=Ada&user[langs][]=en&user[langs][]=fr' " + url)
  console.log("  printf '{\"zipped\":true}' | gzip | curl -s -H 'Content-Type: application/json' -H 'Content-Encoding: gzip' --data-binary @- " + url)
  console.log('Ctrl+C stops it.')
})

/** Stops accepting connections, lets requests in flight finish, then lets the process exit. */
function stop (signal) {
  console.log(signal + ' received, closing')
  server.close(function onClosed () {
    console.log('closed')
  })
  server.closeIdleConnections()
  // Keep-alive clients that hold a connection open must not keep the process alive for long.
  setTimeout(function closeRest () { server.closeAllConnections() }, 2000).unref()
}

process.once('SIGINT', stop)
process.once('SIGTERM', stop)
