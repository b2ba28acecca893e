// Property-based fuzz on in-process fake requests: both entries against their body-parser release (issue 5.7).
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { abortRequest, endRequest, entries, fakeRequest, fakeResponse, listenerCounts, prototypeSnapshot, shieldReferencePipes, sleep, tick, type Entry, type HttpErrorLike } from '../hostile/helpers'
import { checkVerdict, fuzzInput, middlewareFor, observeRequest, poisonInput, runsFor, toWire, type FuzzInput, type Result, type Wire } from './model'

const uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => { process.off('uncaughtException', record); process.off('unhandledRejection', record) })

const baseline = listenerCounts(fakeRequest({}))

/** Plays the request's script into a fresh fake request through one middleware. */
async function play (entry: Entry, role: 'bodykit' | 'reference', input: FuzzInput, wire: Wire): Promise<{ result: Result, delivered: number, listeners: Record<string, number> }> {
  const mw = middlewareFor(entry, role, input)
  const req = fakeRequest(wire.headers)
  if (role === 'reference') shieldReferencePipes(req)
  const result: Result = { calls: 0 }
  mw(req, fakeResponse(req), (err) => {
    result.calls++
    if (result.calls === 1) {
      result.err = err as HttpErrorLike | undefined
      result.body = (req as { body?: unknown }).body
      result.consumed = req.readableEnded
      observeRequest(entry, req, result)
    }
  })
  let delivered = 0
  for (let i = 0; i < wire.chunks.length; i++) {
    if (input.abortAfter === i) break
    req.push(wire.chunks[i])
    delivered += wire.chunks[i].length
    if (input.gaps) await tick()
  }
  if (input.abortAfter !== null && input.abortAfter < wire.chunks.length) abortRequest(req)
  else endRequest(req)
  // zlib works on the thread pool. bodykit always calls next, so it is waited for with no time bound (load only
  // slows it). body-parser never answers some aborts (gzip), so the reference gets a bounded patience.
  const aborted = input.abortAfter !== null && input.abortAfter < wire.chunks.length
  const patience = role === 'reference' ? (aborted ? 200 : 2000) : Infinity
  const started = Date.now()
  while (result.calls === 0 && Date.now() - started < patience) await (Date.now() - started < 5 ? tick() : sleep(1))
  for (let i = 0; i < 3; i++) await tick()
  if (!req.readableEnded && !req.destroyed && result.calls) await sleep(2)
  return { result, delivered, listeners: listenerCounts(req) }
}

for (const entry of entries) {
  describe(`fuzz in-process (${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2' : 'body-parser 1'})`, () => {
    it('next once; body-parser\'s result or a stricter spec error; no listener left; no uncaught error; prototypes intact', async () => {
      const protos = prototypeSnapshot()
      await fc.assert(fc.asyncProperty(fuzzInput, async (input) => {
        const wire = toWire(input)
        const mine = await play(entry, 'bodykit', input, wire)
        const reference = await play(entry, 'reference', input, wire)
        checkVerdict(input, wire, mine.delivered, mine.result, reference.result)
        assert.deepEqual(mine.listeners, baseline, 'listener left on the request')
        assert.equal(prototypeSnapshot(), protos, 'a built-in prototype changed')
        assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection')
      }), { numRuns: runsFor(0.45) })
    })

    it('json bodies full of poisoning keys: every value of onProtoPoisoning and onConstructorPoisoning, and rawBody', async () => {
      await fc.assert(fc.asyncProperty(poisonInput, async (input) => {
        const wire = toWire(input)
        const mine = await play(entry, 'bodykit', input, wire)
        const reference = await play(entry, 'reference', input, wire)
        checkVerdict(input, wire, mine.delivered, mine.result, reference.result)
      }), { numRuns: runsFor(0.1) })
    })
  })
}
