// urlencoded() over HTTP for both entries: simple and extended modes, parameterLimit, depth, charsets
// and the charset options of the default entry. Legacy calls pass `extended` except where the default
// itself is under test (its deprecation warning is tested in deprecations.test.ts).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { serve, type Reply } from '../helpers/server'

const FORM = 'application/x-www-form-urlencoded'

/** Body and prototype of a parsed form, for modes whose objects may lack a prototype. */
function shape (reply: Reply): unknown {
  return { status: reply.status, body: reply.json.body, nullPrototype: reply.json.nullPrototype === true }
}

/** `a[b][b]…=x` with `levels` bracket segments. */
function nested (levels: number): string {
  return 'a' + '[b]'.repeat(levels) + '=x'
}

function nestedValue (levels: number): unknown {
  let value: unknown = 'x'
  for (let i = 0; i < levels; i++) value = { b: value }
  return { a: value }
}

for (const entry of entries) {
  const { urlencoded } = entry.parsers

  describe(`${entry.name} entry: urlencoded()`, () => {
    describe('both modes', () => {
      for (const extended of [false, true]) {
        it(`parses flat pairs, repeated keys, + and bare keys (extended: ${extended})`, async (t) => {
          const server = await serve(t, urlencoded({ extended }))
          assertBody(await server.post(FORM, 'user=tobi&pass=s%20e+cret&flag&a=1&a=2'), { user: 'tobi', pass: 's e cret', flag: '', a: ['1', '2'] })
        })

        it(`parses an empty body as {} (extended: ${extended})`, async (t) => {
          const server = await serve(t, urlencoded({ extended }))
          assertBody(await server.post(FORM, ''), {})
        })

        it(`answers 413 parameters.too.many past the default parameterLimit of 1000 (extended: ${extended})`, async (t) => {
          const server = await serve(t, urlencoded({ extended, limit: '1mb' }))
          const pairs = Array.from({ length: 1001 }, (_, i) => `k${i}=${i}`)
          const ok = await server.post(FORM, pairs.slice(0, 1000).join('&'))
          assert.deepEqual([ok.status, Object.keys(ok.json.body as object).length], [200, 1000])
          const body = pairs.join('&')
          assertReply(await server.post(FORM, body), 413, httpError(413, 'too many parameters', { body, type: 'parameters.too.many' }))
        })

        it(`counts a trailing & as a parameter (extended: ${extended})`, async (t) => {
          const server = await serve(t, urlencoded({ extended, parameterLimit: 2 }))
          assertBody(await server.post(FORM, 'a=1&b=2'), { a: '1', b: '2' })
          assertReply(await server.post(FORM, 'a=1&b=2&'), 413, httpError(413, 'too many parameters', { body: 'a=1&b=2&', type: 'parameters.too.many' }))
        })
      }

      it('defaults to application/x-www-form-urlencoded only', async (t) => {
        const server = await serve(t, urlencoded({ extended: false }))
        assertBody(await server.post('multipart/form-data; boundary=x', 'a=1'), entry.unparsedBody)
        assertBody(await server.post('application/x-www-form-urlencoded; charset=utf-8', 'a=1'), { a: '1' })
      })
    })

    describe(`simple mode (${entry.simpleMode})`, () => {
      const cases: ReadonlyArray<[string, string, Record<typeof entry.simpleMode, unknown>]> = [
        ['keeps brackets in keys', 'a[b]=1&c[]=2', { qs: { 'a[b]': '1', 'c[]': '2' }, querystring: { 'a[b]': '1', 'c[]': '2' } }],
        ['treats __proto__ as the variant does', '__proto__=x&b=1', { qs: { b: '1' }, querystring: { ['__proto__']: 'x', b: '1' } }],
        ['decodes a bad escape as the variant does', 'a=%ff&b=%zz', { qs: { a: '%ff', b: '%zz' }, querystring: { a: '\ufffd', b: '%zz' } }],
        ['treats an empty key as the variant does', '=x&y=1', { qs: { y: '1' }, querystring: { '': 'x', y: '1' } }]
      ]
      for (const [label, body, expected] of cases) {
        it(`${label}: ${body}`, async (t) => {
          const server = await serve(t, urlencoded({ extended: false }))
          assert.deepEqual(shape(await server.post(FORM, body)),
            { status: 200, body: expected[entry.simpleMode], nullPrototype: entry.simpleMode === 'querystring' })
        })
      }
    })

    describe('extended mode', () => {
      it(`is ${entry.extendedDefault ? 'on' : 'off'} when extended is left out`, async (t) => {
        const server = await serve(t, urlencoded())
        assertBody(await server.post(FORM, 'a[b]=c'), entry.extendedDefault ? { a: { b: 'c' } } : { 'a[b]': 'c' })
      })

      it('parses nested objects and arrays', async (t) => {
        const server = await serve(t, urlencoded({ extended: true }))
        assertBody(await server.post(FORM, 'user[name]=tobi&user[tags][]=a&user[tags][]=b&list[0]=x&list[2]=y&enc%5Bk%5D=v'),
          { user: { name: 'tobi', tags: ['a', 'b'] }, list: ['x', 'y'], enc: { k: 'v' } })
      })

      it('turns an index above the array limit (100 or the parameter count) into an object key', async (t) => {
        const server = await serve(t, urlencoded({ extended: true }))
        assertBody(await server.post(FORM, 'a[99]=x'), { a: ['x'] })
        assertBody(await server.post(FORM, 'a[100]=x'), { a: { 100: 'x' } })
      })

      it('accepts 32 levels of nesting by default and answers 400 for 33', async (t) => {
        const server = await serve(t, urlencoded({ extended: true }))
        assertBody(await server.post(FORM, nested(32)), nestedValue(32))
        const body = nested(33)
        assertReply(await server.post(FORM, body), 400,
          httpError(400, 'The input exceeded the depth', { body, type: 'querystring.parse.rangeError' }))
      })

      it('honours a lower depth', async (t) => {
        const server = await serve(t, urlencoded({ extended: true, depth: 2 }))
        assertBody(await server.post(FORM, nested(2)), nestedValue(2))
        assert.deepEqual((await server.post(FORM, nested(3))).json.type, 'querystring.parse.rangeError')
      })

      it('honours parameterLimit', async (t) => {
        const server = await serve(t, urlencoded({ extended: true, parameterLimit: 3 }))
        assertBody(await server.post(FORM, 'a[]=1&a[]=2&b=3'), { a: ['1', '2'], b: '3' })
        assert.equal((await server.post(FORM, 'a[]=1&a[]=2&b=3&c=4')).status, 413)
      })
    })

    describe('charsets', () => {
      it('decodes utf-8 percent-escapes by default', async (t) => {
        const server = await serve(t, urlencoded({ extended: false }))
        assertBody(await server.post(FORM, 'name=Zo%C3%AB&sym=%E2%9C%93'), { name: 'Zoë', sym: '✓' })
      })

      it(entry.urlencodedCharsets.includes('iso-8859-1') ? 'decodes iso-8859-1 forms' : 'answers 415 for iso-8859-1', async (t) => {
        const server = await serve(t, urlencoded({ extended: false }))
        const reply = await server.post(FORM + '; charset=iso-8859-1', 'name=Zo%EB')
        if (entry.urlencodedCharsets.includes('iso-8859-1')) assertBody(reply, { name: 'Zoë' })
        else {
          assertReply(reply, 415, httpError(415, 'unsupported charset "ISO-8859-1"', { charset: 'iso-8859-1', type: 'charset.unsupported' }))
        }
      })

      for (const charset of ['utf-16', 'latin1', 'us-ascii']) {
        it(`answers 415 for charset=${charset}`, async (t) => {
          const server = await serve(t, urlencoded({ extended: true }))
          assertReply(await server.post(`${FORM}; charset=${charset}`, 'a=1'), 415,
            httpError(415, `unsupported charset "${charset.toUpperCase()}"`, { charset, type: 'charset.unsupported' }))
        })
      }

      it(entry.urlencodedCharsetOptions ? 'uses defaultCharset when the Content-Type has none' : 'ignores defaultCharset', async (t) => {
        const server = await serve(t, urlencoded({ extended: true, defaultCharset: 'iso-8859-1' }))
        assertBody(await server.post(FORM, 'name=Zo%EB'), { name: entry.urlencodedCharsetOptions ? 'Zoë' : 'Zo%EB' })
      })

      it(entry.urlencodedCharsetOptions ? 'lets the utf8 field pick the charset with charsetSentinel' : 'ignores charsetSentinel', async (t) => {
        const server = await serve(t, urlencoded({ extended: true, charsetSentinel: true }))
        const latin = await server.post(FORM, 'utf8=%26%2310003%3B&name=Zo%EB')
        const utf8 = await server.post(FORM + '; charset=utf-8', 'utf8=%E2%9C%93&name=Zo%C3%AB')
        if (entry.urlencodedCharsetOptions) {
          assertBody(latin, { name: 'Zoë' })
          assertBody(utf8, { name: 'Zoë' })
        } else {
          assertBody(latin, { utf8: '&#10003;', name: 'Zo%EB' })
          assertBody(utf8, { utf8: '✓', name: 'Zoë' })
        }
      })

      if (entry.urlencodedCharsetOptions) {
        it('decodes numeric entities in iso-8859-1 forms only with interpretNumericEntities', async (t) => {
          const server = await serve(t, [
            urlencoded({ extended: false, interpretNumericEntities: true, type: () => true }),
            urlencoded({ extended: false })
          ])
          assertBody(await server.post(FORM + '; charset=iso-8859-1', 'smile=%26%239786%3B'), { smile: '☺' })
          const plain = await serve(t, urlencoded({ extended: false }))
          assertBody(await plain.post(FORM + '; charset=iso-8859-1', 'smile=%26%239786%3B'), { smile: '&#9786;' })
        })

        it('lets a sentinel override the header charset', async (t) => {
          const server = await serve(t, urlencoded({ extended: true, charsetSentinel: true }))
          assertBody(await server.post(FORM + '; charset=iso-8859-1', 'utf8=%E2%9C%93&name=Zo%C3%AB'), { name: 'Zoë' })
        })
      } else {
        it('ignores interpretNumericEntities', async (t) => {
          const server = await serve(t, urlencoded({ extended: true, interpretNumericEntities: true }))
          assertBody(await server.post(FORM, 'smile=%26%239786%3B'), { smile: '&#9786;' })
        })
      }
    })
  })
}
