// Generated multipart bodies, valid and damaged, in up to 12 pieces: bodykit's multipart() against busboy's reading of the same bytes.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { endRequest, fakeRequest, fakeResponse, listenerCounts, tick, until } from '../hostile/helpers'
import { allowedErrors, countParts, decodedFields, limitsFor, multipartInput, readWithBusboy, toBody, toPieces, type MultipartInput } from './model'

/** `npm test` runs this many per entry; `npm run fuzz` sets MULTIPART_FUZZ_RUNS (at least 100,000). */
const RUNS = Number(process.env.MULTIPART_FUZZ_RUNS ?? 1500)

const uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => { process.off('uncaughtException', record); process.off('unhandledRejection', record) })

const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-fuzz-'))
after(() => { fs.rmSync(directory, { recursive: true, force: true }) })
const baseline = listenerCounts(fakeRequest({}))

interface Outcome {
  calls: number
  err?: { status?: number, type?: string }
  body?: unknown
  files?: Array<{ fieldName: string, originalName: string, mimeType: string, size: number, buffer?: Buffer, path?: string }>
}

/** `req.body` as the decoded fields give it in flat mode: repeated names become arrays, in order. */
function flatFields (decoded: Array<{ name: string | undefined, value: string }>): Record<string, unknown> {
  const fields: Record<string, unknown> = {}
  for (const event of decoded) {
    if (event.name === undefined) continue
    const existing = fields[event.name]
    if (existing === undefined) fields[event.name] = event.value
    else if (Array.isArray(existing)) existing.push(event.value)
    else fields[event.name] = [existing, event.value]
  }
  return fields
}

/**
 * Half the forms get a boundary browsers would write, sent unquoted: those are read by the fast paths (whole when
 * small with a length, else as they stream), the others by busboy alone.
 */
const inputArb: fc.Arbitrary<MultipartInput> = fc.tuple(multipartInput, fc.boolean())
  .map(([input, plain]) => plain ? { ...input, boundary: input.boundary.replace(/[^0-9a-zA-Z'+_.-]/g, '-') } : input)

const stats = new Map<string, number>()
const count = (key: string): void => { stats.set(key, (stats.get(key) ?? 0) + 1) }

for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
  describe(`multipart fuzz (${name} entry) against busboy`, () => {
    it('the same fields and files, or an error the bytes call for; next once; no file, listener or uncaught error left', async () => {
      await fc.assert(fc.asyncProperty(inputArb, async (input) => {
        const body = toBody(input)
        // busboy is asked about the oracle's body: the documented RFC 6266 difference (an unreadable filename*) applied.
        const oracleBody = toBody(input, true)
        const contentType = /^[0-9a-zA-Z'+_.-]+$/.test(input.boundary)
          ? 'multipart/form-data; boundary=' + input.boundary
          : 'multipart/form-data; boundary="' + input.boundary + '"'
        const probe = await readWithBusboy(oracleBody, contentType, 10 * 1024 * 1024)
        const limits = limitsFor(input, body, probe)
        const reading = await readWithBusboy(oracleBody, contentType, limits.fieldSizeLimit)
        // A deliberate difference: an empty body is an empty form (as an empty urlencoded body is `{}`), where busboy
        // reports the end of the form missing.
        if (body.length === 0) reading.error = null
        const nameOk = (fieldName: string): boolean => Buffer.byteLength(fieldName) <= limits.fieldNameSizeLimit
        const allowed = allowedErrors(reading, limits, body.length, nameOk)
        // An error is required when busboy's reading has one; a part count past the closing delimiter is permitted too.
        const required = allowed.size > 0 || countParts(body, input.boundary) > limits.partLimit
        if (countParts(body, input.boundary, true) > limits.partLimit) allowed.add('multipart.parts.too.many')

        const middleware = entry.multipart({
          limit: limits.limit,
          partLimit: limits.partLimit,
          parameterLimit: limits.parameterLimit,
          fieldSizeLimit: limits.fieldSizeLimit,
          fieldNameSizeLimit: limits.fieldNameSizeLimit,
          defaultCharset: input.defaultCharset,
          files: limits.files === null ? false : { ...limits.files, directory }
        })
        const wire = input.gzip ? zlib.gzipSync(body) : body
        if (wire.length > limits.limit) allowed.add('entity.too.large')
        const mustFail = required || wire.length > limits.limit
        const req = fakeRequest({
          'content-type': contentType,
          ...(input.chunked ? { 'transfer-encoding': 'chunked' } : { 'content-length': String(wire.length) }),
          ...(input.gzip ? { 'content-encoding': 'gzip' } : {})
        })
        const outcome: Outcome = { calls: 0 }
        middleware(req, fakeResponse(req), (err?: unknown) => {
          outcome.calls++
          outcome.err = err as Outcome['err']
          outcome.body = (req as { body?: unknown }).body
          outcome.files = (req as { files?: Outcome['files'] }).files
        })
        for (const piece of toPieces(input, wire)) {
          req.push(piece)
          if (piece.length % 3 === 0) await tick()
        }
        endRequest(req)
        await until(() => outcome.calls > 0)
        for (let i = 0; i < 3; i++) await tick()

        assert.equal(outcome.calls, 1, 'next called once')
        if (outcome.err === undefined) {
          assert.ok(!mustFail, 'accepted, but one of ' + [...allowed].join(', ') + ' was due')
          assert.deepEqual(JSON.parse(JSON.stringify(outcome.body)), flatFields(await decodedFields(oracleBody, contentType, input.defaultCharset)))
          const expectedFiles = reading.events.filter((event) => event.kind === 'file')
          const files = outcome.files ?? []
          assert.equal(files.length, limits.files === null ? 0 : expectedFiles.length)
          for (let i = 0; i < files.length; i++) {
            const file = files[i]
            const expected = expectedFiles[i]
            assert.equal(file.fieldName, expected.name)
            assert.equal(file.originalName, expected.filename ?? '')
            assert.equal(file.mimeType, expected.mimeType)
            const bytes = file.buffer ?? fs.readFileSync(file.path as string)
            assert.ok(bytes.equals(expected.kind === 'file' ? expected.data : Buffer.alloc(0)), 'file bytes')
            assert.equal(file.size, bytes.length)
            if (file.path !== undefined) fs.unlinkSync(file.path)
          }
          count('accepted')
          if (input.parts.some((part) => part.kind === 'file' && part.unreadable != null)) count('accepted with an unreadable filename*')
          if (Object.hasOwn(outcome.body as object, '_charset_')) count('accepted with _charset_')
        } else {
          assert.ok(allowed.has(outcome.err.type as string), `error ${String(outcome.err.type)} not among ${[...allowed].join(', ')}`)
          assert.ok((outcome.err.status as number) >= 400 && (outcome.err.status as number) < 500)
          count(outcome.err.type as string)
          if (/^malformed filename\*/.test(String((outcome.err as { message?: string }).message))) count('refused for an unreadable filename*')
        }
        assert.deepEqual(fs.readdirSync(directory), [], 'no file left in the upload directory')
        assert.deepEqual(listenerCounts(req), baseline, 'listener left on the request')
        assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection')
      }), { numRuns: RUNS })
      console.log(`multipart fuzz (${name}): ${[...stats].map(([key, value]) => key + ' ' + value).join(', ')}`)
      stats.clear()
    })
  })
}
