// Consumer fixture (bodykit only): with a schema, req.body is the schema's output and not `any`, so these
// mistakes are compile errors (each `@ts-expect-error` fails the build if its line compiles). valibot and a
// hand-written schema, compiled in every configuration.
import bodykit = require('bodykit')
import legacy = require('bodykit/legacy')
import express = require('express')
import * as v from 'valibot'

const User = v.object({ name: v.string(), age: v.optional(v.pipe(v.string(), v.toNumber()), '18') })
const Point: bodykit.StandardSchemaV1<unknown, { x: number, y: number }> = {
  '~standard': {
    version: 1,
    vendor: 'app',
    validate: (value) => Array.isArray(value) && value.length === 2 ? { value: { x: Number(value[0]), y: Number(value[1]) } } : { issues: [{ message: 'expected [x, y]' }] }
  }
}
const app = express()
const router = express.Router()

app.post('/users', bodykit.json({ schema: User }), (req, res) => {
  const age: number = req.body.age
  // @ts-expect-error: not a property of the schema's output
  res.send(req.body.nope + age)
})
router.post('/form', legacy.urlencoded({ extended: false, schema: User }), (req, res) => {
  // @ts-expect-error: age is a number once the schema ran
  const age: string = req.body.age
  res.send(age + req.body.name)
})
router.post('/point', legacy.json({ schema: Point }), (req, res) => {
  // @ts-expect-error: not a property of the schema's output
  res.send(req.body.z + req.body.x)
})
app.use(router)

export async function read (req: express.Request): Promise<string> {
  const user = await bodykit.readJson(req, { schema: User })
  // @ts-expect-error: not a property of the schema's output
  return user.nope + user.name
}

// @ts-expect-error: not a Standard Schema
bodykit.json({ schema: { validate: () => true } })
// @ts-expect-error: a misspelt option is still caught next to a schema
bodykit.json({ schema: User, limt: '1mb' })
