// Option validation for both entries: what each factory accepts, and the TypeErrors (thrown when the
// middleware is created) for what it does not. Behaviour of valid options is tested over HTTP elsewhere.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertBody, assertReply, httpError } from '../helpers/expect'
import { serve } from '../helpers/server'
import { normalizeCommonOptions } from '../../src/options'

const FORM = 'application/x-www-form-urlencoded'

for (const entry of entries) {
  const factories = (['json', 'raw', 'text', 'urlencoded'] as const).map((name) => [name, entry.parsers[name]] as const)
  const { urlencoded } = entry.parsers

  describe(`${entry.name} entry: options common to every factory`, () => {
    for (const [name, factory] of factories) {
      it(`${name}() accepts no options, undefined, null and {}`, () => {
        for (const options of [undefined, null, {}]) {
          const middleware = factory(options === undefined ? undefined : { ...options, extended: true })
          assert.deepEqual([typeof middleware, (middleware as () => void).length], ['function', 3])
        }
      })

      it(`${name}() throws "option limit … is invalid" for a limit bytes cannot read`, () => {
        for (const [limit, shown] of [['abc', 'abc'], [NaN, 'NaN'], [true, 'true'], [{}, '[object Object]'], ['', ''], ['kb', 'kb']] as const) {
          assert.throws(() => factory({ limit, extended: true }), { name: 'TypeError', message: `option limit "${shown}" is invalid` })
        }
      })

      it(`${name}() accepts null, numbers (negative and Infinity too) and byte strings as limit`, () => {
        for (const limit of [null, undefined, 0, -1, Infinity, 1024, '1mb', '10 KB', '512b', '12']) {
          assert.equal(typeof factory({ limit, extended: true }), 'function')
        }
      })

      it(`${name}() accepts discardLimit (bytes, a byte string, Infinity) and discardTime (ms), and throws a TypeError for other values`, () => {
        for (const discardLimit of [null, undefined, 0, 1024, Infinity, '1mb', '64 MB']) {
          assert.equal(typeof factory({ discardLimit, extended: true }), 'function')
        }
        for (const [discardLimit, shown] of [['abc', 'abc'], [NaN, 'NaN'], [-1, '-1'], [true, 'true'], ['', '']] as const) {
          assert.throws(() => factory({ discardLimit, extended: true }), { name: 'TypeError', message: `option discardLimit "${shown}" is invalid` })
        }
        for (const discardTime of [null, undefined, 0, 500, Infinity]) {
          assert.equal(typeof factory({ discardTime, extended: true }), 'function')
        }
        for (const discardTime of ['1s', NaN, -1, true, {}]) {
          assert.throws(() => factory({ discardTime, extended: true }), { name: 'TypeError', message: 'option discardTime must be a zero or a positive number' })
        }
      })

      it(`${name}() throws "option verify must be function" for a truthy non-function`, () => {
        for (const verify of ['yes', 1, {}, true, []]) {
          assert.throws(() => factory({ verify, extended: true }), { name: 'TypeError', message: 'option verify must be function' })
        }
        for (const verify of [false, null, undefined, 0, '']) {
          assert.equal(typeof factory({ verify, extended: true }), 'function')
        }
      })
    }

    it('reads inflate and strict as true unless exactly false', async (t) => {
      const server = await serve(t, [entry.parsers.json({ inflate: 0, strict: 0 })])
      const zlib = await import('node:zlib')
      assertBody(await server.post('application/json', zlib.gzipSync('[1]'), { 'content-encoding': 'gzip' }), [1])
      assert.equal((await server.post('application/json', '1')).status, 400)
    })
  })

  describe(`${entry.name} entry: urlencoded options`, () => {
    it('throws "option parameterLimit must be a positive number"', () => {
      for (const parameterLimit of [0, -1, NaN, 'abc', null, 0.5]) {
        for (const extended of [false, true]) {
          assert.throws(() => urlencoded({ extended, parameterLimit }), { name: 'TypeError', message: 'option parameterLimit must be a positive number' })
        }
      }
    })

    it('accepts numeric strings and Infinity as parameterLimit', () => {
      for (const parameterLimit of ['10', Infinity, 1, 2.5]) {
        assert.equal(typeof urlencoded({ extended: true, parameterLimit }), 'function')
      }
    })

    it('truncates a fractional parameterLimit', async (t) => {
      const server = await serve(t, urlencoded({ extended: false, parameterLimit: 2.9 }))
      assertBody(await server.post(FORM, 'a=1&b=2'), { a: '1', b: '2' })
      assert.equal((await server.post(FORM, 'a=1&b=2&c=3')).status, 413)
    })

    it('reads a numeric-string parameterLimit as a number', async (t) => {
      const server = await serve(t, urlencoded({ extended: true, parameterLimit: '2' }))
      assert.equal((await server.post(FORM, 'a=1&b=2&c=3')).status, 413)
    })

    it('throws "option depth must be a zero or a positive number" in extended mode only', () => {
      for (const depth of [-1, NaN, 'deep']) {
        assert.throws(() => urlencoded({ extended: true, depth }), { name: 'TypeError', message: 'option depth must be a zero or a positive number' })
        assert.equal(typeof urlencoded({ extended: false, depth }), 'function')
      }
      assert.equal(typeof urlencoded({ extended: true, depth: 0 }), 'function')
    })

    if (entry.urlencodedCharsetOptions) {
      it('throws "option defaultCharset must be either utf-8 or iso-8859-1"', () => {
        for (const defaultCharset of ['utf-16', 'latin1', 'UTF-8', 'ascii']) {
          assert.throws(() => urlencoded({ extended: false, defaultCharset }), { name: 'TypeError', message: 'option defaultCharset must be either utf-8 or iso-8859-1' })
        }
        for (const defaultCharset of ['utf-8', 'iso-8859-1', '', undefined]) {
          assert.equal(typeof urlencoded({ extended: false, defaultCharset }), 'function')
        }
      })
    } else {
      it('does not validate defaultCharset (the option does not exist)', () => {
        for (const defaultCharset of ['utf-16', 'latin1', 'nonsense']) {
          assert.equal(typeof urlencoded({ extended: false, defaultCharset }), 'function')
        }
      })
    }
  })

  describe(`${entry.name} entry: limit values applied`, () => {
    it('applies a numeric-string limit as bytes', async (t) => {
      const server = await serve(t, entry.parsers.text({ limit: '3' }))
      assertReply(await server.post('text/plain', 'four'), 413,
        httpError(413, 'request entity too large', { expected: 4, length: 4, limit: 3, type: 'entity.too.large' }))
    })

    it('applies limit: 0 to every non-empty body', async (t) => {
      const server = await serve(t, entry.parsers.raw({ limit: 0 }))
      assertBody(await server.post('application/octet-stream', ''), { $buffer: '' })
      assert.equal((await server.post('application/octet-stream', 'x')).status, 413)
    })
  })
}

describe('the read-off budget as validated', () => {
  it('takes a discardTime longer than a Node timer can wait (Infinity) as the longest wait, not as a timer that fires at once', () => {
    const longest = 2 ** 31 - 1
    assert.equal(normalizeCommonOptions({ discardTime: Infinity }).discard.ms, longest)
    assert.equal(normalizeCommonOptions({ discardTime: longest + 1 }).discard.ms, longest)
    assert.equal(normalizeCommonOptions({ discardTime: 60_000 }).discard.ms, 60_000)
    assert.equal(normalizeCommonOptions({ discardLimit: Infinity }).discard.bytes, Infinity)
  })
})
