// A response sent while the body is still arriving (a timeout middleware's 503, with Connection: close): the read still ends once, its files removed.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import { openFds, settleFds } from '../multipart/helpers'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-answered-first-'))
after(() => { fs.rmSync(directory, { recursive: true, force: true }) })

const FORM_START = '--B\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello'

const cases: Array<{ name: string, middleware: Middleware, type: string, start: string }> = [
  { name: 'json()', middleware: bodykit.json() as Middleware, type: 'application/json', start: '{"a":' },
  { name: 'legacy json()', middleware: legacy.json() as Middleware, type: 'application/json', start: '{"a":' },
  { name: 'text()', middleware: bodykit.text() as Middleware, type: 'text/plain', start: 'abc' },
  { name: 'raw()', middleware: bodykit.raw() as Middleware, type: 'application/octet-stream', start: 'abc' },
  { name: 'urlencoded()', middleware: bodykit.urlencoded() as Middleware, type: 'application/x-www-form-urlencoded', start: 'a=1&b=' },
  { name: 'multipart() to disk', middleware: bodykit.multipart({ files: { storage: 'disk', directory } }) as Middleware, type: 'multipart/form-data; boundary=B', start: FORM_START },
  { name: 'bodykit/multer to disk', middleware: multer({ dest: directory }).any() as unknown as Middleware, type: 'multipart/form-data; boundary=B', start: FORM_START }
]

/**
 * Serves one request: the app answers 503 with Connection: close 50 ms after the middleware began, while the client
 * has sent only the start of a 100 kB body. Resolves with what `next` got and how often, once the socket closed.
 */
function answeredFirst (middleware: Middleware, type: string, start: string): Promise<{ calls: number, err: { status?: number, type?: string } | undefined }> {
  return new Promise((resolve) => {
    let calls = 0
    let err: { status?: number, type?: string } | undefined
    const server = http.createServer((req, res) => {
      middleware(req, res, (error) => {
        calls++
        err = error as typeof err
        // A second call would come within a turn or two of the first.
        setTimeout(() => { server.close(); resolve({ calls, err }) }, 50)
      })
      setTimeout(() => {
        res.writeHead(503, { Connection: 'close' })
        res.end('busy')
      }, 50)
    })
    server.listen(0, '127.0.0.1', () => {
      const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
      socket.on('error', () => {})
      socket.on('data', () => {})
      socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 100000\r\n\r\n${start}`)
    })
  })
}

describe('a response sent before the body ended', () => {
  for (const { name, middleware, type, start } of cases) {
    it(`${name}: next once with request.aborted once the connection closes; no file or descriptor left`, async () => {
      const baseline = openFds()
      const { calls, err } = await answeredFirst(middleware, type, start)
      assert.equal(calls, 1)
      assert.equal(err?.status, 400)
      if (!name.includes('multer')) assert.equal(err?.type, 'request.aborted')
      assert.deepEqual(fs.readdirSync(directory), [])
      // Sockets of earlier requests may close meanwhile: at most the baseline.
      assert.ok(await settleFds(baseline) <= baseline)
    })
  }
})
