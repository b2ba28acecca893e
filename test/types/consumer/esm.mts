// Consumer fixture (shared with body-parser): an ES module importing the CommonJS package, default and named.
import bodyParser from 'bodykit'
import { json, urlencoded, type OptionsJson, type OptionsUrlencoded } from 'bodykit'
import express from 'express'

const jsonOptions: OptionsJson = { limit: '100kb', reviver: (_key, value) => value }
const formOptions: OptionsUrlencoded = { extended: true, parameterLimit: 50 }

const app = express()
app.use(json(jsonOptions))
app.use(urlencoded(formOptions))
app.use('/text', bodyParser.text(), bodyParser.raw({ type: ['image/png', 'image/jpeg'] }))
app.post('/items', (req: express.Request<Record<string, string>, unknown, { name: string }>, res) => {
  res.json({ created: req.body.name })
})

export default app
