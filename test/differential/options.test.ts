// Differential suite for factory-time behaviour: option validation (does the
// factory throw, with which error) and the shape of what it returns. No server.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ParserKind, Variant } from './corpus'
import { SELF_MODE, describeTargets, loadEntry, loadModule, resolveOptions, type ParserModule } from './harness'

const NO_ARGUMENT = Symbol('no argument')

type OptionCase = [label: string, parser: ParserKind, options: unknown]

const PARSERS: ParserKind[] = ['json', 'raw', 'text', 'urlencoded']
const cases: OptionCase[] = []

const fn = function verifyFn (): void {}
const COMMON: Array<[string, unknown]> = [
  ['no argument', NO_ARGUMENT],
  ['undefined', undefined],
  ['null', null],
  ['empty object', {}],
  ['a string', 'options'],
  ['a number', 42],
  ['true', true],
  ['an array', []],
  ['limit "abc"', { limit: 'abc' }],
  ['limit NaN', { limit: NaN }],
  ['limit true', { limit: true }],
  ['limit false', { limit: false }],
  ['limit {}', { limit: {} }],
  ['limit []', { limit: [] }],
  ['limit null', { limit: null }],
  ['limit undefined', { limit: undefined }],
  ['limit "1kb"', { limit: '1kb' }],
  ['limit "1 kb"', { limit: '1 kb' }],
  ['limit "1.5mb"', { limit: '1.5mb' }],
  ['limit "1tb"', { limit: '1tb' }],
  ['limit "1pb"', { limit: '1pb' }],
  ['limit "-1kb"', { limit: '-1kb' }],
  ['limit ""', { limit: '' }],
  ['limit "  "', { limit: '  ' }],
  ['limit "0"', { limit: '0' }],
  ['limit 0', { limit: 0 }],
  ['limit -1', { limit: -1 }],
  ['limit Infinity', { limit: Infinity }],
  ['limit 1e20', { limit: 1e20 }],
  ['limit a function', { limit: () => 1 }],
  ['limit a symbol', { limit: Symbol('lim') }],
  ['verify "x"', { verify: 'x' }],
  ['verify true', { verify: true }],
  ['verify false', { verify: false }],
  ['verify null', { verify: null }],
  ['verify 0', { verify: 0 }],
  ['verify 1', { verify: 1 }],
  ['verify {}', { verify: {} }],
  ['verify a function', { verify: fn }],
  ['verify a named corpus function', { verify: 'verifyRecord' }],
  ['type null', { type: null }],
  ['type ""', { type: '' }],
  ['type 0', { type: 0 }],
  ['type []', { type: [] }],
  ['type "json"', { type: 'json' }],
  ['type a function', { type: fn }],
  ['type 123', { type: 123 }],
  ['inflate "no"', { inflate: 'no' }],
  ['inflate false', { inflate: false }],
  ['defaultCharset "foo"', { defaultCharset: 'foo' }],
  ['limit "abc" and verify "x" together', { limit: 'abc', verify: 'x' }]
]
for (const parser of PARSERS) {
  for (const [label, options] of COMMON) cases.push([label, parser, options])
}

const JSON_ONLY: Array<[string, unknown]> = [
  ['strict "x"', { strict: 'x' }],
  ['reviver "x"', { reviver: 'x' }],
  ['reviver a function', { reviver: (_k: string, v: unknown) => v }]
]
for (const [label, options] of JSON_ONLY) cases.push([label, 'json', options])

const URLENCODED: Array<[string, unknown]> = [
  ['parameterLimit 0', { parameterLimit: 0 }],
  ['parameterLimit -1', { parameterLimit: -1 }],
  ['parameterLimit NaN', { parameterLimit: NaN }],
  ['parameterLimit "x"', { parameterLimit: 'x' }],
  ['parameterLimit "10"', { parameterLimit: '10' }],
  ['parameterLimit Infinity', { parameterLimit: Infinity }],
  ['parameterLimit 1.5', { parameterLimit: 1.5 }],
  ['parameterLimit 0.5', { parameterLimit: 0.5 }],
  ['parameterLimit null', { parameterLimit: null }],
  ['parameterLimit true', { parameterLimit: true }],
  ['parameterLimit []', { parameterLimit: [] }],
  ['parameterLimit {}', { parameterLimit: {} }],
  ['depth -1', { depth: -1 }],
  ['depth NaN', { depth: NaN }],
  ['depth "x"', { depth: 'x' }],
  ['depth "3"', { depth: '3' }],
  ['depth Infinity', { depth: Infinity }],
  ['depth null', { depth: null }],
  ['depth 1.5', { depth: 1.5 }],
  ['depth 0', { depth: 0 }],
  ['defaultCharset "utf-16"', { defaultCharset: 'utf-16' }],
  ['defaultCharset "UTF-8"', { defaultCharset: 'UTF-8' }],
  ['defaultCharset "iso-8859-1"', { defaultCharset: 'iso-8859-1' }],
  ['defaultCharset "latin1"', { defaultCharset: 'latin1' }],
  ['defaultCharset ""', { defaultCharset: '' }],
  ['defaultCharset null', { defaultCharset: null }],
  ['charsetSentinel "x"', { charsetSentinel: 'x' }],
  ['interpretNumericEntities 1', { interpretNumericEntities: 1 }],
  ['parameterLimit 0 and depth -1', { parameterLimit: 0, depth: -1 }],
  ['limit "abc" and parameterLimit 0', { limit: 'abc', parameterLimit: 0 }],
  ['verify "x" and depth -1', { verify: 'x', depth: -1 }]
]
for (const [label, options] of URLENCODED) {
  for (const extended of [true, false, undefined]) {
    const withExtended = extended === undefined ? options : { ...(options as object), extended }
    cases.push([`${label}, extended ${String(extended)}`, 'urlencoded', withExtended])
  }
}

