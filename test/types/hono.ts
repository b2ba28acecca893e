// Type tests of bodykit/hono, checked by `tsc -p tsconfig.json` only (never run): a schema types `c.req.valid()` and `c.var`.
// Each `@ts-expect-error` line must stay an error: if the types start accepting it, tsc fails.
import { Hono } from 'hono'
import { hc } from 'hono/client'
import * as v from 'valibot'
import { z } from 'zod'
import { json, multipart, raw, text, urlencoded, type UploadedFile } from '../../src/hono'
import type { StandardSchemaV1 } from '../../src/options'

/** Compiles only when `A` and `B` are the same type. */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false
function expectType<T> (_value: T): void {}
function expectEqual<A, B> (..._proof: Equal<A, B> extends true ? [] : [never]): void {}

const User = z.object({ name: z.string(), age: z.coerce.number().default(18) })
const Signup = v.object({ email: v.pipe(v.string(), v.email()), tags: v.optional(v.array(v.string()), []) })

const app = new Hono()
  // zod: c.req.valid('json') is the schema's output, no annotation needed.
  .post('/users', json({ schema: User, limit: '10kb' }), (c) => {
    const user = c.req.valid('json')
    expectEqual<typeof user, { name: string, age: number }>()
    return c.json({ name: user.name.toUpperCase(), age: user.age + 1 })
  })
  // valibot, on a form: c.req.valid('form') is the schema's output.
  .post('/signup', urlencoded({ schema: Signup }), (c) => {
    const form = c.req.valid('form')
    expectEqual<typeof form, { email: string, tags: string[] }>()
    return c.text(form.email + form.tags.join(','))
  })
  // Multipart: fields through the schema, files on c.var.files.
  .post('/avatar', multipart({ schema: User, files: { fieldNames: ['avatar'] } }), (c) => {
    expectEqual<ReturnType<typeof c.req.valid<'form'>>, { name: string, age: number }>()
    expectEqual<typeof c.var.files, UploadedFile[]>()
    return c.json({ name: c.req.valid('form').name, size: c.var.files[0]?.size })
  })
  // text and raw: c.var.body, typed by the parser or the schema.
  .post('/note', text(), (c) => {
    expectEqual<typeof c.var.body, string | undefined>()
    return c.text(c.var.body ?? '')
  })
  .post('/short-note', text({ schema: z.string().max(100) }), (c) => {
    expectEqual<typeof c.var.body, string>()
    return c.text(c.get('body').trim())
  })
  .post('/blob', raw({ type: 'application/pdf' }), (c) => {
    expectEqual<typeof c.var.body, Buffer | undefined>()
    return c.text(String(c.var.body?.byteLength))
  })
  // Without a schema: what the reader resolves with.
  .post('/any-json', json(), (c) => {
    expectEqual<ReturnType<typeof c.req.valid<'json'>>, unknown>()
    return c.json({ ok: true })
  })
  .post('/any-form', urlencoded({ extended: true }), (c) => {
    expectEqual<ReturnType<typeof c.req.valid<'form'>>, Record<string, unknown> | undefined>()
    return c.json({ ok: true })
  })
  .post('/any-multipart', multipart(), (c) => {
    expectEqual<ReturnType<typeof c.req.valid<'form'>>, Record<string, unknown> | undefined>()
    return c.json({ files: c.var.files.length })
  })
  // A hand-written Standard Schema typed with bodykit's own declaration.
  .post('/id', json({ schema: {} as StandardSchemaV1<unknown, { id: number }>, strict: false }), (c) => c.text(c.req.valid('json').id.toFixed(0)))

// Hono's RPC client sees the schema's input type for the body.
const client = hc<typeof app>('http://localhost')
expectType<(args: { json: { name: string, age?: unknown } }) => unknown>(client.users.$post)
void client.users.$post({ json: { name: 'Ada', age: '36' } })
// @ts-expect-error name is required by the schema
void client.users.$post({ json: { age: 3 } })

// Options are those of the readers, without `res`.
json({ limit: '1mb', strict: false, reviver: (_key, value) => value, onProtoPoisoning: 'remove', inflate: true })
urlencoded({ extended: true, parameterLimit: 10, depth: 3, charsetSentinel: true })
multipart({ files: { storage: 'disk', fileSizeLimit: '5mb' }, partLimit: 20 })
text({ defaultCharset: 'iso-8859-1' })
raw(null)
// @ts-expect-error a Hono handler has no Node response
json({ res: undefined })
// @ts-expect-error limit is a number or a string
raw({ limit: true })
// @ts-expect-error urlencoded has no reviver
urlencoded({ reviver: () => 1 })

// No valid('json') after a form parser, no c.var.body after json().
app.post('/mixed', urlencoded(), (c) => {
  // @ts-expect-error only the form target was validated
  c.req.valid('json')
  // @ts-expect-error json() and urlencoded() set no context variable
  expectType<string>(c.var.body)
  return c.text('')
})
