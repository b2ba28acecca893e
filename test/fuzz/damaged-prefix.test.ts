// Issue 45, a compressed body read whole: damaged or truncated gzip, deflate and br bodies that inflate to within 8
// bytes of `limit`, split every way, from a Node stream or a Web Request, through the middlewares and the readers:
// one answer, the model's (413 when the longest prefix that inflates without error passes `limit`, else zlib's error).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import zlib from 'node:zlib'
import fc from 'fast-check'
import bodykit from '../../src/index'
import { deliveriesOf, readerAnswer, type ReaderKind } from '../limits/deliveries'
import { prefixVerdictOf } from './compressed-model'
import { answerOfMiddleware, runMiddleware, type Answer } from './targets/harness'

const COMPRESS = {
  gzip: (b: Buffer) => zlib.gzipSync(b),
  deflate: (b: Buffer) => zlib.deflateSync(b),
  br: (b: Buffer) => zlib.brotliCompressSync(b)
}
const CONTENT_TYPE = { json: 'application/json', text: 'text/plain', urlencoded: 'application/x-www-form-urlencoded' }
const MIDDLEWARES = { json: bodykit.json, text: bodykit.text, urlencoded: bodykit.urlencoded }

/** A body of `size` bytes that each parser accepts: letters from a small alphabet (compressible, not a run). */
function payloadOf (parser: Exclude<ReaderKind, 'multipart'>, letters: string, size: number): Buffer {
  const fill = (n: number): string => letters.repeat(Math.ceil(Math.max(0, n) / letters.length)).slice(0, Math.max(0, n))
  if (parser === 'json') return Buffer.from('"' + fill(size - 2) + '"')
  if (parser === 'urlencoded') return Buffer.from('a=' + fill(size - 2))
  return Buffer.from(fill(size))
}

const input = fc.record({
  parser: fc.constantFrom('json' as const, 'text' as const, 'urlencoded' as const),
  encoding: fc.constantFrom('gzip' as const, 'deflate' as const, 'br' as const),
  limit: fc.integer({ min: 16, max: 2000 }),
  delta: fc.integer({ min: -8, max: 8 }),
  letters: fc.stringMatching(/^[a-e]{2,12}$/),
  damage: fc.oneof(
    fc.record({ kind: fc.constant('cut' as const), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }) }),
    fc.record({ kind: fc.constant('cutEnd' as const), bytes: fc.integer({ min: 1, max: 8 }) }),
    fc.record({ kind: fc.constant('flip' as const), at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), bit: fc.nat(7) })
  ),
  splits: fc.array(fc.nat(4000), { minLength: 1, maxLength: 6 })
})

type Damage = { kind: 'cut', at: number } | { kind: 'cutEnd', bytes: number } | { kind: 'flip', at: number, bit: number }

function damaged (packed: Buffer, damage: Damage): Buffer {
  if (damage.kind === 'cut') return packed.subarray(0, Math.floor(damage.at * packed.length))
  if (damage.kind === 'cutEnd') return packed.subarray(0, Math.max(0, packed.length - damage.bytes))
  const copy = Buffer.from(packed)
  copy[Math.floor(damage.at * copy.length)] ^= 1 << damage.bit
  return copy
}

const runs = Number(process.env.DAMAGED_PREFIX_RUNS) || 150

describe('a damaged compressed body around the limit: one answer, the longest clean prefix\'s (issue 45)', () => {
  it(`${runs} drawn bodies, every delivery, middlewares and readers`, async (t) => {
    const tally = new Map<string, number>()
    await fc.assert(fc.asyncProperty(input, async ({ parser, encoding, limit, delta, letters, damage, splits }) => {
      const wire = damaged(COMPRESS[encoding](payloadOf(parser, letters, limit + delta)), damage)
      fc.pre(wire.length <= limit) // over `limit` on the wire is refused on the wire (test/limits)
      const verdict = prefixVerdictOf(encoding, wire, limit)
      fc.pre(verdict.kind === 'damaged')
      if (verdict.kind !== 'damaged') return
      const expected: Answer['error'] = verdict.passes
        ? { status: 413, type: 'entity.too.large', message: 'request entity too large' }
        : { status: 400, type: undefined, message: verdict.error.message }
      const headers = { 'content-type': CONTENT_TYPE[parser], 'content-encoding': encoding }
      const answers: Array<[string, Answer]> = []
      for (const delivery of deliveriesOf(wire, splits)) {
        answers.push([`read${parser} ${delivery.name}`, await readerAnswer(parser, { limit }, headers, delivery)])
        if (delivery.source !== 'node') continue
        const framing: Record<string, string> = delivery.length ? { 'content-length': String(wire.length) } : { 'transfer-encoding': 'chunked' }
        const where = `${parser}() ${delivery.name}`
        const run = await runMiddleware(MIDDLEWARES[parser]({ limit }), { headers: { ...headers, ...framing }, chunks: delivery.chunks }, where)
        answers.push([where, answerOfMiddleware(run, where)])
      }
      for (const [where, answer] of answers) {
        assert.deepEqual(answer.error && { status: answer.error.status, type: answer.error.type, message: answer.error.message }, expected, where)
      }
      const key = `${encoding} ${verdict.passes ? '413' : '400'}`
      tally.set(key, (tally.get(key) ?? 0) + 1)
    }), { numRuns: runs })
    for (const [key, count] of [...tally].sort()) t.diagnostic(`${key}: ${count}`)
    assert.ok([...tally.keys()].some((key) => key.endsWith('413')), 'no drawn body passed the limit before its damage')
  })
})
