// RFC 6266 §4.3: a `filename*` that cannot be read falls back to `filename` (busboy and multer drop the whole part),
// and with no `filename` the form is refused, for multipart() (both entries) and bodykit/multer, over real sockets.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import type { IncomingMessage, ServerResponse } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import fc from 'fast-check'
import realMulter from 'multer'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import { paramDecoderFor, readDisposition } from '../../src/multipart/part-headers'
import { field, form, listUploads, openFds, part, settleFds, startMultipartServer, uploadDir, type Middleware, type Next } from './helpers'
import { readFileNameFallback } from './oracle/filename-fallback'

/** busboy's own Content-Disposition parser, with the fallback bodykit added to it before its own reader: the reference. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getDecoder, parseDisposition } = require('busboy/lib/utils.js') as {
  getDecoder: (charset: string) => (value: string, hint: number) => string | undefined
  parseDisposition: (header: string, decode: (value: string, hint: number) => string | undefined) => { type: string, params: Record<string, string | undefined> } | undefined
}

/** Every byte value, so that a file kept under its plain name is seen to arrive whole. */
const BYTES = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte))
const BAD_STAR = "UTF-8''%E0%A4%A"

/** A file part with this Content-Disposition (after `form-data; name="doc"`). */
function docPart (params: string, data: Buffer = BYTES): Buffer {
  return part('Content-Disposition: form-data; name="doc"' + params + '\r\nContent-Type: application/pdf', data)
}

/** Unreadable `filename*` values as busboy finds them: each makes busboy (and so multer) skip the part whole. */
const UNREADABLE: ReadonlyArray<[what: string, value: string]> = [
  ['a %-escape cut short', BAD_STAR],
  ['a % without hex digits', "UTF-8''100%.txt"],
  ['a charset TextDecoder does not know', "no-such-charset''x.txt"],
  ['no language part', "UTF-8'x.txt"],
  ['no value after the language', "UTF-8''"],
  ['a quoted value', '"x.txt"'],
  ['a space inside the value', "UTF-8''my file.txt"],
  ['a character outside charset names', "UTF 8''x.txt"]
]

/** The setups under test: each a middleware and whether its files come as bodykit's or as multer's. */
interface Setup {
  name: string
  multer: boolean
  make: (directory: string) => Middleware
}

/** multer's `req.file` as one of `req.files`, so that the test server's answer shows it. */
function single (mw: Middleware): Middleware {
  return (req, res, next) => {
    mw(req, res, (err?: unknown) => {
      const request = req as IncomingMessage & { file?: unknown, files?: unknown[] }
      if (err === undefined && request.file !== undefined) request.files = [request.file]
      next(err)
    })
  }
}

const SETUPS: Setup[] = [
  ...([['default', bodykit], ['legacy', legacy]] as const).flatMap(([entry, kit]): Setup[] => [
    { name: `multipart() (${entry} entry), memory`, multer: false, make: () => kit.multipart({ files: { storage: 'memory' } }) as Middleware },
    { name: `multipart() (${entry} entry), disk`, multer: false, make: (directory) => kit.multipart({ files: { storage: 'disk', directory } }) as Middleware }
  ]),
  { name: 'bodykit/multer single, memory', multer: true, make: () => single(multer({ storage: multer.memoryStorage() }).single('doc') as unknown as Middleware) },
  { name: 'bodykit/multer any, disk', multer: true, make: (directory) => multer({ dest: directory }).any() as unknown as Middleware }
]

/** A test's server for a setup, with the upload folder, the file's bytes read back from memory or disk. */
async function serve (t: TestContext, setup: Setup): Promise<{ send: (body: Buffer) => Promise<{ status: number, json: Record<string, unknown> }>, directory: string }> {
  const directory = uploadDir(t)
  const inner = setup.make(directory)
  // Reads each stored file back, as the route would, before the answer is written (and disk files removed).
  const mw: Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => {
    inner(req, res, (err?: unknown) => {
      const files = (req as IncomingMessage & { files?: Array<Record<string, unknown>> }).files
      for (const file of err === undefined && Array.isArray(files) ? files : []) {
        const bytes = Buffer.isBuffer(file.buffer) ? file.buffer : fs.readFileSync(file.path as string)
        Object.defineProperty(file, 'buffer', { value: undefined, enumerable: true })
        file.hex = bytes.toString('hex')
      }
      next(err)
    })
  }
  const server = await startMultipartServer(t, mw)
  return {
    directory,
    send: async (body) => {
      const answer = await server.send(body)
      return { status: answer.status, json: answer.json as Record<string, unknown> }
    }
  }
}

