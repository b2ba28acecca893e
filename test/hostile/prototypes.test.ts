// Issue 5.6: no input changes a built-in prototype, and JSON / urlencoded results keep body-parser's observable shape.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { shape } from '../fuzz/model'
import { endRequest, entries, fakeRequest, fakeResponse, prototypeSnapshot, type HttpErrorLike, type Middleware } from './helpers'

const jsonBodies = [
  '{"__proto__":{"polluted":1}}',
  '{"constructor":{"prototype":{"polluted":1}}}',
  '{"a":{"__proto__":{"polluted":1}},"b":[{"__proto__":{"polluted":1}}]}',
  '[{"__proto__":null},{"toString":1,"valueOf":"x","hasOwnProperty":2}]',
  '{"__proto__":[],"length":1}'
]
const formBodies = [
  '__proto__[polluted]=1',
  'constructor[prototype][polluted]=1',
  'a[__proto__][polluted]=1&a[b]=2',
  '__proto__.polluted=1&a.__proto__.polluted=1',
  'toString=1&hasOwnProperty=2&valueOf=3',
  'a[__proto__]=b&a[__proto__]&a[length]=100000000',
  'a[constructor][prototype][polluted]=1&a[prototype][x]=1',
  '__proto__=1&a[]=1&a[__proto__]=2'
]


async function parse (mw: Middleware, type: string, body: string): Promise<{ err?: HttpErrorLike, body: unknown }> {
  const req = fakeRequest({ 'content-type': type, 'content-length': String(Buffer.byteLength(body)) })
  const done = new Promise<HttpErrorLike | undefined>((resolve) => mw(req, fakeResponse(req), (err) => resolve(err as HttpErrorLike | undefined)))
  req.push(Buffer.from(body))
  endRequest(req)
  return { err: await done, body: (req as { body?: unknown }).body }
}

for (const entry of entries) {
  describe(`prototypes (${entry.name} entry)`, () => {
    const cases: [string, string, Record<string, unknown>, string[]][] = [
      ['json', 'application/json', {}, jsonBodies],
      ['json', 'application/json', { strict: false }, jsonBodies],
      ['urlencoded', 'application/x-www-form-urlencoded', { extended: true }, formBodies],
      ['urlencoded', 'application/x-www-form-urlencoded', { extended: false }, formBodies]
    ]
    for (const [parser, type, options, bodies] of cases) {
      it(`${parser} ${JSON.stringify(options)}: built-ins untouched and the same shape as body-parser`, async () => {
        const before = prototypeSnapshot()
        const name = parser as 'json' | 'urlencoded'
        const mine = entry.bodykit[name](options)
        const reference = entry.reference[name](options)
        for (const body of bodies) {
          const got = await parse(mine, type, body)
          assert.equal(prototypeSnapshot(), before, body)
          assert.equal(({} as Record<string, unknown>).polluted, undefined, body)
          const want = await parse(reference, type, body)
          assert.deepEqual([got.err?.status, got.err?.type, shape(got.body)], [want.err?.status, want.err?.type, shape(want.body)], body)
        }
      })
    }
  })
}
