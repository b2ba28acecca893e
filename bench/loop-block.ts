// Event-loop block section (issue 11): the longest synchronous stretch while one compressed body is read, at the one-shot bound.
import zlib from 'node:zlib'
import { chunksOf, makeRequest, run, type Case } from './cases'
import { type Context, type Row, type SectionResult } from './report'
import type { Middleware } from './targets'

/** bodykit's largest `limit` for one-shot inflation (src/inflate.ts AT_ONCE_MAX_LIMIT): the worst case sits there. */
const LIMIT = 256 * 1024
const MiB = 2 ** 20

/** A zlib stream of `size` bytes made of one-byte fixed-Huffman blocks, each flushed: the most blocks per byte. */
function tinyBlocks (size: number): Buffer {
  const block = zlib.deflateRawSync('a', { strategy: zlib.constants.Z_FIXED, finishFlush: zlib.constants.Z_SYNC_FLUSH })
  const count = Math.floor((size - 8) / block.length)
  let a = 1
  let b = 0
  for (let i = 0; i < count; i++) {
    a = (a + 0x61) % 65521
    b = (b + a) % 65521
  }
  const adler = Buffer.alloc(4)
  adler.writeUInt32BE(((b << 16) | a) >>> 0)
  // zlib header, the blocks, an empty final fixed block, the Adler-32 of the output.
  return Buffer.concat([Buffer.from([0x78, 0x01]), ...Array<Buffer>(count).fill(block), Buffer.from([0x03, 0x00]), adler])
}

function jsonText (size: number): string {
  let text = '['
  for (let i = 0; text.length < size - 64; i++) text += JSON.stringify({ id: i, name: 'item ' + ((i * 7919) % 10007), score: (i % 97) / 97 }) + ','
  return text + '0]'
}

const raw = { 'content-type': 'application/octet-stream' }
const options = { limit: LIMIT, type: '*/*' }
const zstd = zlib as unknown as { zstdCompressSync?: (input: Buffer | string) => Buffer }
const brBombWindow = { params: { [zlib.constants.BROTLI_PARAM_LGWIN]: 24, [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } }

function cases (): Case[] {
  const json = jsonText(LIMIT)
  const zeros = Buffer.alloc(64 * MiB)
  return [
    { name: 'gzip json 256 KiB', parser: 'raw', options, headers: { ...raw, 'content-encoding': 'gzip' }, body: zlib.gzipSync(json) },
    { name: 'gzip bomb (64 MiB of zeros)', parser: 'raw', options, headers: { ...raw, 'content-encoding': 'gzip' }, body: zlib.gzipSync(zeros, { level: 9 }) },
    { name: 'deflate, 256 KiB of 1-byte blocks', parser: 'raw', options, headers: { ...raw, 'content-encoding': 'deflate' }, body: tinyBlocks(LIMIT) },
    { name: 'br json 256 KiB', parser: 'raw', options, headers: { ...raw, 'content-encoding': 'br' }, body: zlib.brotliCompressSync(json) },
    { name: 'br bomb (64 MiB of zeros, 16 MiB window)', parser: 'raw', options, headers: { ...raw, 'content-encoding': 'br' }, body: zlib.brotliCompressSync(zeros, brBombWindow) },
    // zstd where Node has it (22.15 and later); elsewhere it is a 415 for every target.
    ...(zstd.zstdCompressSync
      ? [
          { name: 'zstd json 256 KiB', parser: 'raw' as const, options, headers: { ...raw, 'content-encoding': 'zstd' }, body: zstd.zstdCompressSync(json) },
          { name: 'zstd bomb (64 MiB of zeros)', parser: 'raw' as const, options, headers: { ...raw, 'content-encoding': 'zstd' }, body: zstd.zstdCompressSync(zeros) }
        ]
      : [])
  ]
}

/** Milliseconds of the longest stretch between two turns of the event loop while `mw` reads one request. */
async function longestBlock (mw: Middleware, c: Case, chunks: Buffer[]): Promise<number> {
  let last = performance.now()
  let longest = 0
  let running = true
  const turn = (): void => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
    if (running) setImmediate(turn)
  }
  setImmediate(turn)
  await run(mw, makeRequest(c), chunks).catch(() => {})
  running = false
  const now = performance.now()
  return Math.max(longest, now - last)
}

export async function loopBlock (ctx: Context): Promise<SectionResult> {
  const rows: Row[] = []
  const repeats = ctx.quick ? 5 : 15
  for (const c of cases()) {
    const chunks = chunksOf(c.body)
    const blocks = new Map<string, number>()
    for (const target of ctx.targets) {
      const mw = target.parsers[c.parser](c.options)
      const times: number[] = []
      let failed = ''
      for (let i = 0; i < repeats + 2; i++) {
        try {
          const time = await longestBlock(mw, c, chunks)
          if (i >= 2) times.push(time) // the first runs compile and warm up
        } catch (err) {
          failed = String((err as Error).message ?? err).slice(0, 40)
          break
        }
      }
      // The least disturbed run: another process taking the core only ever lengthens a stretch.
      if (!failed) blocks.set(target.id, Math.min(...times))
      const block = blocks.get(target.id)
      const base = blocks.get(target.baseline)
      rows.push({
        case: c.name,
        target: target.id,
        baseline: target.baseline,
        ratio: block !== undefined && base !== undefined ? block / base : null,
        value: block ?? null,
        unit: 'ms',
        note: failed ? 'error: ' + failed : block !== undefined && base === undefined ? `${block.toFixed(2)} ms` : undefined
      })
    }
    ctx.log(`  ${c.name}: ${[...blocks].map(([id, ms]) => `${id} ${ms.toFixed(2)} ms`).join(', ')}`)
  }
  return {
    id: 'loop-block',
    title: `Event-loop block: longest synchronous stretch while one compressed body is read, raw parser, limit 256 KiB (ratio to baseline; lower is better; best of ${repeats})`,
    legend: 'A setImmediate ticker runs beside one in-process request (body pushed in 64 KiB chunks); the longest gap between its turns is the block, and the shortest such block over the runs is reported (on a busy machine, a preempted main thread only adds to it). 256 KiB is bodykit\'s largest limit for one-shot inflation, so these are its worst cases; body-parser inflates on the thread pool, the floor inflates everything at once with no bound.',
    rows
  }
}
