// schema section: json({ schema }) against body-parser's json() followed by a middleware that runs the same schema, with zod 4 and valibot 1.
import type { IncomingMessage } from 'node:http'
import * as v from 'valibot'
import { z } from 'zod'
import { cases, type Case } from './cases'
import { benchCases } from './in-process'
import type { Context, Row, SectionResult } from './report'
import type { Middleware, Parsers, Target } from './targets'

interface StandardSchema {
  '~standard': { validate: (value: unknown) => { value?: unknown, issues?: unknown } | Promise<{ value?: unknown, issues?: unknown }> }
}

/** The schemas of one case's body, in each library; they accept it and give it back unchanged. */
interface CaseSchemas {
  zod: StandardSchema
  valibot: StandardSchema
}

const userSchemas: CaseSchemas = {
  zod: z.object({ id: z.number(), name: z.string(), email: z.email(), ok: z.boolean() }),
  valibot: v.object({ id: v.number(), name: v.string(), email: v.pipe(v.string(), v.email()), ok: v.boolean() })
}

const itemsSchemas: CaseSchemas = {
  zod: z.array(z.object({
    id: z.number().int(),
    name: z.string(),
    price: z.number(),
    active: z.boolean(),
    tags: z.array(z.string()),
    meta: z.object({ score: z.number(), note: z.null(), ref: z.string() })
  })),
  valibot: v.array(v.object({
    id: v.pipe(v.number(), v.integer()),
    name: v.string(),
    price: v.number(),
    active: v.boolean(),
    tags: v.array(v.string()),
    meta: v.object({ score: v.number(), note: v.null(), ref: v.string() })
  }))
}

/** What an app writes today after body-parser: validate req.body, replace it with the output or pass a 400 on. */
function validating (schema: StandardSchema): Middleware {
  return (req, _res, next) => {
    const settle = (result: { value?: unknown, issues?: unknown }): void => {
      if (result.issues) {
        next(Object.assign(new Error('invalid body'), { status: 400, issues: result.issues }))
        return
      }
      (req as IncomingMessage & { body?: unknown }).body = result.value
      next()
    }
    const result = schema['~standard'].validate((req as IncomingMessage & { body?: unknown }).body)
    if (result instanceof Promise) result.then(settle, next)
    else settle(result)
  }
}

/** json() then the validating middleware, as one middleware. */
function thenValidate (parsers: Parsers, schema: StandardSchema): Parsers {
  return {
    ...parsers,
    json: (options) => {
      const parse = parsers.json(options)
      const validate = validating(schema)
      return (req, res, next) => parse(req, res, (err) => { if (err) next(err); else validate(req, res, next) })
    }
  }
}

function withSchema (parsers: Parsers, schema: StandardSchema): Parsers {
  return { ...parsers, json: (options) => parsers.json({ ...options, schema }) }
}

export async function schema (ctx: Context): Promise<SectionResult> {
  const bodykit = ctx.targets.find((t) => t.id === 'bodykit')
  const bodyParser = ctx.targets.find((t) => t.id === 'body-parser 2')
  if (!bodykit || !bodyParser) throw new Error('the bodykit and body-parser 2 targets are needed')
  const pick = (name: string): Case => cases.find((c) => c.name === name) as Case
  const rows: Row[] = []
  for (const [c, schemas] of [[pick('json 69 B'), userSchemas], [pick('json 10 KiB'), itemsSchemas]] as const) {
    const base = 'body-parser 2'
    const targets: Target[] = [
      { ...bodyParser, baseline: base },
      { ...bodykit, baseline: base },
      ...(['zod', 'valibot'] as const).flatMap((library): Target[] => [
        { ...bodyParser, id: `body-parser 2 + ${library}`, baseline: base, exact: false, parsers: thenValidate(bodyParser.parsers, schemas[library]) },
        { ...bodykit, id: `bodykit + ${library}`, baseline: 'bodykit', exact: false, parsers: thenValidate(bodykit.parsers, schemas[library]) },
        { ...bodykit, id: `bodykit schema: ${library}`, baseline: `body-parser 2 + ${library}`, exact: false, parsers: withSchema(bodykit.parsers, schemas[library]) },
        // The same middleware again, against bodykit's json() + the schema in a middleware: what the option itself adds.
        { ...bodykit, id: `bodykit schema: ${library} `, baseline: `bodykit + ${library}`, exact: false, parsers: withSchema(bodykit.parsers, schemas[library]) }
      ])
    ]
    rows.push(...await benchCases([c], targets, ctx))
  }
  return {
    id: 'schema',
    title: 'schema: time per request ÷ baseline (lower is faster; each column names its baseline)',
    legend: 'As the in-process section. "<parser> + <library>" is that json() followed by a middleware that validates req.body with the same schema (against the plain parser: the schema\'s own cost); "bodykit schema: <library>" is json({ schema }), against body-parser 2 + the schema, then against bodykit + the schema (what the option itself adds). Both schemas accept the body.',
    rows
  }
}
