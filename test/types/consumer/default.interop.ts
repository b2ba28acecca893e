// Consumer fixture (shared with body-parser; esModuleInterop or bundler only): the default import, in a CommonJS project.
import bodyParser from 'bodykit'
import express from 'express'

const app = express()
app.use(bodyParser.json({ limit: '1mb' }))
app.post('/login', bodyParser.urlencoded({ extended: false }), (req, res) => {
  res.send('hello ' + String(req.body.user))
})

const options: bodyParser.OptionsJson = { strict: false }
export const parsers: bodyParser.BodyParser = bodyParser
export const middleware = bodyParser.json(options)
export default app