/** The one file of an accepted answer: its field, its name on the client and its bytes. */
function onlyFile (setup: Setup, json: Record<string, unknown>): { field: unknown, name: unknown, hex: unknown } {
  const files = json.files as Array<Record<string, unknown>>
  assert.equal(files.length, 1, JSON.stringify(json))
  const file = files[0]
  return setup.multer
    ? { field: file.fieldname, name: file.originalname, hex: file.hex }
    : { field: file.fieldName, name: file.originalName, hex: file.hex }
}

for (const setup of SETUPS) {
  describe(`filename* that cannot be read: ${setup.name}`, () => {
    for (const [what, value] of UNREADABLE) {
      it(`keeps the file under its plain filename (${what}), its bytes intact`, async (t) => {
        const { send } = await serve(t, setup)
        for (const params of [`; filename="safe.txt"; filename*=${value}`, `; filename*=${value}; filename="safe.txt"`]) {
          const answer = await send(form(field('before', '1'), docPart(params), field('after', '2')))
          assert.equal(answer.status, 200, params + ': ' + JSON.stringify(answer.json))
          assert.deepEqual(onlyFile(setup, answer.json), { field: 'doc', name: 'safe.txt', hex: BYTES.toString('hex') }, params)
          assert.deepEqual(answer.json.body, { before: '1', after: '2' })
        }
      })
    }

    it('refuses the form with a 400 naming the field when there is no plain filename (nothing left on disk, descriptors back)', async (t) => {
      const { send, directory } = await serve(t, setup)
      const baseline = openFds()
      for (const params of [`; filename*=${BAD_STAR}`, `; filename=""; filename*=${BAD_STAR}`]) {
        // A stored file before the part is removed with the refusal.
        const stored = part('Content-Disposition: form-data; name="doc"; filename="first.txt"\r\nContent-Type: text/plain', 'first')
        const answer = await send(form(stored, docPart(params), field('after', '2')))
        assert.equal(answer.status, 400, params)
        if (setup.multer) {
          // As busboy's error for a malformed part (multer passes it on): a plain Error, no MulterError code.
          assert.deepEqual(answer.json, { status: 400, message: 'Malformed filename* in field "doc"', field: 'doc', name: 'Error' }, params)
        } else {
          assert.deepEqual(answer.json, { status: 400, type: 'multipart.header.malformed', message: 'malformed filename* in field "doc"', field: 'doc', name: 'BadRequestError' }, params)
        }
        assert.deepEqual(listUploads(directory), [])
      }
      // At most the baseline: a descriptor of the test runner itself (tsx writing its cache) may have been open then.
      assert.ok(await settleFds(baseline) <= baseline)
    })

    it('a part without a name is refused as any part without one', async (t) => {
      const { send } = await serve(t, setup)
      const answer = await send(form(part(`Content-Disposition: form-data; filename*=${BAD_STAR}`, 'x')))
      assert.equal(answer.status, 400)
      if (setup.multer) assert.equal(answer.json.code, 'MISSING_FIELD_NAME')
      else assert.equal(answer.json.type, 'multipart.field.name.missing')
    })

    it('a readable filename* still wins over filename', async (t) => {
      const { send } = await serve(t, setup)
      const answer = await send(form(docPart("; filename=\"safe.txt\"; filename*=UTF-8''%E2%82%AC%20rates.pdf")))
      assert.equal(answer.status, 200)
      assert.deepEqual(onlyFile(setup, answer.json), { field: 'doc', name: '€ rates.pdf', hex: BYTES.toString('hex') })
    })

    it('other damage to the Content-Disposition still skips the part, as busboy does', async (t) => {
      const { send } = await serve(t, setup)
      // A bad filename* next to other damage (junk after a parameter; an unclosed quote), and a bad `name*`.
      for (const params of [`; filename="safe.txt"; filename*=${BAD_STAR}; junk`, `; filename="safe.txt; filename*=${BAD_STAR}`, '; filename="safe.txt"; name*=UTF-8\'\'%E']) {
        const answer = await send(form(docPart(params), field('after', '2')))
        assert.equal(answer.status, 200, params)
        assert.deepEqual(answer.json.body, { after: '2' }, params)
        assert.deepEqual(answer.json.files ?? [], [], params)
      }
    })

    it('falls back inside a large streamed form too, after a canonical part the fast path read', async (t) => {
      const { send } = await serve(t, setup)
      const large = Buffer.alloc(200 * 1024, 'q')
      const answer = await send(form(part('Content-Disposition: form-data; name="big"\r\nContent-Type: text/plain', large), docPart(`; filename="safe.txt"; filename*=${BAD_STAR}`)))
      if (setup.multer) {
        // multer's `single('doc')` refuses the file in another field; `any()` keeps both.
        if (answer.status === 400) return assert.equal(answer.json.code, 'LIMIT_UNEXPECTED_FILE')
      }
      assert.equal(answer.status, 200)
      const files = answer.json.files as Array<Record<string, unknown>>
      const doc = files.find((file) => (file.fieldname ?? file.fieldName) === 'doc') as Record<string, unknown>
      assert.equal(doc.originalname ?? doc.originalName, 'safe.txt')
      assert.equal(doc.hex, BYTES.toString('hex'))
    })
  })
}

