// Consumer fixture (shared with body-parser): `import * as`, the webhook recipe (`verify` keeping the raw body) and revivers.
import * as bodyParser from 'bodykit'
import express = require('express')
import type { IncomingMessage, ServerResponse } from 'node:http'

/** The request of a route whose `verify` kept the raw body. */
interface RawBodyRequest extends express.Request {
  rawBody?: Buffer
}

const app = express()

// The usual webhook recipe: verify typed with Express's Request/Response and `encoding: string`.
app.post('/webhook', bodyParser.json({
  verify: (req: RawBodyRequest, _res: express.Response, buf: Buffer, encoding: string) => {
    req.rawBody = buf
    if (encoding.toLowerCase() !== 'utf-8') throw new Error('unexpected charset ' + encoding)
  }
}), (req: RawBodyRequest, res) => {
  res.json({ bytes: req.rawBody?.length, body: req.body })
})

// The same, written with Node's types and an inferred `encoding`, keeping the raw text.
function keepRawText (req: IncomingMessage & { rawText?: string }, _res: ServerResponse, buf: Buffer, encoding: string): void {
  req.rawText = buf.toString(encoding as BufferEncoding)
}
app.use(bodyParser.json({ verify: keepRawText }))
app.use(bodyParser.urlencoded({
  extended: false,
  verify (req, _res, buf, encoding) {
    if (buf.length > 1000 && encoding && req.method === 'POST') throw new Error('too long')
  }
}))
// Loosely typed verify, as many snippets have it.
app.use(bodyParser.raw({ verify: (req: any, _res: any, buf: Buffer) => { req.rawBody = buf } })) // eslint-disable-line @typescript-eslint/no-explicit-any

// Date revivers, with and without annotations.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}T/
app.use('/events', bodyParser.json({ reviver: (_key, value) => typeof value === 'string' && ISO_DATE.test(value) ? new Date(value) : value }))
app.use('/dated', bodyParser.json({ reviver: (key: string, value: any) => key === 'date' ? new Date(value) : value })) // eslint-disable-line @typescript-eslint/no-explicit-any
app.use('/plain', bodyParser.json({
  reviver (key, value) {
    return key.endsWith('At') ? new Date(value) : value
  }
}))

export { app }
