// The form reading's proof against the reader it replaced: the multipart stage must report to the collector exactly
// what busboy (with the hooks that made it read one way however a body is split: oracle/) reports for the same bytes
// in the same pieces, damaged bodies and limits at every count included, whatever pace the file streams are read at.
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import type { IncomingMessage } from 'node:http'
import type { ReadingConfig } from '../../src/multipart/form-reading'
import type { PartCollector } from '../../src/multipart/part-collector'
import { createMultipartStage, type FormPolicy } from '../../src/multipart/part-reader'
import { LimitedInput } from '../../src/stage-input'
import { readWithBusboyStage } from './oracle/busboy-stage'
import { listenerCounts, tick } from '../hostile/helpers'
import { multipartInput, toBody, toPieces, type MultipartInput } from './model'

/** `npm test` runs this many; `npm run fuzz` sets MULTIPART_FUZZ_RUNS. */
const RUNS = Number(process.env.MULTIPART_FUZZ_RUNS ?? 3000)

/** After this many event-loop turns with nothing new, a reading has stopped for good (busboy can stall: see below). */
const QUIET_TURNS = 50

/** How file streams are read: at once, a chunk per turn of the event loop, or from a later turn on (multer's async fileFilter). */
type Pace = 'flowing' | 'slow' | 'late'

interface Case {
  input: MultipartInput
  /** Pieces: the model's splits, the body whole (0), or every `size` bytes (down to one byte, so a delimiter spans many). */
  pieceSize: number | null
  config: ReadingConfig
  pace: Pace
}

/** A boundary browsers would write (some bodies keep the model's, which may need quoting). */
const plain = (boundary: string): string => boundary.replace(/[^0-9a-zA-Z'+_.-]/g, '-')

/** Epilogues, one of which holds a part after the closing delimiter (busboy reads it when it arrives in the same piece). */
const epilogue = (boundary: string): fc.Arbitrary<Buffer> => fc.constantFrom(
  '', '', '\r\n', '\r', 'junk', '\r\n--' + boundary + '\r\nContent-Disposition: form-data; name="late"\r\n\r\nx\r\n--' + boundary + '--',
  '\r\n--' + boundary + '\r\nContent-Disposition: form-data; name="late"; filename="l.txt"\r\n\r\nx\r\n--' + boundary + '--\r\n'
).map((text) => Buffer.from(text))

/** Bodies from the fuzz model, half of them made canonical (as browsers write forms), with large files sometimes. */
const inputArb: fc.Arbitrary<MultipartInput> = fc.tuple(multipartInput, fc.boolean(), fc.nat({ max: 200_000 }))
  .chain(([drawn, canonical, large]) => epilogue(plain(drawn.boundary)).map((tail) => {
    const boundary = plain(drawn.boundary)
    const parts = drawn.parts.map((part) => part.kind === 'file' && part.data.length > 2000 ? { ...part, data: Buffer.alloc(large, 'q') } : part)
    return canonical
      ? {
          ...drawn,
          boundary,
          preamble: Buffer.alloc(0),
          epilogue: tail,
          damage: drawn.damage === 'header-flood' || drawn.damage === 'junk-after-headers' ? 'none' as const : drawn.damage,
          lineBreak: '\r\n' as const,
          parts: parts.filter((part) => part.kind !== 'bare').map((part) => part.kind === 'field'
            ? { ...part, name: part.name ?? 'unnamed', charset: null }
            : part.kind === 'file' ? { ...part, name: part.name ?? 'unnamed', extended: false, type: part.type === 'text/plain; charset=utf-8' ? 'text/plain' : part.type } : part)
        }
      : { ...drawn, boundary, parts, epilogue: Buffer.concat([drawn.epilogue, tail]) }
  }))

const countArb = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat({ max: 8 }) })
const sizeArb = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.nat({ max: 3 }) }, { weight: 2, arbitrary: fc.nat({ max: 4000 }) })

const caseArb: fc.Arbitrary<Case> = fc.record({
  input: inputArb,
  pieceSize: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 97 }) }, { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }) }),
  config: fc.record({
    defCharset: fc.constantFrom('utf8', undefined),
    undeclaredAsBytes: fc.boolean(),
    defParamCharset: fc.constantFrom('utf8', 'latin1'),
    preservePath: fc.boolean(),
    fileHwm: fc.constantFrom(undefined, 1, 1024),
    limits: fc.record({ parts: countArb, files: countArb, fields: countArb, fieldSize: sizeArb, fileSize: sizeArb })
  }),
  pace: fc.constantFrom('flowing' as const, 'slow' as const, 'late' as const)
})

/** Everything a collector is told, in order, with each file's 'limit' and error; then each file's bytes at its end. */
interface Log { calls: unknown[], ends: Record<number, string> }

