// json()'s onProtoPoisoning and onConstructorPoisoning over HTTP for both entries: every value, with reviver and strict.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError, jsonParseMessage } from '../helpers/expect'
import { serve } from '../helpers/server'

const JSON_TYPE = 'application/json'
const FORBIDDEN = 'Object contains forbidden prototype property'

const PROTO = '{"a":1,"__proto__":{"isAdmin":true}}'
const NESTED_PROTO = '{"user":{"name":"x","roles":[{"__proto__":{"x":1}}]}}'
const ESCAPED_PROTO = '{"a":1,"\\u005f_proto__":{"isAdmin":true}}'
const CONSTRUCTOR = '{"a":1,"constructor":{"prototype":{"isAdmin":true}}}'
const NESTED_CONSTRUCTOR = '{"list":[{"b":{"constructor":{"prototype":{"x":1}}}}]}'
const HARMLESS_CONSTRUCTOR = '{"constructor":"Ada","c":{"constructor":{"name":"x"}}}'

/** An object with an own `__proto__` data key, as JSON.parse builds it. */
function withOwnProto (base: Record<string, unknown>, proto: unknown): Record<string, unknown> {
  return Object.defineProperty({ ...base }, '__proto__', { value: proto, enumerable: true, writable: true, configurable: true })
}

function forbidden (body: string): Record<string, unknown> {
  return httpError(400, FORBIDDEN, { name: 'SyntaxError', body, type: 'entity.parse.failed' })
}

