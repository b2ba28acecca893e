// The pipeline's own copies of type-is's normalize and hasBody (kept so that no request loads the MIME database) against type-is, on drawn input.
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import typeis from 'type-is'
import { hasBodyHeaders } from '../src/protocol'
import { typeOfExtension } from '../src/packages/type-is'
import { normalizeType } from '../src/type-match'

const runs = Number(process.env.BODYKIT_FUZZ_RUNS) || 2000

/** Type options as apps write them, and pieces of them: aliases, extensions, full types, `+suffix`, wildcards, junk. */
const typeOption = fc.oneof(
  fc.constantFrom('urlencoded', 'multipart', 'json', 'JSON', 'html', '.json', 'png', 'text', '+json', '+xml', '*/*', 'application/*',
    'application/json', 'text/plain', '*/*+json', '', '/', 'x', 'urlencoded ', 'Multipart', 'nope-not-a-type', 'tar.gz', 'a/b/c'),
  fc.string({ maxLength: 12 }),
  fc.stringMatching(/^[+.]?[a-zA-Z0-9*./+-]{0,12}$/)
)

/** Header values as Node, proxies and unit tests' fakes give them. */
const headerValue = fc.oneof(fc.constant(undefined), fc.string({ maxLength: 6 }), fc.constantFrom('0', '12', ' 12 ', '1e3', '0x10', '-1', 'NaN', 'chunked', ''),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 2 }), fc.integer(), fc.constant(null))

describe('type-is, as the pipeline has it', () => {
  it('normalizeType gives what type-is.normalize gives', () => {
    fc.assert(fc.property(typeOption, (option) => {
      assert.equal(normalizeType(option, typeOfExtension), typeis.normalize(option))
    }), { numRuns: runs })
  })

  it('hasBodyHeaders gives what type-is.hasBody gives', () => {
    fc.assert(fc.property(headerValue, headerValue, (transferEncoding, contentLength) => {
      const headers: Record<string, unknown> = {}
      if (transferEncoding !== undefined) headers['transfer-encoding'] = transferEncoding
      if (contentLength !== undefined) headers['content-length'] = contentLength
      const req = { headers } as never
      assert.equal(hasBodyHeaders(req), typeis.hasBody(req))
    }), { numRuns: runs })
  })
})
