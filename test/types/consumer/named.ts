// Consumer fixture (shared with body-parser): named imports of the factories and of every type name.
import { json, raw, text, urlencoded } from 'bodykit'
import type { BodyParser, Options, OptionsJson, OptionsText, OptionsUrlencoded } from 'bodykit'
import express = require('express')

const limits: Options = { limit: '2mb' }
const jsonOptions: OptionsJson = { ...limits, strict: true, type: 'application/json' }
const textOptions: OptionsText = { ...limits, defaultCharset: 'utf-8' }
const formOptions: OptionsUrlencoded = { ...limits, extended: false }

/** Builds a router with its own parsers, from options a caller may leave out. */
export function createRouter (options: OptionsJson = jsonOptions): express.Router {
  const router = express.Router()
  router.use(json(options))
  router.post('/form', urlencoded(formOptions), (req, res) => { res.json(req.body) })
  router.post('/text', text(textOptions), (req, res) => { res.send(req.body) })
  router.post('/raw', raw(limits), (req, res) => { res.send(req.body) })
  return router
}

/** Code that receives the module, typed with its interface. */
export function mount (app: express.Express, parsers: Pick<BodyParser, 'json' | 'urlencoded'>): void {
  app.use(parsers.json({ limit: limits.limit }), parsers.urlencoded({ extended: true }))
}
