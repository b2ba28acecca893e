// The `schema` option over HTTP for both entries: zod 4, valibot 1, arktype 2 and a hand-written async schema,
// on every parser, in a validate-only step, and for schemas that throw.
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import net from 'node:net'
import { describe, it } from 'node:test'
import { type } from 'arktype'
import * as v from 'valibot'
import { z } from 'zod'
import { isBodyParserError } from '../../src/index'
import { entries, modules } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { encode, serve, type Middleware, type Payload } from '../helpers/server'
import { startServer } from '../hostile/helpers'

const JSON_TYPE = 'application/json'
const FORM_TYPE = 'application/x-www-form-urlencoded'

/** The Standard Schema v1 interface as the tests use it (loosely typed, so broken schemas can be built). */
interface Schema {
  '~standard': { version: 1, vendor: string, validate: (value: unknown) => unknown }
}

type Issue = { message: string, path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }

/** What the schema itself says of a value: its issues (the error must carry them as given). */
async function issuesOf (schema: Schema, value: unknown): Promise<Issue[]> {
  const result = await schema['~standard'].validate(value) as { issues?: Issue[] }
  assert.ok(result.issues, 'the schema accepts ' + JSON.stringify(value))
  return result.issues
}

/** The 400 a refused body gives, for the schema's own issues on `value`. */
async function refused (schema: Schema, value: unknown, message: string): Promise<Payload> {
  const issues = await issuesOf(schema, value)
  return httpError(400, message, { body: encode(value), issues: encode(issues), type: 'entity.validation.failed' })
}

// The same user in three libraries: a name, and an age that is coerced from a string and defaults to 18.
const zodUser = z.object({ name: z.string(), age: z.coerce.number().default(18) })
const valibotUser = v.object({
  name: v.string(),
  age: v.optional(v.pipe(v.union([v.number(), v.string()]), v.transform(Number)), 18)
})
const arktypeUser = type({ name: 'string', 'age?': 'number | string' }).pipe((user) => ({ name: user.name, age: user.age === undefined ? 18 : Number(user.age) }))

/** A hand-written schema that answers a tick later: a user whose `name` is not taken. */
const asyncUser: Schema = {
  '~standard': {
    version: 1,
    vendor: 'hand-written',
    validate: async (value) => {
      await new Promise((resolve) => setImmediate(resolve))
      if (value === null || typeof value !== 'object') return { issues: [{ message: 'expected an object' }] }
      const { name } = value as { name?: unknown }
      if (typeof name !== 'string') return { issues: [{ message: 'expected a string', path: [{ key: 'name' }] }] }
      if (name === 'root') return { issues: [{ message: 'name taken', path: [{ key: 'name' }] }] }
      return { value: { name, checked: true } }
    }
  }
}

const libraries: Array<[string, Schema]> = [
  ['zod 4', zodUser as unknown as Schema],
  ['valibot 1', valibotUser as unknown as Schema],
  ['arktype 2', arktypeUser as unknown as Schema]
]

/** A schema whose validate does `behave` (throw, reject, return something that is not a result). */
function brokenSchema (behave: (value: unknown) => unknown): Schema {
  return { '~standard': { version: 1, vendor: 'broken', validate: behave } }
}

