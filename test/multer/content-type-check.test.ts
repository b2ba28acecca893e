// bodykit/multer's check of a Content-Type (refusalOfBusboy: busboy's reading of it, without busboy) against busboy itself, on drawn headers.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import busboy from 'busboy'
import fc from 'fast-check'
import { refusalOfBusboy } from '../../src/multer/policy'

const runs = Number(process.env.MULTER_FUZZ_RUNS) || 3000

/**
 * busboy's verdict: the message it throws, or null when it builds a form's parser. busboy would also read a urlencoded
 * body; multer hands it only `multipart/*` ones (its type check), so bodykit/multer refuses that as any other type.
 */
function busboyVerdict (header: unknown): string | null {
  try {
    const parser = busboy({ headers: { 'content-type': header as string } })
    return parser.constructor.name === 'Multipart' ? null : 'Unsupported content type: ' + String(header)
  } catch (err) {
    return (err as Error).message
  }
}

const piece = fc.constantFrom('multipart', 'Multipart', 'form-data', 'FORM-DATA', 'mixed', 'application', 'x-www-form-urlencoded',
  '/', ';', ' ', '\t', '=', '"', '\\', 'boundary', 'BOUNDARY', 'charset', 'utf-8', 'x', '--', '----WebKitFormBoundary7MA4YWxkTrZu0gW', '', ',', '*')

/** Content-Types near the ones that matter: well formed, then damaged piece by piece, and plain noise. */
const contentType = fc.oneof(
  fc.constantFrom('multipart/form-data; boundary=X', 'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary="a b"',
    'multipart/form-data;boundary=X', 'multipart/form-data; charset=utf-8', 'multipart/mixed; boundary=X', 'Multipart/Form-Data; BOUNDARY=X',
    'application/x-www-form-urlencoded', 'multipart/form-data; boundary="unterminated', 'multipart/form-data ; boundary=X', ''),
  fc.array(piece, { maxLength: 10 }).map((pieces) => pieces.join('')),
  fc.string({ maxLength: 24 }),
  fc.tuple(fc.constantFrom('multipart/form-data; boundary=X', 'multipart/form-data; a=b; boundary=c'), fc.nat(40), fc.string({ maxLength: 4 }))
    .map(([text, at, insert]) => text.slice(0, at) + insert + text.slice(at + insert.length))
)

describe('bodykit/multer: the Content-Type check', () => {
  it('refuses a Content-Type exactly when busboy does, with its message', () => {
    fc.assert(fc.property(fc.oneof(contentType, fc.constantFrom(undefined, 42, null, ['multipart/form-data; boundary=X'])), (header) => {
      assert.equal(refusalOfBusboy(header)?.message ?? null, busboyVerdict(header))
    }), { numRuns: runs })
  })
})
