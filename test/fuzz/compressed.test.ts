// Generated compressed bodies, whole and damaged, against body-parser: the one-shot inflation must answer as the stream does (issue 14),
// a damaged body as issue 45's rule does (the longest prefix that inflates without error), and in pieces as whole.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { entries } from '../hostile/helpers'
import { shape } from './model'
import { checkVerdict, compressedInput, play, toRequest, type CompressedInput, type CompressedRequest, type Outcome } from './compressed-model'

const uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => { process.off('uncaughtException', record); process.off('unhandledRejection', record) })

/** What body-parser answered, by kind: shows the generator reaches every verdict, damaged 413s above all. */
function verdictOf (input: CompressedInput, request: CompressedRequest, reference: Outcome): string {
  const damaged = input.damage.kind === 'none' ? 'intact' : 'damaged'
  if (request.wire.length > request.limit) return 'over limit on the wire'
  const err = reference.err
  if (!err) return `${damaged}: body`
  return `${damaged}: ${err.status} ${String(err.type ?? err.code)}`
}

/** What a comparison across deliveries looks at: the error's status, type, message, code and count, or the body. */
function answerOf (outcome: Outcome): unknown {
  const err = outcome.err
  return err ? { status: err.status, type: err.type, message: err.message, code: err.code, received: err.received } : { body: shape(outcome.body) }
}

/** Requests per entry: COMPRESSED_FUZZ_RUNS, or a fast slice for npm test. */
const runs = Number(process.env.COMPRESSED_FUZZ_RUNS) || 1500

for (const entry of entries) {
  describe(`compressed bodies (${entry.name} entry vs ${entry.name === 'default' ? 'body-parser 2.4.0' : 'body-parser 1.20.6'})`, () => {
    it(`${runs} generated requests: body-parser's answer, once, with nothing uncaught`, async (t) => {
      const tally = new Map<string, number>()
      await fc.assert(fc.asyncProperty(compressedInput, async (input) => {
        const request = toRequest(entry.name, input)
        const mine = await play(entry, 'bodykit', input, request)
        const reference = await play(entry, 'reference', input, request)
        checkVerdict(input, request, mine, reference)
        if (request.chunks.length > 1 && request.wire.length <= request.limit) {
          // Issue 45: one answer however the body is split (the wire's own 413 counts the piece that crossed).
          const whole = await play(entry, 'bodykit', input, { ...request, chunks: [request.wire] })
          assert.deepEqual(answerOf(mine), answerOf(whole), 'in pieces and whole')
          if (request.encoding === 'zstd') checkVerdict(input, { ...request, chunks: [request.wire] }, whole, await play(entry, 'reference', input, { ...request, chunks: [request.wire] }))
        }
        const verdict = verdictOf(input, request, reference)
        tally.set(verdict, (tally.get(verdict) ?? 0) + 1)
        assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection')
      }), { numRuns: runs })
      for (const [verdict, count] of [...tally].sort()) t.diagnostic(`${verdict}: ${count}`)
    })
  })
}