for (const entry of entries) {
  const { json, raw, text, urlencoded } = entry.parsers
  // What req.body is when nothing was parsed: undefined (default entry) or {} (legacy).
  const unparsed = entry.name === 'default' ? undefined : {}

  describe(`${entry.name} entry: schema`, () => {
    for (const [library, schema] of libraries) {
      it(`${library}: req.body is the schema's output, with defaults and coercion applied`, async (t) => {
        const server = await serve(t, json({ schema }))
        assertBody(await server.post(JSON_TYPE, '{"name":"tobi","age":"42"}'), { name: 'tobi', age: 42 })
        assertBody(await server.post(JSON_TYPE, '{"name":"tobi"}'), { name: 'tobi', age: 18 })
      })

      it(`${library}: a refused body gives 400 entity.validation.failed with the schema's issues as given`, async (t) => {
        // arktype's issues are ArkError objects that refer to each other: the test compares them here rather
        // than through the server's JSON description.
        let passed: Record<string, unknown> = {}
        const parse = json({ schema })
        const server = await serve(t, (req, res, next) => {
          parse(req, res, (err) => {
            passed = err as Record<string, unknown>
            next(err && { status: (err as { status: number }).status })
          })
        })
        const value = { name: 42 }
        const issues = await issuesOf(schema, value)
        assert.equal((await server.post(JSON_TYPE, JSON.stringify(value))).status, 400)
        const { message, status, expose, type, body } = passed
        assert.deepEqual({ message, status, expose, type, body }, {
          message: 'invalid body at name: ' + issues[0].message,
          status: 400,
          expose: true,
          type: 'entity.validation.failed',
          body: value
        })
        // valibot's path segments are objects with a `key` (and the input), arktype's an array subclass.
        const described = (list: unknown) => (list as Issue[]).map((issue) => ({
          message: issue.message,
          path: [...issue.path ?? []].map((segment) => typeof segment === 'object' ? segment.key : segment)
        }))
        assert.deepEqual(described(passed.issues), described(issues))
        assert.deepEqual(described(issues), [{ message: issues[0].message, path: ['name'] }])
      })
    }

    it('names a nested path as code writes it, and counts the other issues', async (t) => {
      const schema = z.object({ user: z.object({ tags: z.array(z.string()), email: z.email() }) }) as unknown as Schema
      const server = await serve(t, json({ schema }))
      const value = { user: { tags: ['a', 1], email: 'nope' } }
      const issues = await issuesOf(schema, value)
      assert.deepEqual(issues.map((issue) => issue.path), [['user', 'tags', 1], ['user', 'email']])
      assertReply(await server.post(JSON_TYPE, JSON.stringify(value)), 400,
        await refused(schema, value, 'invalid body at user.tags[1]: ' + issues[0].message + ' (and 1 more)'))
    })

    it('refuses a body of the wrong top-level type, with no path in the message', async (t) => {
      const schema = zodUser as unknown as Schema
      const server = await serve(t, json({ schema, strict: false }))
      for (const value of [[{ name: 'tobi' }], 'tobi', null]) {
        const [first] = await issuesOf(schema, value)
        assertReply(await server.post(JSON_TYPE, JSON.stringify(value)), 400, await refused(schema, value, 'invalid body: ' + first.message))
      }
    })

    it('a hand-written async schema: its output, and its issues with { key } path segments', async (t) => {
      const server = await serve(t, json({ schema: asyncUser }))
      assertBody(await server.post(JSON_TYPE, '{"name":"tobi"}'), { name: 'tobi', checked: true })
      assertReply(await server.post(JSON_TYPE, '{"name":"root"}'), 400, await refused(asyncUser, { name: 'root' }, 'invalid body at name: name taken'))
    })

    describe('when nothing was parsed, the schema checks req.body as it is', () => {
      const required = zodUser as unknown as Schema
      const optional = zodUser.optional() as unknown as Schema

      it('a request without a body', async (t) => {
        const server = await serve(t, json({ schema: required }))
        const [first] = await issuesOf(required, unparsed)
        const message = entry.name === 'default' ? 'invalid body: ' + first.message : 'invalid body at name: ' + first.message
        assertReply(await server.request({ method: 'GET' }), 400, await refused(required, unparsed, message))
        const lenient = await serve(t, json({ schema: entry.name === 'default' ? optional : z.object({}) }))
        assertBody(await lenient.request({ method: 'GET' }), encode(unparsed))
      })

      it('a body of another Content-Type', async (t) => {
        const server = await serve(t, json({ schema: asyncUser }))
        const reply = await server.post('text/plain', '{"name":"tobi"}')
        const value = unparsed
        const message = entry.name === 'default' ? 'invalid body: expected an object' : 'invalid body at name: expected a string'
        assertReply(reply, 400, await refused(asyncUser, value, message))
      })

      it('a body an earlier parser read: a validate-only step', async (t) => {
        const server = await serve(t, [json(), urlencoded({ extended: false }), json({ schema: zodUser })])
        assertBody(await server.post(JSON_TYPE, '{"name":"tobi","age":"7"}'), { name: 'tobi', age: 7 })
        assertBody(await server.post(FORM_TYPE, 'name=loki&age=9'), { name: 'loki', age: 9 })
        const value = { name: ['a', 'b'] }
        const [first] = await issuesOf(zodUser as unknown as Schema, value)
        assertReply(await server.post(FORM_TYPE, 'name=a&name=b'), 400, await refused(zodUser as unknown as Schema, value, 'invalid body at name: ' + first.message))
      })
    })

    it('reads off a refused body of another Content-Type within discardLimit, and closes the connection past it', async (t) => {
      const server = await startServer(json({ schema: zodUser, discardLimit: 1024 }))
      t.after(() => server.close())
      // A keep-alive request that declares 50 MiB and sends 1 KiB of it: Node alone would wait for the rest.
      const socket = net.connect(server.port, '127.0.0.1')
      const closed = new Promise<string>((resolve) => {
        const received: Buffer[] = []
        socket.on('data', (chunk: Buffer) => received.push(chunk))
        socket.on('close', () => resolve(Buffer.concat(received).toString('latin1')))
      })
      socket.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: ' + 50 * 1024 * 1024 + '\r\n\r\n' + 'x'.repeat(1024))
      // The connection closes after the 400 (past discardLimit the rest is not read); without the bounded
      // read-off Node would wait for the other 50 MiB and this would never resolve.
      const reply = await closed
      assert.match(reply, /^HTTP\/1\.1 400 /)
      assert.equal((await server.outcome(0)).err?.type, 'entity.validation.failed')
    })

    it('works on every parser: raw, text, urlencoded', async (t) => {
      const bytes: Schema = {
        '~standard': {
          version: 1,
          vendor: 'hand-written',
          validate: (value) => Buffer.isBuffer(value) && value.length <= 4 ? { value: value.length } : { issues: [{ message: 'at most 4 bytes' }] }
        }
      }
      const rawServer = await serve(t, raw({ schema: bytes }))
      assertBody(await rawServer.post('application/octet-stream', '\u0001\u0002'), 2)
      assertReply(await rawServer.post('application/octet-stream', '123456'), 400, await refused(bytes, Buffer.from('123456'), 'invalid body: at most 4 bytes'))

      const note = z.string().trim().min(3) as unknown as Schema
      const textServer = await serve(t, text({ schema: note }))
      assertBody(await textServer.post('text/plain', '  hello  '), 'hello')
      const [first] = await issuesOf(note, 'hi')
      assertReply(await textServer.post('text/plain', 'hi'), 400, await refused(note, 'hi', 'invalid body: ' + first.message))

      const form = v.object({ n: v.pipe(v.string(), v.toNumber()), tag: v.optional(v.string(), 'none') }) as unknown as Schema
      const formServer = await serve(t, urlencoded({ extended: false, schema: form }))
      assertBody(await formServer.post(FORM_TYPE, 'n=12'), { n: 12, tag: 'none' })
      const [formIssue] = await issuesOf(form, {})
      assertReply(await formServer.post(FORM_TYPE, 'm=1'), 400, await refused(form, { m: '1' }, 'invalid body at n: ' + formIssue.message))
    })

    it('leaves req.body as any other body error does, and keeps req.rawBody', async (t) => {
      let seen: IncomingMessage & { body?: unknown, rawBody?: Buffer } = {} as IncomingMessage
      const record: Middleware = (req, _res, next) => { seen = req; next() }
      const server = await serve(t, json({ schema: zodUser, rawBody: true }), { before: [record] })
      const reply = await server.post(JSON_TYPE, '{"name":1}')
      assert.equal(reply.status, 400)
      assert.equal(reply.json.type, 'entity.validation.failed')
      assert.deepEqual(seen.body, unparsed)
      assert.deepEqual(seen.rawBody, Buffer.from('{"name":1}'))
    })

    it('the error is recognised by isBodyParserError', async (t) => {
      let guarded: unknown
      const parse = json({ schema: zodUser })
      const server = await serve(t, (req, res, next) => {
        parse(req, res, (err) => { guarded = isBodyParserError(err); next(err) })
      })
      assert.equal((await server.post(JSON_TYPE, '{}')).status, 400)
      assert.equal(guarded, true)
    })

    describe('a validate that throws, rejects or returns no result: its error reaches next, 500 unless it has a status', () => {
      const cases: Array<[string, Schema, number, Payload]> = [
        ['throws', brokenSchema(() => { throw new Error('schema bug') }), 500, httpError(500, 'schema bug', { name: 'Error' })],
        ['rejects', brokenSchema(() => Promise.reject(new Error('database down'))), 500, httpError(500, 'database down', { name: 'Error' })],
        ['rejects with a status', brokenSchema(() => Promise.reject(Object.assign(new Error('busy'), { status: 503 }))), 503,
          { ...httpError(503, 'busy', { name: 'Error' }), expose: false }],
        ['throws a string', brokenSchema(() => { throw 'oops' }), 500, httpError(500, 'oops')],
        ['returns undefined', brokenSchema(() => undefined), 500, httpError(500, 'schema validate returned no result', { name: 'TypeError' })],
        ['resolves with issues that are not a list', brokenSchema(async () => ({ issues: 'bad' })), 500,
          httpError(500, 'schema validate returned issues that are not an array', { name: 'TypeError' })]
      ]
      for (const [name, schema, status, payload] of cases) {
        it(name, async (t) => {
          const server = await serve(t, json({ schema }))
          assertReply(await server.post(JSON_TYPE, '{"a":1}'), status, payload)
          // Also when nothing was parsed.
          assertReply(await server.request({ method: 'GET' }), status, payload)
        })
      }
    })

    describe('an invalid schema throws a TypeError when the middleware is created', () => {
      const message = 'option schema must be a Standard Schema (a "~standard" property of version 1 with a validate function)'
      const bad: unknown[] = [null, 'zod', 42, {}, () => {}, { '~standard': null }, { '~standard': { version: 2, vendor: 'x', validate: () => ({ value: 1 }) } },
        { '~standard': { version: 1, vendor: 'x' } }, { '~standard': { version: 1, vendor: 'x', validate: 'yes' } }]
      for (const name of ['json', 'raw', 'text', 'urlencoded'] as const) {
        const factory = entry.parsers[name]
        it(name + '()', () => {
          for (const schema of bad) assert.throws(() => factory({ schema }), { name: 'TypeError', message })
        })
      }
      it('an arktype type, which is a function, is accepted', () => {
        assert.equal(typeof arktypeUser, 'function')
        assert.equal(typeof json({ schema: arktypeUser }), 'function')
      })
    })
  })
}

describe('legacy generic parser with schema', () => {
  it('checks the body once, after json and urlencoded', async (t) => {
    let calls = 0
    const counted: Schema = {
      '~standard': {
        version: 1,
        vendor: 'counting',
        validate: (value) => {
          calls++
          return (zodUser as unknown as Schema)['~standard'].validate(value)
        }
      }
    }
    const server = await serve(t, modules.legacy({ schema: counted }) as Middleware)
    assertBody(await server.post(JSON_TYPE, '{"name":"tobi","age":"3"}'), { name: 'tobi', age: 3 })
    assertBody(await server.post(FORM_TYPE, 'name=loki'), { name: 'loki', age: 18 })
    assert.equal(calls, 2)
    const reply = await server.post(FORM_TYPE, 'age=1')
    assert.deepEqual([reply.status, reply.json.type, calls], [400, 'entity.validation.failed', 3])
  })
})
