// Consumer fixture (shared with body-parser 1.x's types): `bodykit/legacy` and 1.x's generic parser.
import bodyParser = require('bodykit/legacy')
import express = require('express')

const app = express()
// 1.x's generic: json then urlencoded, sharing their options.
app.use(bodyParser())
app.use(bodyParser({ extended: true, limit: '1mb', strict: false, parameterLimit: 100 }))
app.use(bodyParser.json(), bodyParser.urlencoded({ extended: true }), bodyParser.text(), bodyParser.raw())

const options: bodyParser.OptionsJson & bodyParser.OptionsText & bodyParser.OptionsUrlencoded = { extended: false, defaultCharset: 'utf-8' }
app.use('/generic', bodyParser(options))
const parsers: bodyParser.BodyParser = bodyParser
const common: bodyParser.Options = { inflate: true }
app.use(parsers.raw(common))

export = app
