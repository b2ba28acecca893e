// Type tests of the public API, checked by `tsc -p tsconfig.json` only (never run; not a *.test.ts).
// Each `@ts-expect-error` line must stay an error: if the types start accepting it, tsc fails.
import type { IncomingMessage, ServerResponse } from 'node:http'
import express from 'express'
import bodykit, { json, raw, text, urlencoded } from '../../src/index'
import legacy from '../../src/legacy'

type Middleware = bodykit.Middleware

// Every option of every parser, with its documented type.
const verify = (req: IncomingMessage, res: ServerResponse, buf: Buffer, encoding: string | null): void => {
  if (buf.length > 1e6 && encoding === null && req.method === 'PUT') res.statusCode = 413
}
const jsonOptions: bodykit.JsonOptions = {
  inflate: true,
  limit: '1mb',
  type: 'application/json',
  verify,
  reviver: (key, value) => (key === 'date' ? new Date(String(value)) : value),
  strict: false,
  defaultCharset: 'utf-8'
}
const rawOptions: bodykit.RawOptions = { inflate: false, limit: 1024, type: ['application/octet-stream', 'image/*'], verify }
const textOptions: bodykit.TextOptions = { defaultCharset: 'iso-8859-1', type: (req) => req.headers['content-type'] === 'text/csv', limit: '10kb' }
const urlencodedOptions: bodykit.UrlencodedOptions = {
  extended: true,
  parameterLimit: 50,
  depth: 5,
  defaultCharset: 'iso-8859-1',
  charsetSentinel: true,
  interpretNumericEntities: true,
  inflate: true,
  limit: 2048,
  type: '*/x-www-form-urlencoded',
  verify
}
const legacyUrlencodedOptions: legacy.UrlencodedOptions = { extended: false, parameterLimit: 10, depth: 3, limit: '5kb' }

// The factories take their options, nothing, undefined or null, and return a middleware.
const middlewares: Middleware[] = [
  json(jsonOptions), json(), json(undefined), json(null),
  raw(rawOptions), text(textOptions), urlencoded(urlencodedOptions), urlencoded({ extended: false }),
  bodykit.json(), bodykit.urlencoded({ extended: true }),
  legacy.json(jsonOptions), legacy.raw(rawOptions), legacy.text(textOptions), legacy.urlencoded(legacyUrlencodedOptions),
  legacy({ extended: true, limit: '1mb', strict: false, parameterLimit: 10 }), legacy(), legacy(null),
  raw({ discardLimit: '16mb', discardTime: 60_000 }), legacy.text({ discardLimit: Infinity, discardTime: undefined })
]
const asFunction: (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void = middlewares[0]

// The default module is callable only to throw.
const never: () => never = bodykit

// Wrong option types are rejected.
// @ts-expect-error inflate is a boolean
json({ inflate: 'yes' })
// @ts-expect-error limit is a number or a string
json({ limit: true })
// @ts-expect-error strict is a boolean
json({ strict: 1 })
// @ts-expect-error reviver is a function
json({ reviver: 'revive' })
// @ts-expect-error verify is a function
json({ verify: 'check' })
// @ts-expect-error type is a string, a list of strings or a function
json({ type: 42 })
// @ts-expect-error discardTime is a number of milliseconds
json({ discardTime: '30s' })
// @ts-expect-error unknown options are rejected
json({ strictt: true })
// @ts-expect-error raw has no reviver
raw({ reviver: (_key: string, value: unknown) => value })
// @ts-expect-error raw has no defaultCharset
raw({ defaultCharset: 'utf-8' })
// @ts-expect-error text has no strict
text({ strict: false })
// @ts-expect-error extended is a boolean
urlencoded({ extended: 'true' })
// @ts-expect-error parameterLimit is a number
urlencoded({ parameterLimit: '10' })
// @ts-expect-error depth is a number
urlencoded({ depth: '5' })
// @ts-expect-error charsetSentinel is a boolean
urlencoded({ charsetSentinel: 'yes' })
// @ts-expect-error the factories take an object
urlencoded('extended')

// The legacy urlencoded parser has none of the charset options of the default entry.
// @ts-expect-error legacy urlencoded has no charsetSentinel
legacy.urlencoded({ extended: true, charsetSentinel: true })
// @ts-expect-error legacy urlencoded has no interpretNumericEntities
legacy.urlencoded({ extended: true, interpretNumericEntities: true })
// @ts-expect-error legacy urlencoded has no defaultCharset
legacy.urlencoded({ extended: true, defaultCharset: 'iso-8859-1' })
// @ts-expect-error legacy's generic takes an options object
legacy('json')

// The middlewares plug into Express 5's types, app-wide and per route.
const app = express()
app.use(json())
app.use(urlencoded({ extended: false }))
app.use('/raw', raw({ type: 'application/vnd.custom-type' }))
const router = express.Router()
router.post('/login', urlencoded({ extended: false }), (req, res) => {
  res.json(req.body)
})
router.post('/text', text({ type: 'text/html' }), legacy.json(), (req, res) => {
  res.send(typeof req.body)
})
app.use(router)
app.use(legacy.json({ limit: 10 }))

export const checked = { middlewares, asFunction, never, app }
