// Consumer fixture (bodykit only): rawBody with RawBodyRequest, the poisoning options and the promise API, in an Express app and node:http.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import express = require('express')
import { createHmac, timingSafeEqual } from 'node:crypto'
import http = require('node:http')

const app = express()

// A signed webhook: the raw bytes next to the parsed body, typed without a global augmentation.
app.post('/webhook', bodykit.json({ rawBody: true }), (req: bodykit.RawBodyRequest<express.Request>, res) => {
  const expected = createHmac('sha256', 'secret').update(req.rawBody ?? Buffer.alloc(0)).digest()
  const given = Buffer.from(String(req.headers['x-signature'] ?? ''), 'hex')
  res.sendStatus(given.length === expected.length && timingSafeEqual(given, expected) ? 204 : 401)
})
app.use('/legacy', legacy.raw({ rawBody: false }), legacy.json({ onProtoPoisoning: 'remove', onConstructorPoisoning: 'error' }))

const action: bodykit.PoisoningAction = process.env.POISONING === 'error' ? 'error' : 'remove'
app.use(bodykit.json({ onProtoPoisoning: action, onConstructorPoisoning: action, strict: false }))

// The promise API in a plain node:http handler.
export const server = http.createServer(async (req, res) => {
  try {
    const options: bodykit.ReadJsonOptions = { limit: '10kb', res, onProtoPoisoning: 'error' }
    const body: unknown = await bodykit.readJson(req, options)
    const form: Record<string, unknown> | undefined = await bodykit.readUrlencoded(req, { extended: true })
    const bytes: Buffer | undefined = await bodykit.readRaw(req, { type: 'application/pdf' })
    const note: string | undefined = await bodykit.readText(req, { res })
    res.end(JSON.stringify({ body, form, size: bytes?.length, note }))
  } catch (err) {
    res.statusCode = bodykit.isBodyParserError(err) ? err.status : 500
    res.end()
  }
})

export default app
