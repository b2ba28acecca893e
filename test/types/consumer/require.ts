// Consumer fixture (shared with body-parser): `import x = require()`, app-wide and per-route parsers, every option.
import bodyParser = require('bodykit')
import express = require('express')
import type { NextHandleFunction } from 'connect'

const app = express()

// App-wide parsers, the way most Express apps start.
app.use(bodyParser.json())
app.use(bodyParser.urlencoded({ extended: true }))
app.use(bodyParser.text({ type: 'text/*', defaultCharset: 'utf-8' }))
app.use(bodyParser.raw({ type: 'application/octet-stream', limit: '5mb', inflate: false }))

// A limit from the environment: `string | undefined`, accepted even with exactOptionalPropertyTypes.
app.use(bodyParser.json({ limit: process.env.BODY_LIMIT }))

// Per-route parsers with custom `type` lists and functions of the request.
const router = express.Router()
router.post('/vendor', bodyParser.json({ type: ['application/json', 'application/*+json'] }), (req, res) => {
  res.json(req.body)
})
router.post('/csv', bodyParser.text({ type: (req) => req.headers['content-type'] === 'text/csv' }), (req, res) => {
  res.send(typeof req.body === 'string' ? req.body.length : 0)
})
router.put('/blob', bodyParser.raw({ type: () => true, limit: 1024 * 1024 }), (req: express.Request, res: express.Response) => {
  res.send(Buffer.isBuffer(req.body) ? req.body.length : 0)
})
router.post('/form', bodyParser.urlencoded({ extended: false, parameterLimit: 10, limit: '10kb' }), (req, res) => {
  res.send(req.body.user)
})
app.use('/api', router)

// Every option of every parser, as @types/body-parser names them.
const common: bodyParser.Options = { inflate: true, limit: 1024, type: 'application/json' }
const jsonOptions: bodyParser.OptionsJson = { ...common, strict: false, reviver: (_key, value) => value }
const textOptions: bodyParser.OptionsText = { defaultCharset: 'iso-8859-1', limit: '1kb' }
const formOptions: bodyParser.OptionsUrlencoded = { extended: true, parameterLimit: 100, inflate: false }
app.use(bodyParser.json(jsonOptions), bodyParser.text(textOptions), bodyParser.urlencoded(formOptions), bodyParser.raw(common))

// The module itself, typed with its interface.
const parsers: bodyParser.BodyParser = bodyParser
const handlers: express.RequestHandler[] = [parsers.json(), parsers.raw(), parsers.text(), parsers.urlencoded()]
app.use(handlers)

// The middleware is connect's NextHandleFunction, as @types/body-parser declares it.
const connectStyle: NextHandleFunction = bodyParser.json()
app.use(connectStyle)

export = app