for (const entry of entries) {
  const { json } = entry.parsers

  describe(`${entry.name} entry: json() onProtoPoisoning`, () => {
    for (const onProtoPoisoning of [undefined, 'ignore']) {
      it(`${String(onProtoPoisoning)} keeps __proto__ keys, as body-parser does`, async (t) => {
        const server = await serve(t, json({ onProtoPoisoning }))
        assertBody(await server.post(JSON_TYPE, PROTO), withOwnProto({ a: 1 }, { isAdmin: true }))
        assertBody(await server.post(JSON_TYPE, ESCAPED_PROTO), withOwnProto({ a: 1 }, { isAdmin: true }))
      })
    }

    it('remove deletes every __proto__ key, escaped or nested, and keeps the rest', async (t) => {
      const server = await serve(t, json({ onProtoPoisoning: 'remove' }))
      assertBody(await server.post(JSON_TYPE, PROTO), { a: 1 })
      assertBody(await server.post(JSON_TYPE, ESCAPED_PROTO), { a: 1 })
      assertBody(await server.post(JSON_TYPE, NESTED_PROTO), { user: { name: 'x', roles: [{}] } })
      // Any character of the key may be escaped, in either hex case; other escapes stay as they are.
      assertBody(await server.post(JSON_TYPE, '{"__pr\\u006Fto__":1,"\\u005F\\u005f\\u0070roto__":2,"caf\\u00e9":3}'), { café: 3 })
      // constructor keys are onConstructorPoisoning's business
      assertBody(await server.post(JSON_TYPE, CONSTRUCTOR), { a: 1, constructor: { prototype: { isAdmin: true } } })
    })

    it('error refuses the body with 400 entity.parse.failed, shaped as a syntax error', async (t) => {
      const server = await serve(t, json({ onProtoPoisoning: 'error' }))
      for (const body of [PROTO, ESCAPED_PROTO, NESTED_PROTO]) assertReply(await server.post(JSON_TYPE, body), 400, forbidden(body))
      assertBody(await server.post(JSON_TYPE, '{"proto":"__proto__ in a value is fine","x":["__proto__"]}'), { proto: '__proto__ in a value is fine', x: ['__proto__'] })
    })
  })

  describe(`${entry.name} entry: json() onConstructorPoisoning`, () => {
    for (const onConstructorPoisoning of [undefined, 'ignore']) {
      it(`${String(onConstructorPoisoning)} keeps constructor.prototype, as body-parser does`, async (t) => {
        const server = await serve(t, json({ onConstructorPoisoning }))
        assertBody(await server.post(JSON_TYPE, CONSTRUCTOR), { a: 1, constructor: { prototype: { isAdmin: true } } })
      })
    }

    it('remove deletes constructor keys that hold a prototype, and only those', async (t) => {
      const server = await serve(t, json({ onConstructorPoisoning: 'remove' }))
      assertBody(await server.post(JSON_TYPE, CONSTRUCTOR), { a: 1 })
      assertBody(await server.post(JSON_TYPE, NESTED_CONSTRUCTOR), { list: [{ b: {} }] })
      assertBody(await server.post(JSON_TYPE, '{"a":{"constructo\\u0072":{"prototype":{}}},"\\u6771":1}'), { a: {}, 東: 1 })
      assertBody(await server.post(JSON_TYPE, HARMLESS_CONSTRUCTOR), { constructor: 'Ada', c: { constructor: { name: 'x' } } })
      assertBody(await server.post(JSON_TYPE, PROTO), withOwnProto({ a: 1 }, { isAdmin: true }))
    })

    it('error refuses constructor.prototype with 400 entity.parse.failed', async (t) => {
      const server = await serve(t, json({ onConstructorPoisoning: 'error' }))
      for (const body of [CONSTRUCTOR, NESTED_CONSTRUCTOR]) assertReply(await server.post(JSON_TYPE, body), 400, forbidden(body))
      assertBody(await server.post(JSON_TYPE, HARMLESS_CONSTRUCTOR), { constructor: 'Ada', c: { constructor: { name: 'x' } } })
    })
  })

  describe(`${entry.name} entry: poisoning options with the other json options`, () => {
    it('both at error: either key is refused; a clean body parses as without them', async (t) => {
      const server = await serve(t, json({ onProtoPoisoning: 'error', onConstructorPoisoning: 'error' }))
      assertReply(await server.post(JSON_TYPE, PROTO), 400, forbidden(PROTO))
      assertReply(await server.post(JSON_TYPE, CONSTRUCTOR), 400, forbidden(CONSTRUCTOR))
      assertBody(await server.post(JSON_TYPE, '{"a":[1,{"b":"\\u00e9"}]}'), { a: [1, { b: 'é' }] })
    })

    it('remove for one and error for the other', async (t) => {
      const server = await serve(t, json({ onProtoPoisoning: 'remove', onConstructorPoisoning: 'error' }))
      assertBody(await server.post(JSON_TYPE, PROTO), { a: 1 })
      assertReply(await server.post(JSON_TYPE, CONSTRUCTOR), 400, forbidden(CONSTRUCTOR))
    })

    it('invalid JSON keeps body-parser\'s exact SyntaxError message', async (t) => {
      const server = await serve(t, json({ onProtoPoisoning: 'error', onConstructorPoisoning: 'error' }))
      for (const body of ['{"__proto__":', '{"constructor": nope}']) {
        assertReply(await server.post(JSON_TYPE, body), 400, httpError(400, jsonParseMessage(body), { name: 'SyntaxError', body, type: 'entity.parse.failed' }))
      }
    })

    it('apply after the reviver: a key the reviver drops is no longer there', async (t) => {
      const dropProto = (key: string, value: unknown): unknown => key === '__proto__' ? undefined : value
      const server = await serve(t, json({ onProtoPoisoning: 'error', reviver: dropProto }))
      assertBody(await server.post(JSON_TYPE, PROTO), { a: 1 })
      const upper = (_key: string, value: unknown): unknown => typeof value === 'string' ? value.toUpperCase() : value
      const withReviver = await serve(t, json({ onProtoPoisoning: 'remove', reviver: upper }))
      assertBody(await withReviver.post(JSON_TYPE, '{"a":"x","__proto__":{"b":"y"}}'), { a: 'X' })
    })

    it('with strict false, a top-level primitive is not walked; strict still refuses it first', async (t) => {
      const loose = await serve(t, json({ strict: false, onProtoPoisoning: 'error', onConstructorPoisoning: 'error' }))
      assertBody(await loose.post(JSON_TYPE, '"__proto__"'), '__proto__')
      assertReply(await loose.post(JSON_TYPE, '[' + PROTO + ']'), 400, forbidden('[' + PROTO + ']'))
      const strict = await serve(t, json({ onProtoPoisoning: 'error' }))
      const plain = await serve(t, json())
      const reply = await strict.post(JSON_TYPE, '"__proto__"')
      assert.equal(reply.status, 400)
      assert.deepEqual(reply.json, (await plain.post(JSON_TYPE, '"__proto__"')).json)
    })

    it('a value other than ignore, remove or error throws when the middleware is created', () => {
      for (const name of ['onProtoPoisoning', 'onConstructorPoisoning']) {
        for (const value of ['Error', 'reject', '', null, true, 1]) {
          assert.throws(() => json({ [name]: value }), { name: 'TypeError', message: `option ${name} must be "ignore", "remove" or "error"` })
        }
      }
    })
  })
}
