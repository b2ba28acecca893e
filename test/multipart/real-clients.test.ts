// Real clients send multipart forms to multipart() in an Express 5 app, both entries, over HTTP/1.1 and HTTP/2:
// curl -F, Node's fetch with FormData, Node's http2 client without a length, python's urllib and headless Chromium.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http, { type RequestListener } from 'node:http'
import http2 from 'node:http2'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import express from 'express'
import type { Browser } from 'playwright-core'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { chromiumPath, curl, curlPath, launchChromium, nodeFetch, python, pythonPath, skipReason } from '../clients/drivers'
import { connect, forHttp2, h2Request, listen, testCertificate, type H2Server } from '../http2/helpers'

const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-clients-'))
after(() => { fs.rmSync(folder, { recursive: true, force: true }) })
const photo = Buffer.from(Array.from({ length: 50_000 }, (_, i) => (i * 7) & 255))
const photoPath = path.join(folder, 'photo.png')
fs.writeFileSync(photoPath, photo)
const digest = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex').slice(0, 16)

/** The app: fields and files (on disk), described by name, type, size and a hash of the bytes; errors by type. */
function createApp (entry: typeof bodykit | typeof legacy, directory: string): RequestListener & { request: object, response: object } {
  const app = express()
  app.post('/upload', entry.multipart({ files: { storage: 'disk', directory, fileSizeLimit: '100kb' } }), (req, res) => {
    const files = ((req as unknown as { files: Array<{ fieldName: string, originalName: string, mimeType: string, size: number, path: string }> }).files)
    res.json({
      body: req.body,
      files: files.map((file) => ({ field: file.fieldName, name: file.originalName, type: file.mimeType, size: file.size, sha: digest(fs.readFileSync(file.path)) }))
    })
  })
  app.use((err: { status?: number, type?: string }, _req: unknown, res: express.Response, _next: unknown) => {
    res.status(err.status ?? 500).json({ type: err.type ?? null })
  })
  return app as unknown as RequestListener & { request: object, response: object }
}

const expectedPhoto = { field: 'photo', name: 'photo.png', type: 'image/png', size: photo.length, sha: digest(photo) }

for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
  describe(`real clients, multipart, ${name} entry`, () => {
    const directory = fs.mkdtempSync(path.join(folder, name + '-'))
    let h1: http.Server
    let h2c: H2Server
    let url: string
    before(async () => {
      h1 = http.createServer(createApp(entry, directory))
      await new Promise<void>((resolve) => h1.listen(0, '127.0.0.1', resolve))
      url = `http://127.0.0.1:${(h1.address() as AddressInfo).port}/upload`
      h2c = await listen(http2.createServer(forHttp2(createApp(entry, directory)) as unknown as Parameters<typeof http2.createServer>[0]), false)
    })
    after(async () => {
      h1.closeAllConnections()
      h1.close()
      await h2c.close()
    })
    const emptied = async (): Promise<void> => {
      // Files are removed once each response has finished; the client may have its answer a moment earlier.
      while (fs.readdirSync(directory).length > 0) await new Promise((resolve) => setTimeout(resolve, 5))
    }

    it('curl -F over HTTP/1.1 and h2c: fields, a file with its type and name, and a 413 that curl receives', { skip: skipReason('curl', curlPath) }, async () => {
      for (const target of [[url], ['--http2-prior-knowledge', h2c.origin + '/upload']]) {
        const seen = await curl(['-F', 'title=Zoë', '-F', 'tag=a', '-F', 'tag=b', '-F', `photo=@${photoPath};type=image/png`, ...target])
        assert.equal(seen.status, 200, JSON.stringify(seen))
        assert.deepEqual(seen.answer, { body: { title: 'Zoë', tag: ['a', 'b'] }, files: [expectedPhoto] })
        const renamed = await curl(['-F', `photo=@${photoPath};type=image/jpeg;filename=x.jpg`, ...target])
        assert.deepEqual(renamed.answer, { body: {}, files: [{ ...expectedPhoto, name: 'x.jpg', type: 'image/jpeg' }] })
        const big = path.join(folder, 'big.bin')
        fs.writeFileSync(big, Buffer.alloc(300_000, 1))
        const tooLarge = await curl(['-F', `photo=@${big}`, ...target])
        assert.equal(tooLarge.status, 413)
        assert.deepEqual(tooLarge.answer, { type: 'multipart.file.too.large' })
      }
      await emptied()
    })

    it('Node\'s fetch with FormData (a Blob and a File), over HTTP/1.1', async () => {
      const form = new FormData()
      form.append('title', 'naïve 漢字')
      form.append('photo', new File([photo], 'photo.png', { type: 'image/png' }))
      form.append('note', new Blob(['plain text']), 'note.txt')
      const seen = await nodeFetch(url, {}, form)
      assert.equal(seen.status, 200, JSON.stringify(seen))
      assert.deepEqual(seen.answer, {
        body: { title: 'naïve 漢字' },
        files: [expectedPhoto, { field: 'note', name: 'note.txt', type: 'application/octet-stream', size: 10, sha: digest(Buffer.from('plain text')) }]
      })
      await emptied()
    })

    it('Node\'s http2 client: a FormData body in many DATA frames, without a length', async () => {
      const form = new FormData()
      form.append('title', 'over h2')
      form.append('photo', new File([photo], 'photo.png', { type: 'image/png' }))
      const request = new Request('http://x/', { method: 'POST', body: form })
      const bytes = Buffer.from(await request.arrayBuffer())
      const session = await connect(h2c.origin)
      try {
        const pieces = Array.from({ length: 10 }, (_, i) => bytes.subarray(Math.floor(i * bytes.length / 10), Math.floor((i + 1) * bytes.length / 10)))
        // Read over HTTP/2 without a length in both entries here (bodykit/legacy leaves it to the app by default).
        const answer = await h2Request(session, { path: '/upload', headers: { 'content-type': request.headers.get('content-type') as string }, body: pieces, length: name === 'legacy' })
        assert.deepEqual({ status: answer.status, json: answer.json }, { status: 200, json: { body: { title: 'over h2' }, files: [expectedPhoto] } })
      } finally {
        session.close()
      }
      await emptied()
    })

    it('python\'s urllib with a hand-built body', { skip: skipReason('python3', pythonPath) }, async () => {
      const boundary = 'pythonBoundary7MA4YWxkTrZu0gW'
      const body = Buffer.concat([
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="title"\r\n\r\nfrom python\r\n`),
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="photo"; filename="photo.png"\r\nContent-Type: image/png\r\n\r\n`),
        photo,
        Buffer.from(`\r\n--${boundary}--\r\n`)
      ])
      const seen = await python(url, { 'Content-Type': 'multipart/form-data; boundary=' + boundary }, body)
      assert.equal(seen.status, 200, JSON.stringify(seen))
      assert.deepEqual(seen.answer, { body: { title: 'from python' }, files: [expectedPhoto] })
      await emptied()
    })
  })
}

