// bodykit/nest against @nestjs/platform-express 11.2.10 on drawn forms: field names, values and files sized around each
// limit, through every interceptor, whole or damaged; both apps must give the same answer and leave no file on disk.
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { buildForm, formType, type Part } from '../multer/ported-form'
import { appsForSuite, DISK_FILE_SIZE, LIMITS, post, untilEmpty, type Answer } from './upload-apps'

const RUNS = Number(process.env.NEST_UPLOAD_RUNS ?? 150)

/** Names around the routes' fields and LIMITS: the expected ones, others, nested, indexed, too long, empty. */
const NAMES = ['file', 'files', 'a', 'b', 'x', 'tags[2]', 'tags[0]', 'a[b][c]', 'a[b][c][d]', 'x[100]', 'x[101]', 'n'.repeat(LIMITS.fieldNameSize), 'n'.repeat(LIMITS.fieldNameSize + 1), '']

/** Sizes at and around a limit. */
const around = (limit: number): fc.Arbitrary<number> => fc.constantFrom(0, 1, limit - 1, limit, limit + 1)

const partArb: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ name: fc.constantFrom(...NAMES), size: around(LIMITS.fieldSize) }).map(({ name, size }) => ({ name, value: 'v'.repeat(size) })),
  fc.record({
    name: fc.constantFrom(...NAMES),
    filename: fc.constantFrom('a.txt', 'dir/b.bin', 'Zoë.txt', ''),
    type: fc.constantFrom('text/plain', 'application/octet-stream', null),
    size: fc.oneof(around(LIMITS.fileSize), around(DISK_FILE_SIZE))
  }).map(({ name, filename, type, size }) => ({ name, filename, type, data: Buffer.alloc(size, size % 251) }))
)

/** How a body is damaged: not at all, cut, left open, a header broken, or the Content-Type's boundary wrong or missing. */
type Damage = { kind: 'none' | 'open' | 'badBoundary' | 'noBoundary' } | { kind: 'cut' | 'header', at: number }
const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 4, arbitrary: fc.constant({ kind: 'none' as const }) },
  fc.constantFrom({ kind: 'open' as const }, { kind: 'badBoundary' as const }, { kind: 'noBoundary' as const }),
  fc.record({ kind: fc.constantFrom('cut' as const, 'header' as const), at: fc.double({ min: 0, max: 1, noNaN: true }) })
)

const ROUTES = ['/m/single', '/m/array', '/m/fields', '/m/any', '/m/none', '/m/filter', '/m/async-filter', '/m/multer-storage', '/d/single', '/d/array', '/d/fields', '/d/pipe']

/** The body and Content-Type of a drawn form, damaged as drawn. */
function encode (parts: Part[], damage: Damage): { body: Buffer, contentType: string } {
  let body = buildForm(parts, { close: damage.kind !== 'open' })
  let contentType = formType()
  if (damage.kind === 'badBoundary') contentType = formType('not-the-boundary')
  if (damage.kind === 'noBoundary') contentType = 'multipart/form-data'
  if (damage.kind === 'cut') body = body.subarray(0, Math.floor(body.length * damage.at))
  if (damage.kind === 'header') {
    // A header line's colon becomes a space: the part's header block no longer reads.
    const colons = [...body.toString('latin1').matchAll(/Content-(Disposition|Type):/g)].map((match) => (match.index ?? 0) + match[0].length - 1)
    if (colons.length > 0) {
      body = Buffer.from(body)
      body[colons[Math.floor(damage.at * colons.length) % colons.length]] = 0x20
    }
  }
  return { body, contentType }
}

describe('bodykit/nest and Nest\'s interceptors answer drawn forms alike', () => {
  const apps = appsForSuite(before, after)

  it(`${RUNS} forms: the same status, JSON and files, and nothing left on disk`, async () => {
    await fc.assert(fc.asyncProperty(fc.constantFrom(...ROUTES), fc.array(partArb, { maxLength: 8 }), damageArb, async (route, parts, damage) => {
      const { body, contentType } = encode(parts, damage)
      const answers: Answer[] = []
      for (const app of apps) {
        answers.push(await post(app.port, route, body, { 'content-type': contentType }))
        assert.deepEqual(await untilEmpty(app.dir), [], app.name + ' left files')
      }
      assert.deepEqual(answers[1], answers[0])
    }), { numRuns: RUNS })
  })
})