/** A collector that records every call, and reads each file stream at the given pace. */
function recordingCollector (pace: Pace): { collector: PartCollector, log: Log, quiet: () => boolean } {
  const calls: unknown[] = []
  const ends: Record<number, string> = {}
  const log: Log = { calls, ends }
  let changes = 0
  let aborted = false
  let failed = false
  // As both real collectors, nothing is heard once the stage was aborted (busboy's destroy may still emit), nor
  // after a parser error: multipart() answers with it and multer aborts with it. What busboy does after its error
  // depends on what it held in its buffer, which the pace of file reading decides.
  const note = (entry: unknown): void => {
    if (aborted || failed) return
    calls.push(entry)
    changes++
  }
  let files = 0
  const collector: PartCollector = {
    settled: false,
    whenJudged (callback) { process.nextTick(callback) },
    field (name, value, info) { note(['field', name, typeof value === 'object' ? { bytes: Buffer.from(value).toString('latin1') } : value, info.valueTruncated]) },
    file (name, stream, info) {
      if (aborted || failed) {
        // As the real collectors do with a file they no longer want: read to nothing (busboy may still destroy it).
        stream.on('error', () => {})
        stream.resume()
        return
      }
      const index = files++
      note(['file', index, name, info.filename, info.mimeType, info.encoding])
      const chunks: Buffer[] = []
      stream.on('limit', () => { note(['limit', index, (stream as Readable & { truncated?: boolean }).truncated]) })
      // How much of a destroyed file its reader had taken depends on the reader's pace against the source's: not compared.
      stream.on('error', (err) => { note(['file error', index, err.message]) })
      // When a file's end is seen depends on when the next part's headers are read, which busboy itself does at
      // different times for different pieces: its end and bytes are compared, not its place among the calls.
      stream.on('end', () => { ends[index] = Buffer.concat(chunks).toString('latin1'); changes++ })
      const read = (): void => {
        stream.on('data', (chunk: Buffer) => {
          chunks.push(chunk)
          changes++
          if (pace === 'slow') {
            stream.pause()
            setImmediate(() => stream.resume())
          }
        })
      }
      if (pace === 'late') setImmediate(() => { setImmediate(read) })
      else read()
    },
    countLimit (limit) { note(['count limit', limit]) },
    // As a parser error: both real collectors refuse the form with it, and hear nothing after it.
    unreadableFileName (name) {
      note(['unreadable filename*', name])
      failed = true
    },
    parserError (err, empty) {
      note(['error', err.message, empty])
      failed = true
    },
    fault (thrown) { throw thrown },
    // busboy ends a form once every file stream has ended: how many had is part of the call.
    end () { note(['end', Object.keys(ends).length]) },
    abort (callback) {
      aborted = true
      process.nextTick(callback)
    }
  }
  let seen = -1
  return {
    collector,
    log,
    quiet: () => {
      const still = seen === changes
      seen = changes
      return still
    }
  }
}

/** One reading of the case's bytes by the multipart stage, or by the reader it replaced. */
async function read (drawn: Case, body: Buffer, reader: 'stage' | 'busboy'): Promise<{ log: Log, listeners: Record<string, number> }> {
  const { collector, log, quiet } = recordingCollector(drawn.pace)
  const source = new Readable({ read () {} })
  const baseline = listenerCounts(source)
  const req = { headers: { 'content-type': 'multipart/form-data; boundary=' + drawn.input.boundary } } as unknown as IncomingMessage
  // The stage reads through the pipeline's input, as in a request; the pipeline stops it once the read settled.
  const input = new LimitedInput(source, Infinity, () => {})
  const { abort } = reader === 'busboy'
    ? readWithBusboyStage(source, req, drawn.config, collector)
    : createMultipartStage({ check: () => null, begin: () => ({ config: drawn.config, collector }) } satisfies FormPolicy).start(input, req, undefined, () => {})
  const pieces = drawn.pieceSize === null ? toPieces(drawn.input, body) : drawn.pieceSize === 0 ? [body] : splitEvery(body, drawn.pieceSize)
  for (const piece of pieces) {
    source.push(piece)
    if (piece.length % 2 === 0) await tick()
  }
  source.push(null)
  // Both readers run on ticks and immediates only: a reading that changes nothing for this many turns has stopped.
  let turns = 0
  while (turns < QUIET_TURNS) {
    await tick()
    turns = quiet() ? turns + 1 : 0
  }
  await new Promise<void>((resolve) => { abort(() => { resolve() }) })
  input.stop()
  const listeners = listenerCounts(source)
  for (const [event, count] of Object.entries(baseline)) if (listeners[event] === count) delete listeners[event]
  return { log, listeners }
}

function splitEvery (body: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = []
  for (let at = 0; at < body.length; at += size) pieces.push(body.subarray(at, at + size))
  return pieces.length === 0 ? [body] : pieces
}

describe('the multipart stage against the reader it replaced', () => {
  it('reports what busboy reported for the same pieces: fields, files, limits, errors and the end', async () => {
    const stats = { accepted: 0, failed: 0 }
    await fc.assert(fc.asyncProperty(caseArb, async (drawn) => {
      const body = toBody(drawn.input)
      const stage = await read(drawn, body, 'stage')
      const busboy = await read(drawn, body, 'busboy')
      try {
        assert.deepEqual(stage.log, busboy.log)
      } catch (err) {
        // fast-check reports the input; the difference is printed here.
        console.log('stage  ' + JSON.stringify(stage.log).slice(0, 2000) + '\nbusboy ' + JSON.stringify(busboy.log).slice(0, 2000))
        throw err
      }
      assert.deepEqual(stage.listeners, {}, 'listener left on the source')
      if (stage.log.calls.some((entry) => (entry as unknown[])[0] === 'error')) stats.failed++
      else stats.accepted++
    }), { numRuns: RUNS })
    console.log(`multipart stage against busboy (${RUNS} forms): ${Object.entries(stats).map(([key, value]) => key + ' ' + value).join(', ')}`)
  })
})