describe('headless Chromium: fetch with FormData over HTTP/1.1 and HTTP/2 (TLS)', { skip: skipReason('chromium', chromiumPath) }, () => {
  let browser: Browser
  before(async () => { browser = await launchChromium(['--ignore-certificate-errors']) })
  after(async () => { await browser?.close() })

  for (const tls of [false, true]) {
    it(`${tls ? 'HTTP/2' : 'HTTP/1.1'}: a File and fields, and a file over the limit gets its 413 in the page`, async (t) => {
      const directory = fs.mkdtempSync(path.join(folder, 'chromium-'))
      const app = createApp(bodykit, directory)
      // The page is served by the same app: a GET of / gives an empty page to run fetch from.
      const handler: RequestListener = (req, res) => {
        if (req.method === 'GET') {
          res.setHeader('content-type', 'text/html')
          res.end('<!doctype html><title>multipart</title>')
          return
        }
        app(req, res)
      }
      const server = tls
        ? await listen(http2.createSecureServer({ ...testCertificate(), allowHTTP1: true }, forHttp2(Object.assign(handler, { request: app.request, response: app.response })) as unknown as Parameters<typeof http2.createSecureServer>[1]), true)
        : null
      const plain = tls ? null : http.createServer(handler)
      if (plain !== null) await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve))
      const origin = server?.origin ?? `http://127.0.0.1:${(plain?.address() as AddressInfo).port}`
      t.after(async () => {
        await server?.close()
        plain?.closeAllConnections()
        plain?.close()
      })
      const page = await browser.newPage()
      try {
        await page.goto(origin + '/')
        // Scripts as strings: tsx's transform of a function would not run in the page.
        const post = (size: number, name: string): Promise<{ status: number, json: unknown }> => page.evaluate(`(async () => {
          const form = new FormData()
          form.append('title', 'from Chromium')
          const bytes = new Uint8Array(${size}).map((_, i) => (i * 7) & 255)
          form.append('photo', new File([bytes], '${name}', { type: 'image/png' }))
          const res = await fetch('/upload', { method: 'POST', body: form })
          return { status: res.status, json: await res.json() }
        })()`)
        assert.deepEqual(await post(photo.length, 'photo.png'), { status: 200, json: { body: { title: 'from Chromium' }, files: [expectedPhoto] } })
        assert.deepEqual(await post(300_000, 'big.png'), { status: 413, json: { type: 'multipart.file.too.large' } })
        if (tls) assert.equal(await page.evaluate("performance.getEntriesByType('navigation')[0].nextHopProtocol"), 'h2')
      } finally {
        await page.close()
      }
    })
  }
})
