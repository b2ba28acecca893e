// json() over HTTP for both entries: strict mode, reviver, charsets, defaultCharset, default type.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError, jsonParseMessage } from '../helpers/expect'
import { serve } from '../helpers/server'

const JSON_TYPE = 'application/json'

for (const entry of entries) {
  const { json } = entry.parsers

  describe(`${entry.name} entry: json()`, () => {
    it('parses objects and arrays', async (t) => {
      const server = await serve(t, json())
      for (const [body, expected] of [
        ['{"user":"tobi","tags":["a",1,null,true],"n":{"x":1.5}}', { user: 'tobi', tags: ['a', 1, null, true], n: { x: 1.5 } }],
        ['[1,"two",{"three":3}]', [1, 'two', { three: 3 }]],
        [' \t\r\n{"padded":true}\n', { padded: true }],
        ['{}', {}]
      ] as const) {
        assertBody(await server.post(JSON_TYPE, body), expected)
      }
    })

    it('parses an empty body as {}', async (t) => {
      const server = await serve(t, json())
      assertBody(await server.post(JSON_TYPE, ''), {})
    })

    it('answers 400 for a whitespace-only body', async (t) => {
      const server = await serve(t, json())
      assertReply(await server.post(JSON_TYPE, ' \n'), 400,
        httpError(400, jsonParseMessage(''), { name: 'SyntaxError', body: ' \n', type: 'entity.parse.failed' }))
    })

    describe('strict (default true)', () => {
      // body-parser words strict violations as JSON.parse words the first offending character.
      for (const [body, message] of [
        ['"str"', 'Unexpected token \'"\', ""str"" is not valid JSON'],
        ['true', 'Unexpected token \'t\', "true" is not valid JSON'],
        ['null', 'Unexpected token \'n\', "null" is not valid JSON'],
        ['42', 'Unexpected token \'4\', "42" is not valid JSON'],
        ['  7', 'Unexpected token \'7\', "  7" is not valid JSON']
      ] as const) {
        it(`rejects the top-level primitive ${JSON.stringify(body)}`, async (t) => {
          const server = await serve(t, json())
          assertReply(await server.post(JSON_TYPE, body), 400,
            httpError(400, message, { name: 'SyntaxError', body, type: 'entity.parse.failed' }))
        })
      }

      it('reports a syntax error in an object with JSON.parse\'s own message', async (t) => {
        const server = await serve(t, json())
        const body = '{"a":1,}'
        assertReply(await server.post(JSON_TYPE, body), 400,
          httpError(400, jsonParseMessage(body), { name: 'SyntaxError', body, type: 'entity.parse.failed' }))
      })

      it('accepts primitives with strict: false', async (t) => {
        const server = await serve(t, json({ strict: false }))
        for (const [body, expected] of [['"str"', 'str'], ['true', true], ['null', null], ['42', 42], [' -1.5e2 ', -150]] as const) {
          assertBody(await server.post(JSON_TYPE, body), expected)
        }
      })

      it('still reports syntax errors with strict: false', async (t) => {
        const server = await serve(t, json({ strict: false }))
        assertReply(await server.post(JSON_TYPE, 'tru'), 400,
          httpError(400, jsonParseMessage('tru'), { name: 'SyntaxError', body: 'tru', type: 'entity.parse.failed' }))
      })
    })

    it('passes reviver to JSON.parse', async (t) => {
      const keys: string[] = []
      const reviver = function (key: string, value: unknown) {
        keys.push(key)
        return typeof value === 'number' ? value * 10 : value
      }
      const server = await serve(t, json({ reviver }))
      assertBody(await server.post(JSON_TYPE, '{"a":1,"b":[2]}'), { a: 10, b: [20] })
      assert.deepEqual(keys, ['a', '0', 'b', ''])
    })

    describe('charsets', () => {
      it('decodes utf-8 by default and strips a BOM', async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post(JSON_TYPE, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"Zoë"}')])), { name: 'Zoë' })
      })

      it('decodes any utf-* charset named in the Content-Type', async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post('application/json; charset=utf-16le', Buffer.from('{"w":"∑"}', 'utf16le')), { w: '∑' })
        assertBody(await server.post('application/json; charset=UTF-8', '{"u":1}'), { u: 1 })
        assertBody(await server.post('application/json; charset="utf-8"', '{"q":1}'), { q: 1 })
      })

      for (const charset of ['iso-8859-1', 'us-ascii', 'koi8-r']) {
        it(`answers 415 for charset=${charset}`, async (t) => {
          const server = await serve(t, json())
          assertReply(await server.post(`application/json; charset=${charset}`, '{}'), 415,
            httpError(415, `unsupported charset "${charset.toUpperCase()}"`, { charset, type: 'charset.unsupported' }))
        })
      }

      it('answers 415 for an unknown utf-* charset', async (t) => {
        const server = await serve(t, json())
        assertReply(await server.post('application/json; charset=utf-42', '{}'), 415,
          httpError(415, 'unsupported charset "UTF-42"', { charset: 'utf-42', type: 'charset.unsupported' }))
      })

      it(entry.jsonDefaultCharset ? 'honours defaultCharset' : 'ignores defaultCharset', async (t) => {
        const server = await serve(t, [json({ defaultCharset: 'latin1' })])
        const reply = await server.post(JSON_TYPE, '{"a":1}')
        if (entry.jsonDefaultCharset) {
          assertReply(reply, 415, httpError(415, 'unsupported charset "LATIN1"', { charset: 'latin1', type: 'charset.unsupported' }))
        } else {
          assertBody(reply, { a: 1 })
        }
      })

      it(entry.jsonDefaultCharset ? 'decodes with a utf-* defaultCharset' : 'decodes as utf-8 whatever defaultCharset says', async (t) => {
        const server = await serve(t, json({ defaultCharset: 'utf-16le', strict: false }))
        const reply = await server.post(JSON_TYPE, Buffer.from('"ok"', 'utf16le'))
        if (entry.jsonDefaultCharset) assertBody(reply, 'ok')
        else assert.deepEqual({ status: reply.status, type: reply.json.type }, { status: 400, type: 'entity.parse.failed' })
      })
    })

    describe('type', () => {
      it('defaults to application/json only', async (t) => {
        const server = await serve(t, json())
        assertBody(await server.post('application/json; charset=utf-8', '{"a":1}'), { a: 1 })
        assertBody(await server.post('application/vnd.api+json', '{"a":1}'), entry.unparsedBody)
        assertBody(await server.post('text/json', '{"a":1}'), entry.unparsedBody)
      })

      it('parses +json types with type: "application/*+json"', async (t) => {
        const server = await serve(t, json({ type: 'application/*+json' }))
        assertBody(await server.post('application/vnd.api+json', '{"data":[]}'), { data: [] })
      })

      it('parses any type with a function returning true', async (t) => {
        const server = await serve(t, json({ type: () => true }))
        assertBody(await server.post('text/plain', '{"any":true}'), { any: true })
      })
    })

    it('stores a new object per request', async (t) => {
      const bodies: unknown[] = []
      const server = await serve(t, [json(), function keep (req, _res, next) { bodies.push((req as { body?: unknown }).body); next() }])
      await server.post(JSON_TYPE, '{"same":1}')
      await server.post(JSON_TYPE, '{"same":1}')
      assert.deepEqual(bodies[0], bodies[1])
      assert.notEqual(bodies[0], bodies[1])
    })
  })
}
