// Field assembly's two ways must agree: bracket-free names built straight into flat pairs give exactly what the
// variant's urlencoded parser gives for the same fields sent as a form, in both entries and both modes.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import fc from 'fast-check'
import { createFieldAssembler, type FormField } from '../../src/multipart/fields'
import { normalizeMultipartOptions } from '../../src/multipart/settings'
import { createUrlencodedParse } from '../../src/parsers/urlencoded'
import { legacy, modern } from '../../src/variants'
import { NODE_FORMS } from '../../src/parsers/node-forms'
import { NODE_BYTES } from '../../src/multipart/node-bytes'

const RUNS = Number(process.env.FORM_FUZZ_RUNS ?? 3000)

// Names qs treats specially (prototype keys, brackets, dots, escapes) among plain ones.
const nameArb = fc.oneof(
  fc.constantFrom('a', 'b', '__proto__', 'constructor', 'toString', 'hasOwnProperty', '0', '1', 'a.b', 'a+b', '%', '%5B', '%zz', 'é', '✓'),
  fc.constantFrom('a[b]', 'a[]', 'a[0]', '[', ']', 'a]', '[b', 'a[b][c]'),
  fc.string({ unit: fc.constantFrom('a', 'b', '[', ']', '%', '+', '=', '&', '.', ' ', 'é'), minLength: 1, maxLength: 6 })
)
const valueArb = fc.oneof(fc.string({ unit: 'grapheme', maxLength: 12 }), fc.constantFrom('', '+', '%', '%41', '=', '&', 'a[b]', ' '))
const fieldsArb = fc.array(fc.record({ name: nameArb, text: valueArb, asBytes: fc.boolean() }), { maxLength: 12 })

for (const [entry, variant] of [['default', modern], ['legacy', legacy]] as const) {
  for (const extended of [false, true]) {
    test(`multipart fields (${entry} entry, extended ${String(extended)}) equal urlencoded's reading of the same form`, () => {
      const assemble = createFieldAssembler(normalizeMultipartOptions({ extended, depth: 3 }), variant, NODE_FORMS, NODE_BYTES.decode)
      const parse = createUrlencodedParse({ extended, depth: 3, parameterLimit: 10_000 }, variant, NODE_FORMS)
      let flat = 0
      fc.assert(fc.property(fieldsArb, (drawn) => {
        // A value whose part declares no charset arrives as its UTF-8 bytes.
        const fields: FormField[] = drawn.map(({ name, text, asBytes }) => ({ name, value: asBytes ? Buffer.from(text) : text }))
        const form = drawn.map(({ name, text }) => encodeURIComponent(name) + '=' + encodeURIComponent(text)).join('&')
        if (drawn.every(({ name }) => !/[[\]]/.test(name))) flat++
        let expected: unknown
        let actual: unknown
        try { expected = parse(form, 'utf-8') } catch (err) { expected = (err as { type?: string }).type ?? (err as Error).name }
        try { actual = assemble(fields) } catch (err) { actual = (err as { type?: string }).type ?? (err as Error).name }
        assert.deepEqual(actual, expected)
        // The same prototype, too: null for body-parser 1.x's querystring, Object's otherwise.
        if (typeof expected === 'object') assert.equal(Object.getPrototypeOf(actual), Object.getPrototypeOf(expected))
      }), { numRuns: RUNS })
      assert.ok(flat > RUNS / 10, `only ${flat} of ${RUNS} drawn forms had flat names`)
    })
  }
}
