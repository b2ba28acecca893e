// The flat-form fast path must give exactly what qs gives with body-parser's options, for any body.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import qs from 'qs'
import { isFlatForm, parseFlatForm } from '../../src/parsers/flat-form'
import { createUrlencodedParse } from '../../src/parsers/urlencoded'
import { legacy, modern } from '../../src/variants'
import { NODE_FORMS } from '../../src/parsers/node-forms'

const runs = Number(process.env.FORM_FUZZ_RUNS ?? 3000)

// Characters that matter to qs's splitting and decoding, plus a few plain ones.
const formChar = fc.constantFrom('a', 'b', 'Z', '0', '1', '=', '&', '+', '%', '2', '5', 'B', 'd', 'E', 'F', '[', ']', ' ', '_', 'é', '✓')
const formBody = fc.oneof(
  fc.array(formChar, { maxLength: 40 }).map((chars) => chars.join('')),
  fc.array(fc.tuple(fc.constantFrom('a', 'b', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '', '0', '1', '%61', 'a+b', '%E2%9C%93', '%zz'), fc.constantFrom('', '=', '=x', '=%20', '=%', '=a+b', '=%C3%A9', '==')), { maxLength: 8 })
    .map((pairs) => pairs.map(([k, v]) => k + v).join('&'))
)

/** qs with the options body-parser 2.x passes for a utf-8 body. */
function qsLikeBodyParser (body: string, extended: boolean): unknown {
  const count = body.split('&').length
  return qs.parse(body, { allowPrototypes: true, arrayLimit: extended ? Math.max(100, count) : count, depth: extended ? 32 : 0, strictDepth: true, parameterLimit: 1000, charset: 'utf-8' })
}

test('parseFlatForm equals qs on every bracket-free body', () => {
  fc.assert(fc.property(formBody, fc.boolean(), (body, extended) => {
    fc.pre(body.length > 0 && isFlatForm(body))
    assert.deepEqual(parseFlatForm(body), qsLikeBodyParser(body, extended))
  }), { numRuns: runs })
})

test('urlencoded parse (default entry) equals qs on any body, flat or nested', () => {
  const parsers = [false, true].map((extended) => [extended, createUrlencodedParse({ extended }, modern, NODE_FORMS)] as const)
  fc.assert(fc.property(formBody, (body) => {
    for (const [extended, parse] of parsers) {
      let expected: unknown
      let actual: unknown
      try { expected = qsLikeBodyParser(body, extended) } catch (err) { expected = (err as Error).name }
      try { actual = parse(body, 'utf-8') } catch (err) { actual = (err as Error).name === 'RangeError' ? 'RangeError' : (err as Error).name }
      if (body.length === 0) expected = {}
      assert.deepEqual(actual, expected, `extended=${extended} body=${JSON.stringify(body)}`)
    }
  }), { numRuns: runs })
})

test('urlencoded parse (legacy extended) equals qs on bracket-free bodies', () => {
  const parse = createUrlencodedParse({ extended: true }, legacy, NODE_FORMS)
  fc.assert(fc.property(formBody, (body) => {
    fc.pre(body.length > 0 && isFlatForm(body))
    assert.deepEqual(parse(body, 'utf-8'), qsLikeBodyParser(body, true))
  }), { numRuns: runs })
})

test('fixed cases: duplicates, empty keys, prototype names, bad escapes', () => {
  const cases: Array<[string, Record<string, unknown>]> = [
    ['a=1&a=2&a=3', { a: ['1', '2', '3'] }],
    ['=x&&b', { b: '' }],
    ['__proto__=1&constructor=2', { constructor: '2' }],
    ['a=%zz&b=%E2%9C%93', { a: '%zz', b: '✓' }],
    ['a+b=c+d', { 'a b': 'c d' }]
  ]
  for (const [body, expected] of cases) {
    const parsed = parseFlatForm(body)
    assert.deepEqual(parsed, expected)
    assert.deepEqual(parsed, qsLikeBodyParser(body, false))
    assert.equal(Object.getPrototypeOf(parsed), Object.prototype)
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined)
})