describe('multer 2.x itself (the difference docs/multer.md lists)', () => {
  it('drops a file whose filename* it cannot read, with a 200, and skips the form whose only file name it is', async (t) => {
    const { send } = await serve(t, { name: 'multer', multer: true, make: (directory) => realMulter({ dest: directory }).any() as unknown as Middleware })
    const kept = await send(form(docPart(`; filename="safe.txt"; filename*=${BAD_STAR}`), field('after', '2')))
    assert.deepEqual([kept.status, kept.json.files, kept.json.body], [200, [], { after: '2' }])
    const alone = await send(form(docPart(`; filename*=${BAD_STAR}`), field('after', '2')))
    assert.deepEqual([alone.status, alone.json.files, alone.json.body], [200, [], { after: '2' }])
  })
})

describe('readDisposition against busboy\'s parseDisposition, with the fallback bodykit added to busboy before', () => {
  /** Content-Disposition headers built from the pieces busboy's grammar has, good and damaged. */
  const piece = fc.constantFrom(
    'name="doc"', 'name=doc', 'name="a;b"', 'name="a\\"b"', 'name="x', 'filename="safe.txt"', 'filename=""', 'filename=safe.txt',
    'filename*=' + BAD_STAR, "filename*=UTF-8''good.txt", "FILENAME*=utf-8'en'%41.txt", "filename*=UTF-8'a;b'c.txt", "filename*=no-such''x",
    "filename*=no-such''", "filename*=UTF-8'x", 'filename*="x"', "filename*=UTF-8''a b", "name*=UTF-8''%E0", "name*=UTF-8''n", 'junk', '=x', 'a=',
    ' ', 'filename="dir/sub\\\\f.txt"', 'filename=".."', 'name="\xc3\xa9"', 'filename="\xe2\x82\xac.txt"', 'name=""'
  )
  const header = fc.tuple(fc.constantFrom('form-data', 'attachment', 'form-data ', 'FORM-DATA'), fc.array(fc.tuple(piece, fc.constantFrom('; ', ';', ' ; ', ';\t')), { maxLength: 5 }))
    .map(([type, params]) => type + params.map(([text, separator]) => separator + text).join(''))

  /** busboy's base name (lib/utils.js). */
  const baseName = (path: string): string => {
    const name = path.slice(Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\')) + 1)
    return name === '.' || name === '..' ? '' : name
  }

  // (Not a defParamCharset busboy cannot decode with: the fallback's own probe of a `filename*` then failed on its
  // added `a=b`, and took a readable `filename*` for an unreadable one.)
  for (const charset of ['utf8', 'latin1', 'utf16le', undefined]) {
    it(`reads what busboy read, and refuses what the fallback refused (defParamCharset ${String(charset)})`, () => {
      const decode = typeof charset === 'string' ? getDecoder(charset) : (value: string) => value
      let fallbacks = 0
      let unreadable = 0
      fc.assert(fc.property(header, fc.boolean(), (text, preservePath) => {
        let reading = parseDisposition(text, decode)
        let expected: ReturnType<typeof readDisposition>
        const verdict = reading === undefined ? readFileNameFallback(text, decode) : null
        if (verdict?.kind === 'fallback') {
          fallbacks++
          reading = parseDisposition(verdict.disposition, decode)
        }
        if (verdict?.kind === 'unreadable') {
          unreadable++
          expected = { name: verdict.name, fileName: undefined, unreadable: true }
        } else if (reading === undefined || reading.type !== 'form-data') {
          expected = null
        } else {
          const fileName = reading.params['filename*'] || reading.params.filename || undefined
          expected = { name: reading.params.name || undefined, fileName: fileName === undefined || preservePath ? fileName : baseName(fileName), unreadable: false }
        }
        assert.deepEqual(readDisposition(text, { decodeParam: paramDecoderFor(charset), preservePath }), expected, text)
      }), { numRuns: 5000 })
      if (charset === 'utf8') assert.ok(fallbacks > 20 && unreadable > 20, `${fallbacks} fallbacks, ${unreadable} without a file name`)
    })
  }
})
