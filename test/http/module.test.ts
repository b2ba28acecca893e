// The modules themselves: the default entry's callable module that throws, legacy's generic parser,
// and how each entry's Content-Type grammar decides matching and charset.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries, modules } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { serve, type Middleware } from '../helpers/server'

const JSON_TYPE = 'application/json'
const FORM = 'application/x-www-form-urlencoded'

type Generic = (options?: Record<string, unknown> | null) => Middleware

describe('default entry: the module', () => {
  it('is a function that throws because the generic parser has been split', () => {
    for (const args of [[], [{}], [{ extended: true }]]) {
      assert.throws(() => (modules.default as (...a: unknown[]) => unknown)(...args), {
        name: 'Error',
        message: 'The bodyParser() generic has been split into individual middleware to use instead.'
      })
    }
  })

  it('carries the four factories', () => {
    assert.deepEqual(['json', 'raw', 'text', 'urlencoded'].map((name) => typeof (modules.default as unknown as Record<string, unknown>)[name]),
      ['function', 'function', 'function', 'function'])
  })
})

describe('legacy entry: the generic bodyParser(options)', () => {
  const generic = modules.legacy as unknown as Generic

  it('returns a middleware named bodyParser', () => {
    const middleware = generic({ extended: true })
    assert.deepEqual([typeof middleware, middleware.name], ['function', 'bodyParser'])
  })

  it('parses json and urlencoded bodies, and nothing else', async (t) => {
    const server = await serve(t, generic({ extended: true }))
    assertReply(await server.post(JSON_TYPE, '{"j":[1]}'), 200, { body: { j: [1] }, _body: true })
    assertReply(await server.post(FORM, 'f[x]=1'), 200, { body: { f: { x: '1' } }, _body: true })
    assertReply(await server.post('text/plain', 'plain'), 200, { body: {} })
  })

  it('accepts no options and null', async (t) => {
    const server = await serve(t, [generic(null)])
    assertBody(await server.post(FORM, 'a[b]=c'), { a: { b: 'c' } })
    const other = await serve(t, generic())
    assertBody(await other.post(JSON_TYPE, '[true]'), [true])
  })

  it('resets type to each parser\'s default', async (t) => {
    const server = await serve(t, generic({ extended: true, type: 'text/plain' }))
    assertBody(await server.post('text/plain', '{"a":1}'), {})
    assertBody(await server.post(JSON_TYPE, '{"a":1}'), { a: 1 })
    assertBody(await server.post(FORM, 'a=1'), { a: '1' })
  })

  it('shares every other option between both parsers', async (t) => {
    const verified: string[] = []
    const server = await serve(t, generic({
      extended: false,
      limit: 12,
      strict: false,
      parameterLimit: 2,
      verify: (_req: unknown, _res: unknown, buf: Buffer) => { verified.push(buf.toString()) }
    }))
    assertBody(await server.post(JSON_TYPE, '"loose"'), 'loose')
    assertBody(await server.post(FORM, 'a[b]=c'), { 'a[b]': 'c' })
    assert.equal((await server.post(FORM, 'a=1&b=2&c=3')).json.type, 'parameters.too.many')
    assertReply(await server.post(JSON_TYPE, '"thirteen ch"'), 413,
      httpError(413, 'request entity too large', { expected: 13, length: 13, limit: 12, type: 'entity.too.large' }))
    assert.equal((await server.post(FORM, 'x=12345678901')).status, 413)
    assert.deepEqual(verified, ['"loose"', 'a[b]=c', 'a=1&b=2&c=3'])
  })

  it('passes a json error on without running urlencoded', async (t) => {
    const server = await serve(t, generic({ extended: true }))
    assertReply(await server.post(JSON_TYPE, 'nope'), 400,
      httpError(400, 'Unexpected token \'n\', "nope" is not valid JSON', { name: 'SyntaxError', body: 'nope', type: 'entity.parse.failed' }))
  })

  it('leaves the options object untouched', () => {
    const options = { extended: true, type: 'text/plain', limit: '1kb' }
    generic(options)
    assert.deepEqual(options, { extended: true, type: 'text/plain', limit: '1kb' })
  })
})

for (const entry of entries) {
  const { json, text } = entry.parsers

  describe(`${entry.name} entry: Content-Type grammar`, () => {
    const both = [
      'application/json',
      'APPLICATION/JSON',
      'application/json; charset=utf-8',
      'application/json;charset=utf-8',
      'application/json; charset="utf-8"',
      'application/json; foo=bar; charset=utf-8'
    ]
    const lenientOnly = [
      'application/json;',
      'application/json; charset',
      'application/json; charset=utf-8;',
      'application/json; a="b'
    ]
    const neither = [
      'application/json, text/plain',
      'application/json garbage',
      'application/json/x',
      'json',
      'application/',
      '/json',
      'application/jsonp'
    ]
    for (const contentType of both) {
      it(`matches ${JSON.stringify(contentType)}`, async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post(contentType, '{"m":1}'), { m: 1 })
      })
    }
    for (const contentType of lenientOnly) {
      it(`${entry.lenientContentTypes ? 'matches' : 'does not match'} ${JSON.stringify(contentType)}`, async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post(contentType, '{"m":1}'), entry.lenientContentTypes ? { m: 1 } : entry.unparsedBody)
      })
    }
    for (const contentType of neither) {
      it(`does not match ${JSON.stringify(contentType)}`, async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post(contentType, '{"m":1}'), entry.unparsedBody)
      })
    }

    it(`lets the ${entry.duplicateCharset} of two charset parameters win`, async (t) => {
      const server = await serve(t, text())
      const reply = await server.post('text/plain; charset=iso-8859-1; charset=utf-8', Buffer.from('é'))
      assertBody(reply, entry.duplicateCharset === 'first' ? 'Ã©' : 'é')
    })

    it('reads the charset name case-insensitively and lower-cases it for errors', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post('application/json; charset=ISO-8859-1', '{}'), 415,
        httpError(415, 'unsupported charset "ISO-8859-1"', { charset: 'iso-8859-1', type: 'charset.unsupported' }))
    })
  })
}
