// verify and reviver may throw anything; body-parser crashes on `throw null` or `throw 42`, bodykit answers.
import { describe, it } from 'node:test'
import { entries } from '../helpers/entries'
import { assertReply, httpError } from '../helpers/expect'
import { serve } from '../helpers/server'

const thrownValues: Array<[string, unknown, string]> = [
  ['null', null, 'Forbidden'],
  ['undefined', undefined, 'Forbidden'],
  ['a number', 42, 'Forbidden'],
  ['a boolean', false, 'Forbidden'],
  ['a string', 'no thanks', 'no thanks']
]

for (const entry of entries) {
  describe(`${entry.name} entry: values thrown by user code`, () => {
    for (const [label, value, message] of thrownValues) {
      it(`verify throwing ${label} gives 403 entity.verify.failed`, async (t) => {
        const server = await serve(t, entry.parsers.json({ verify: () => { throw value } }))
        assertReply(await server.post('application/json', '{"a":1}'), 403, httpError(403, message, { type: 'entity.verify.failed', body: { $buffer: Buffer.from('{"a":1}').toString('base64') } }))
      })
    }

    it('a reviver throwing a number gives 400 entity.parse.failed (the TypeError body-parser also gives)', async (t) => {
      const server = await serve(t, entry.parsers.json({ reviver: () => { throw 7 } }))
      const message = "Cannot create property 'stack' on number '7'"
      assertReply(await server.post('application/json', '{"a":1}'), 400, { ...httpError(400, message, { type: 'entity.parse.failed', body: '{"a":1}' }), name: 'TypeError' })
    })
  })
}
