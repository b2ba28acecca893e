// verify, reviver, schemas and body streams may throw anything; body-parser crashes on `throw null`, `throw 42` or an
// error that cannot take a status, bodykit answers.
import assert from 'node:assert/strict'
import { PassThrough } from 'node:stream'
import { describe, it } from 'node:test'
import { readJson, readText } from '../../src/index'
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

/** An error whose status is a getter without a setter, as h3 v2's `HTTPError` has: http-errors cannot adopt it. */
class ReadOnlyStatusError extends Error {
  get statusCode (): number { return 401 }
}

/** Errors http-errors' `createError(status, err)` would throw a TypeError on, out of a stream's callback. */
const unadoptable: Array<[string, () => Error, number]> = [
  ['a statusCode getter without a setter', () => new ReadOnlyStatusError('no entry'), 401],
  ['a frozen error', () => Object.freeze(new Error('no entry')), 403]
]

for (const entry of entries) {
  describe(`${entry.name} entry: errors that cannot take a status`, () => {
    for (const [label, make, status] of unadoptable) {
      it(`verify throwing ${label}: ${status}, wrapped with the error as cause, where body-parser ends the process`, async (t) => {
        const thrown = make()
        const server = await serve(t, entry.parsers.json({ verify: () => { throw thrown } }))
        const reply = await server.post('application/json', '{"a":1}')
        assert.deepEqual([reply.status, reply.json.message, reply.json.type], [status, 'no entry', 'entity.verify.failed'])
        assert.equal(Object.isFrozen(thrown) || !Object.hasOwn(thrown, 'status'), true, 'the thrown error is left as it was')
      })
    }
  })
}

describe('the promise readers: a body stream that fails with an error that cannot take a status', () => {
  it('a Node stream destroyed with it rejects with its status (h3 v2 bodyLimit\'s HTTPError is such an error)', async () => {
    const stream = Object.assign(new PassThrough(), { headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } })
    const reading = readText(stream as unknown as Parameters<typeof readText>[0])
    setImmediate(() => stream.destroy(new ReadOnlyStatusError('too big')))
    await assert.rejects(reading, (err: Error & { status?: number, cause?: unknown }) => err.status === 401 && err.message === 'too big' && err.cause instanceof ReadOnlyStatusError)
  })

  it('a Request whose body stream errors with it rejects with its status', async () => {
    const body = new ReadableStream({ start (controller) { controller.error(new ReadOnlyStatusError('too big')) } })
    const request = new Request('http://localhost/', { method: 'POST', headers: { 'content-type': 'text/plain' }, body, duplex: 'half' } as RequestInit)
    await assert.rejects(readText(request), (err: Error & { status?: number }) => err.status === 401 && err.message === 'too big')
  })

  it('a schema throwing it: its status, the error as cause', async () => {
    const schema = { '~standard': { version: 1 as const, vendor: 'test', validate: (): never => { throw new ReadOnlyStatusError('refused') } } }
    const request = new Request('http://localhost/', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    await assert.rejects(readJson(request, { schema }), (err: Error & { status?: number }) => err.status === 401 && err.message === 'refused')
  })
})
