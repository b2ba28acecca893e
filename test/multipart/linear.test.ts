// The part reader's work per byte does not grow with what it holds: bodies a byte at a time (what a hostile client
// sends), counted in the work the reader hands its byte tools (bytes searched, copied or made into text).
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { startFormReading, type ByteTools, type FormEvents } from '../../src/multipart/form-reading'
import { NODE_BYTES } from '../../src/multipart/node-bytes'
import { WEB_BYTES } from '../../src/web/bytes'

/** A build's byte tools that count the bytes each call is given to look at. */
function counting (tools: ByteTools): { tools: ByteTools, work: () => number } {
  let work = 0
  return {
    tools: {
      search (needle) {
        const find = tools.search(needle)
        return (chunk, from) => {
          work += chunk.length - from
          return find(chunk, from)
        }
      },
      latin1 (bytes, start, end) {
        work += end - start
        return tools.latin1(bytes, start, end)
      },
      bytesOf: tools.bytesOf,
      decode (bytes, start, end, encoding) {
        work += end - start
        return tools.decode(bytes, start, end, encoding)
      },
      join (pieces, size) {
        work += size
        return tools.join(pieces, size)
      }
    },
    work: () => work
  }
}

const NO_EVENTS: FormEvents = {
  field () {},
  file: () => ({ data () {}, limit () {}, end () {} }),
  countLimit () {},
  unreadableFileName () {},
  malformed () { throw new Error('the body was refused') }
}

/** The work of reading `body` a byte at a time (and whether the form was complete). */
function workOf (body: Buffer, tools: ByteTools): number {
  const counted = counting(tools)
  const form = startFormReading('X', { defParamCharset: 'utf8', limits: { fieldSize: 1 << 20 } }, NO_EVENTS, counted.tools)
  for (let at = 0; at < body.length; at++) form.write(body.subarray(at, at + 1))
  assert.equal(form.end(), true, 'the form was read to its end')
  return counted.work()
}

const part = (headers: string, data: string): string => '--X\r\n' + headers + '\r\n\r\n' + data + '\r\n'
const BODIES: ReadonlyArray<[string, (size: number) => Buffer]> = [
  ['a long file name', (size) => Buffer.from(part('Content-Disposition: form-data; name="f"; filename="' + 'n'.repeat(size) + '"', 'x') + '--X--')],
  ['many header lines', (size) => Buffer.from(part(Array.from({ length: size / 32 }, (_, i) => 'X-Line-' + i + ': ' + 'v'.repeat(20)).join('\r\n') + '\r\nContent-Disposition: form-data; name="f"', 'x') + '--X--')],
  ['a long header name', (size) => Buffer.from(part('X-' + 'a'.repeat(size) + ': 1\r\nContent-Disposition: form-data; name="f"', 'x') + '--X--')],
  ['a long field', (size) => Buffer.from(part('Content-Disposition: form-data; name="f"', 'v'.repeat(size)) + '--X--')],
  ['a file', (size) => Buffer.from(part('Content-Disposition: form-data; name="f"; filename="a"', 'd'.repeat(size)) + '--X--')],
  ['many parts', (size) => Buffer.from(Array.from({ length: size / 64 }, (_, i) => part('Content-Disposition: form-data; name="f' + i + '"', 'v')).join('') + '--X--')]
]

describe('the part reader, a byte at a time', () => {
  for (const [build, tools] of [['Node', NODE_BYTES], ['Web', WEB_BYTES]] as const) {
    for (const [name, make] of BODIES) {
      it(`${build} build, ${name}: work linear in the body (1 KiB and 12 KiB: ~12x, not ~144x)`, () => {
        const small = make(1024)
        const large = make(12 * 1024)
        const smallWork = workOf(small, tools)
        const largeWork = workOf(large, tools)
        // A byte at a time, each byte is looked at a bounded number of times: nothing held is searched or copied again.
        assert.ok(largeWork <= 4 * large.length, `${largeWork} units of work for ${large.length} bytes`)
        const ratio = largeWork / Math.max(1, smallWork)
        assert.ok(ratio < 2 * (large.length / small.length), `12 KiB cost ${ratio.toFixed(1)} times 1 KiB`)
      })
    }
  }
})
