// Consumer fixture (bodykit only): the `schema` option types req.body in Express routes and the readers' results, with zod 4
// and valibot 1. Compiled with esModuleInterop only: zod's own declarations need it (its .d.cts files use default imports).
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import express = require('express')
import http = require('node:http')
import * as v from 'valibot'
import { z } from 'zod'

const User = z.object({ name: z.string(), age: z.coerce.number().default(18) })
const Signup = v.object({ email: v.pipe(v.string(), v.email()), tags: v.optional(v.array(v.string()), []) })

const app = express()
const router = express.Router()

// No annotation: Express infers req.body from the parser's schema.
app.post('/users', bodykit.json({ schema: User }), (req, res) => {
  const age: number = req.body.age
  const name: string = req.body.name
  res.json({ name, age })
})
router.post('/form', bodykit.urlencoded({ extended: false, schema: User }), (req, res) => {
  res.send(req.body.name.toUpperCase())
})
router.post('/signup', bodykit.json({ schema: Signup, limit: '10kb' }), (req, res) => {
  const tags: string[] = req.body.tags
  res.send(req.body.email + tags.join(','))
})
app.use('/api', router)

// The same in the legacy entry, with a validate-only step after an app-wide parser.
app.use(legacy.json())
app.put('/users/:id', legacy.json({ schema: User }), (req, res) => {
  res.send(req.params.id + req.body.name)
})
app.post('/notes', legacy.text({ schema: z.string().max(100) }), (req, res) => {
  res.send(req.body.trim())
})
app.post('/blob', bodykit.raw({ schema: z.instanceof(Buffer) }), (req, res) => {
  res.send(req.body.byteLength)
})

// A hand-written schema, typed with bodykit's own declaration of the interface.
const Id: bodykit.StandardSchemaV1<unknown, { id: number }> = {
  '~standard': {
    version: 1,
    vendor: 'app',
    validate: (value) => typeof value === 'number' ? { value: { id: value } } : { issues: [{ message: 'expected a number', path: [] }] }
  }
}
app.post('/id', bodykit.json({ schema: Id, strict: false }), (req, res) => {
  res.send(req.body.id.toFixed(0))
})

// A middleware with a schema is still a connect middleware and can be called with a plain request.
const typed: bodykit.TypedMiddleware<z.output<typeof User>> = bodykit.json({ schema: User })
const plain: bodykit.Middleware = typed
export const server = http.createServer(async (req, res) => {
  plain(req, res, () => {})
  typed(req, res, () => {})
  const user = await bodykit.readJson(req, { schema: User, res })
  const age: number = user.age
  const form = await bodykit.readUrlencoded(req, { schema: Signup })
  const note = await bodykit.readText(req, { schema: z.string() })
  const size = await bodykit.readRaw(req, { schema: z.instanceof(Buffer).transform((bytes) => bytes.length) })
  res.end(JSON.stringify({ age, email: form.email, note: note.length, size: size + 1 }))
})

// Options typed with the general StandardSchemaV1 give the untyped middleware and reader results.
const options: bodykit.OptionsJson = { schema: User }
app.post('/loose', bodykit.json(options), (req, res) => {
  res.send(req.body.anything)
})

// With a schema, req.body is not `any`: each `@ts-expect-error` fails the build if its line compiles.
app.post('/strict', bodykit.json({ schema: User }), (req, res) => {
  // @ts-expect-error: not a property of the schema's output
  res.send(req.body.nope)
})

export default app