function outcome (mod: ParserModule, parser: ParserKind, options: unknown): unknown {
  const factory = mod[parser]
  try {
    const mw = options === NO_ARGUMENT ? factory() : factory(resolveOptions(options))
    return { threw: false, typeof: typeof mw, arity: typeof mw === 'function' ? mw.length : null }
  } catch (err) {
    const e = err as Error
    return {
      threw: true,
      isTypeError: err instanceof TypeError,
      constructor: String(e?.constructor?.name),
      name: e?.name,
      message: e?.message
    }
  }
}

for (const variant of ['default', 'legacy'] as Variant[]) {
  describe(`differential options ${variant}: ${describeTargets(variant)}`, () => {
    const reference = loadEntry(variant, 'reference')
    const candidate = loadEntry(variant, 'candidate')

    it('exports the four factories', () => {
      for (const parser of PARSERS) {
        assert.strictEqual(typeof candidate[parser], typeof reference[parser], `typeof ${parser}`)
        assert.strictEqual(candidate[parser].length, reference[parser].length, `${parser}.length`)
      }
    })

    // bodykit's additions to body-parser's module (docs/typescript.md); everything else must match.
    const BODYKIT_ONLY_EXPORTS = new Set(['isBodyParserError'])
    // The multipart parser is bodykit's own, in both entries (README, bodykit.multipart).
    const MULTIPART_EXPORTS = ['multipart']

    it('module shape: typeof, enumerable keys (but bodykit\'s additions), and calling the module itself', () => {
      const describeModule = (mod: unknown): unknown => {
        let call: unknown
        try {
          const result = (mod as () => unknown)()
          call = { threw: false, typeof: typeof result, arity: typeof result === 'function' ? result.length : null }
        } catch (err) {
          call = { threw: true, constructor: String((err as Error)?.constructor?.name), message: (err as Error)?.message }
        }
        return { typeof: typeof mod, keys: Object.keys(mod as object).filter((key) => !BODYKIT_ONLY_EXPORTS.has(key)).sort(), call }
      }
      const expected = describeModule(loadModule(variant, 'reference'))
      const actual = describeModule(loadModule(variant, 'candidate')) as { keys: string[] }
      if (!SELF_MODE) {
        assert.deepStrictEqual(MULTIPART_EXPORTS.filter((key) => actual.keys.includes(key)), MULTIPART_EXPORTS, 'multipart is exported')
        actual.keys = actual.keys.filter((key) => !MULTIPART_EXPORTS.includes(key))
      }
      // The promise API is bodykit's own addition to the default entry (README, API, Promise API).
      if (variant === 'default' && !SELF_MODE) {
        const added = ['readJson', 'readRaw', 'readText', 'readUrlencoded', 'readMultipart']
        assert.deepStrictEqual(added.filter((key) => actual.keys.includes(key)), added, 'the promise API is exported')
        actual.keys = actual.keys.filter((key) => !added.includes(key))
      }
      assert.deepStrictEqual(actual, expected, `module shape [${describeTargets(variant)}]\nexpected: ${JSON.stringify(expected)}\nactual:   ${JSON.stringify(actual)}`)
    })

    for (const [label, parser, options] of cases) {
      it(`${parser}(${label})`, () => {
        const expected = outcome(reference, parser, options)
        const actual = outcome(candidate, parser, options)
        assert.deepStrictEqual(actual, expected, `${parser}(${label}) [${describeTargets(variant)}]\nexpected (body-parser): ${JSON.stringify(expected)}\nactual (candidate):     ${JSON.stringify(actual)}`)
      })
    }
  })
}
