// multipart() through a real server, both entries: options checked at creation, skip rules, fields, files, limits ±1, schema, readMultipart and cleanup.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import { describe, it, type TestContext } from 'node:test'
import { z } from 'zod'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { serve, type Middleware } from '../helpers/server'

const BOUNDARY = 'bodykitTestBoundary'
const TYPE = 'multipart/form-data; boundary=' + BOUNDARY

type Part = { name?: string, value: string | Buffer, filename?: string, type?: string }

/** A multipart body from parts, with CRLF line breaks. */
function form (parts: Part[]): Buffer {
  const pieces: Buffer[] = []
  for (const part of parts) {
    let disposition = 'Content-Disposition: form-data'
    if (part.name !== undefined) disposition += '; name="' + part.name + '"'
    if (part.filename !== undefined) disposition += '; filename="' + part.filename + '"'
    pieces.push(Buffer.from('--' + BOUNDARY + '\r\n' + disposition + '\r\n' + (part.type ? 'Content-Type: ' + part.type + '\r\n' : '') + '\r\n'))
    pieces.push(Buffer.from(part.value), Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from('--' + BOUNDARY + '--\r\n'))
  return Buffer.concat(pieces)
}

/** A final middleware that puts `req.files` (without buffers and paths) on the reply as `req.body.$files`. */
const showFiles: Middleware = (req, _res, next) => {
  const files = (req as { files?: Array<Record<string, unknown>> }).files
  if (files !== undefined) {
    const body = (req as { body?: Record<string, unknown> }).body ?? {}
    ;(req as { body?: unknown }).body = {
      ...body,
      $files: files.map(({ buffer, path: filePath, fileName, ...rest }) => ({
        ...rest,
        content: buffer ? (buffer as Buffer).toString() : fs.readFileSync(filePath as string, 'utf8'),
        ...(fileName !== undefined ? { randomName: /^[0-9a-f]{32}$/.test(fileName as string) } : {})
      }))
    }
  }
  next()
}

function tempDirectory (t: TestContext): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-multipart-'))
  t.after(() => { fs.rmSync(directory, { recursive: true, force: true }) })
  return directory
}

for (const [name, entry, unparsed] of [['default', bodykit, undefined], ['legacy', legacy, {}]] as const) {
  // body-parser 1.x's flag, set on every request a legacy parser read.
  const readFlag = name === 'legacy' ? { _body: true } : {}
  describe(`multipart() (${name} entry)`, () => {
    it('throws a TypeError naming a bad option when created', () => {
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ partLimit: '5' }, /partLimit/], [{ parameterLimit: NaN }, /parameterLimit/], [{ partLimit: 0 }, /partLimit/],
        [{ fieldSizeLimit: 'lots' }, /fieldSizeLimit/], [{ fieldNameSizeLimit: -1 }, /fieldNameSizeLimit/],
        [{ files: 'yes' }, /files/], [{ files: { storage: 's3' } }, /files\.storage/], [{ files: { fileSizeLimit: NaN } }, /files\.fileSizeLimit/],
        [{ files: { fileLimit: true } }, /files\.fileLimit/], [{ files: { fileLimit: 1.5 } }, /files\.fileLimit/],
        [{ files: { fieldNames: 'avatar' } }, /files\.fieldNames/], [{ files: { directory: '' } }, /files\.directory/],
        [{ extended: 'yes' }, /extended/], [{ defaultCharset: 'no-such-charset' }, /defaultCharset/],
        [{ verify: () => {} }, /verify/], [{ rawBody: true }, /rawBody/], [{ limit: 'abc' }, /limit/], [{ depth: -1 }, /depth/]
      ]
      for (const [options, message] of bad) assert.throws(() => entry.multipart(options as never), (err: Error) => err instanceof TypeError && message.test(err.message), JSON.stringify(options))
      assert.equal(typeof entry.multipart(), 'function')
      assert.equal(entry.multipart().name, 'multipartParser')
    })

    it('parses fields flat: repeated names become arrays, brackets stay in the name', async (t) => {
      const server = await serve(t, [entry.multipart()])
      const reply = await server.post(TYPE, form([{ name: 'a', value: '1' }, { name: 'a', value: '2' }, { name: 'b[c]', value: 'héllo' }, { name: 'empty', value: '' }]))
      assert.equal(reply.status, 200)
      assert.deepEqual(reply.json.body, { a: ['1', '2'], 'b[c]': 'héllo', empty: '' })
    })

    it('nests fields with extended: true as urlencoded does, with its depth limit', async (t) => {
      const server = await serve(t, [entry.multipart({ extended: true, depth: 2 })])
      const reply = await server.post(TYPE, form([{ name: 'a[b][]', value: '1' }, { name: 'a[b][]', value: '2' }, { name: 'a[c]', value: 'x&y=z+%' }]))
      assert.deepEqual(reply.json.body, { a: { b: ['1', '2'], c: 'x&y=z+%' } })
      const deep = await server.post(TYPE, form([{ name: 'a[b][c][d]', value: '1' }]))
      assert.equal(deep.status, 400)
      assert.equal(deep.json.type, 'querystring.parse.rangeError')
    })

    it('skips a request without a body or of another type (leaving req.files alone), and reads an empty body as an empty form', async (t) => {
      const server = await serve(t, [entry.multipart({ files: true }), showFiles])
      const none = await server.request({ method: 'GET', headers: { 'content-type': TYPE } })
      assert.deepEqual(none.json, unparsed === undefined ? { body: { $undefined: true } } : { body: {} })
      // An empty body (Content-Length: 0) is an empty form, as an empty urlencoded body is `{}`.
      const empty = await server.post(TYPE, '')
      assert.deepEqual(empty.json, { body: { $files: [] }, ...readFlag })
      const json = await server.post('application/json', '{"files":[{"path":"/etc/passwd"}]}')
      assert.equal(json.status, 200)
      assert.deepEqual(json.json.body, unparsed === undefined ? { $undefined: true } : {})
    })

    it('decodes values by their part\'s charset, else the form\'s _charset_, else defaultCharset, whole or streamed', async (t) => {
      const server = await serve(t, [entry.multipart()])
      const latin1 = Buffer.from('café', 'latin1')
      const body = form([
        { name: 'before', value: latin1 },
        { name: '_charset_', value: 'ISO-8859-1' },
        { name: 'declared', value: 'héllo', type: 'text/plain; charset=utf-8' },
        { name: 'after', value: latin1 },
        { name: '_charset_', value: 'shift_jis' }
      ])
      const expected = { before: 'café', _charset_: ['ISO-8859-1', 'shift_jis'], declared: 'héllo', after: 'café' }
      // With a length, a small canonical body takes the fast path, except for the declared charset; chunked, busboy reads it.
      assert.deepEqual((await server.post(TYPE, body)).json.body, expected)
      assert.deepEqual((await server.post(TYPE, [body.subarray(0, 50), body.subarray(50)])).json.body, expected)
      const canonical = form([{ name: 'a', value: latin1 }, { name: '_charset_', value: 'iso-8859-1' }])
      assert.deepEqual((await server.post(TYPE, canonical)).json.body, { a: 'café', _charset_: 'iso-8859-1' })
      assert.deepEqual((await server.post(TYPE, [canonical])).json.body, { a: 'café', _charset_: 'iso-8859-1' })
      // A charset nobody knows is ignored: the default applies.
      const unknown = await server.post(TYPE, form([{ name: '_charset_', value: 'klingon' }, { name: 'a', value: 'ü' }]))
      assert.deepEqual(unknown.json.body, { _charset_: 'klingon', a: 'ü' })
    })

    it('decodes with a defaultCharset only TextDecoder knows (shift_jis)', async (t) => {
      const server = await serve(t, [entry.multipart({ defaultCharset: 'Shift_JIS' })])
      const body = form([{ name: 'kana', value: Buffer.from([0x82, 0xa0]) }, { name: 'plain', value: 'abc' }])
      assert.deepEqual((await server.post(TYPE, body)).json.body, { kana: 'あ', plain: 'abc' })
      assert.deepEqual((await server.post(TYPE, [body])).json.body, { kana: 'あ', plain: 'abc' })
      // A part that declares a charset busboy cannot decode is still refused, naming the field.
      const declared = await server.post(TYPE, form([{ name: 'kana', value: Buffer.from([0x82, 0xa0]), type: 'text/plain; charset=shift_jis' }]))
      assert.equal(declared.status, 415)
      assert.equal(declared.json.type, 'charset.unsupported')
      assert.equal(declared.json.field, 'kana')
    })

    it('refuses a file part while files are off, naming the field', async (t) => {
      const server = await serve(t, [entry.multipart()])
      const reply = await server.post(TYPE, form([{ name: 'a', value: '1' }, { name: 'doc', value: 'data', filename: 'a.txt' }]))
      assert.equal(reply.status, 400)
      assert.equal(reply.json.type, 'multipart.file.unexpected')
      assert.equal(reply.json.field, 'doc')
      assert.equal(reply.json.message, 'unexpected file in field "doc"')
    })

    it('stores files in memory, in part order, with the client name kept apart', async (t) => {
      const server = await serve(t, [entry.multipart({ files: true }), showFiles])
      const reply = await server.post(TYPE, form([
        { name: 'one', value: 'first', filename: '../../etc/x.txt', type: 'text/plain' },
        { name: 'title', value: 'T' },
        { name: 'two', value: 'second', filename: 'C:\\Users\\me\\b.png', type: 'image/png' }
      ]))
      assert.equal(reply.status, 200)
      assert.deepEqual(reply.json.body, {
        title: 'T',
        $files: [
          { fieldName: 'one', originalName: 'x.txt', mimeType: 'text/plain', encoding: '7bit', size: 5, content: 'first' },
          { fieldName: 'two', originalName: 'b.png', mimeType: 'image/png', encoding: '7bit', size: 6, content: 'second' }
        ]
      })
    })

    it('writes files to disk under random names and removes them once the response has finished', async (t) => {
      const directory = tempDirectory(t)
      const server = await serve(t, [entry.multipart({ files: { storage: 'disk', directory } }), showFiles])
      const reply = await server.post(TYPE, form([{ name: 'f', value: 'on disk', filename: 'a.txt' }]))
      assert.equal(reply.status, 200)
      assert.deepEqual(reply.json.body, { $files: [{ fieldName: 'f', originalName: 'a.txt', mimeType: 'text/plain', encoding: '7bit', size: 7, content: 'on disk', randomName: true }] })
      await waitFor(() => fs.readdirSync(directory).length === 0)
    })

    it('keeps a disk file the handler moved', async (t) => {
      const directory = tempDirectory(t)
      const kept = path.join(tempDirectory(t), 'kept.txt')
      const move: Middleware = (req, _res, next) => {
        const [file] = (req as { files?: Array<{ path: string }> }).files ?? []
        fs.renameSync(file.path, kept)
        next()
      }
      const server = await serve(t, [entry.multipart({ files: { storage: 'disk', directory } }), move])
      const reply = await server.post(TYPE, form([{ name: 'f', value: 'keep me', filename: 'a.txt' }]))
      assert.equal(reply.status, 200)
      assert.equal(fs.readFileSync(kept, 'utf8'), 'keep me')
      assert.deepEqual(fs.readdirSync(directory), [])
    })

    it('counts every limit: at the limit accepted, one over refused with its own type', async (t) => {
      const cases: Array<[Record<string, unknown>, Part[], Part[], string, number]> = [
        [{ files: { fileSizeLimit: 4 } }, [{ name: 'f', value: 'abcd', filename: 'a' }], [{ name: 'f', value: 'abcde', filename: 'a' }], 'multipart.file.too.large', 413],
        [{ files: { fileLimit: 1 } }, [{ name: 'f', value: 'a', filename: 'a' }], [{ name: 'f', value: 'a', filename: 'a' }, { name: 'g', value: 'b', filename: 'b' }], 'multipart.files.too.many', 413],
        [{ fieldSizeLimit: 3 }, [{ name: 'a', value: 'abc' }], [{ name: 'a', value: 'abcd' }], 'multipart.field.too.large', 413],
        [{ fieldNameSizeLimit: 3 }, [{ name: 'abc', value: '1' }], [{ name: 'abcd', value: '1' }], 'multipart.field.name.too.large', 413],
        [{ parameterLimit: 2 }, [{ name: 'a', value: '1' }, { name: 'b', value: '2' }], [{ name: 'a', value: '1' }, { name: 'b', value: '2' }, { name: 'c', value: '3' }], 'multipart.fields.too.many', 413],
        [{ partLimit: 2 }, [{ name: 'a', value: '1' }, { name: 'b', value: '2' }], [{ name: 'a', value: '1' }, { name: 'b', value: '2' }, { name: 'c', value: '3' }], 'multipart.parts.too.many', 413],
        [{ files: { fieldNames: ['ok'] } }, [{ name: 'ok', value: 'a', filename: 'a' }], [{ name: 'no', value: 'a', filename: 'a' }], 'multipart.file.unexpected', 400],
        [{}, [{ name: 'a', value: '1' }], [{ value: '1' }], 'multipart.field.name.missing', 400],
        [{}, [{ name: 'a', value: '1' }], [{ name: '', value: '1' }], 'multipart.field.name.missing', 400]
      ]
      for (const [options, within, over, type, status] of cases) {
        const server = await serve(t, [entry.multipart(options)])
        assert.equal((await server.post(TYPE, form(within))).status, 200, type + ' within')
        const reply = await server.post(TYPE, form(over))
        assert.equal(reply.status, status, type)
        assert.equal(reply.json.type, type)
      }
      const body = form([{ name: 'a', value: 'x'.repeat(100) }])
      const atLimit = await serve(t, [entry.multipart({ limit: body.length })])
      assert.equal((await atLimit.post(TYPE, body)).status, 200)
      const underLimit = await serve(t, [entry.multipart({ limit: body.length - 1 })])
      const refused = await underLimit.post(TYPE, body)
      assert.equal(refused.status, 413)
      assert.equal(refused.json.type, 'entity.too.large')
      assert.equal(refused.json.expected, body.length)
    })

    it('refuses a missing, empty, long or repeated boundary before reading', async (t) => {
      const server = await serve(t, [entry.multipart()])
      // compat(v1): the legacy grammar does not match `boundary=` with no value at all, so that request is skipped.
      const skipped = name === 'legacy' ? ['multipart/form-data; boundary='] : []
      for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=' + 'b'.repeat(71), 'multipart/form-data; boundary=a; boundary=b']) {
        if (skipped.includes(contentType)) {
          assert.equal((await server.post(contentType, form([{ name: 'a', value: '1' }]))).status, 200)
          continue
        }
        const reply = await server.post(contentType, form([{ name: 'a', value: '1' }]))
        assert.equal(reply.status, 400, contentType)
        assert.equal(reply.json.type, 'multipart.boundary.invalid', contentType)
      }
      const longest = await server.post('multipart/form-data; boundary=' + 'b'.repeat(70), Buffer.from('--' + 'b'.repeat(70) + '--\r\n'))
      assert.equal(longest.status, 200)
    })

    it('reports a body that ends early or a malformed part header', async (t) => {
      const server = await serve(t, [entry.multipart({ files: true })])
      const cut = form([{ name: 'f', value: 'data', filename: 'a' }])
      const early = await server.post(TYPE, cut.subarray(0, cut.length - 10))
      assert.equal(early.status, 400)
      assert.equal(early.json.type, 'multipart.unexpected.end')
      const malformed = await server.post(TYPE, Buffer.from('--' + BOUNDARY + '\r\n Content-Disposition: form-data; name="a"\r\n\r\nx\r\n--' + BOUNDARY + '--\r\n'))
      assert.equal(malformed.status, 400)
      assert.equal(malformed.json.type, 'multipart.header.malformed')
    })

    it('inflates a gzip body, counting the limit after inflation', async (t) => {
      const body = form([{ name: 'a', value: 'x'.repeat(5000) }])
      const server = await serve(t, [entry.multipart({ limit: 6000 })])
      const reply = await server.post(TYPE, zlib.gzipSync(body), { 'content-encoding': 'gzip' })
      assert.equal(reply.status, 200)
      assert.equal((reply.json.body as { a: string }).a.length, 5000)
      const small = await serve(t, [entry.multipart({ limit: 1000 })])
      const refused = await small.post(TYPE, zlib.gzipSync(body), { 'content-encoding': 'gzip' })
      assert.equal(refused.status, 413)
      assert.equal(refused.json.type, 'entity.too.large')
    })

    it('runs the schema on the fields, and removes disk files when it refuses them', async (t) => {
      const directory = tempDirectory(t)
      const schema = z.object({ age: z.coerce.number().int() })
      const server = await serve(t, [entry.multipart({ schema, files: { storage: 'disk', directory } })])
      const good = await server.post(TYPE, form([{ name: 'age', value: '42' }]))
      assert.deepEqual(good.json.body, { age: 42 })
      const bad = await server.post(TYPE, form([{ name: 'age', value: 'old' }, { name: 'f', value: 'x', filename: 'a' }]))
      assert.equal(bad.status, 400)
      assert.equal(bad.json.type, 'entity.validation.failed')
      await waitFor(() => fs.readdirSync(directory).length === 0)
    })
  })
}

describe('readMultipart()', () => {
  it('resolves with fields and files, undefined when skipped, and rejects with the error', async (t) => {
    const outcomes: unknown[] = []
    const server = http.createServer((req, res) => {
      bodykit.readMultipart(req, { files: true, res }).then((result) => {
        outcomes.push(result === undefined ? 'skipped' : { fields: result.fields, files: result.files.map((file) => file.buffer?.toString()) })
        res.end('ok')
      }, (err: { status: number, type: string }) => {
        outcomes.push(err.type)
        res.statusCode = err.status
        res.end('no')
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    t.after(() => { server.close() })
    const port = (server.address() as { port: number }).port
    const post = (contentType: string, body: Buffer): Promise<number> => new Promise((resolve, reject) => {
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': contentType, 'content-length': body.length } }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode as number)) })
      req.on('error', reject)
      req.end(body)
    })
    assert.equal(await post(TYPE, form([{ name: 'a', value: '1' }, { name: 'f', value: 'file', filename: 'f.txt' }])), 200)
    assert.equal(await post('text/plain', Buffer.from('x')), 200)
    assert.equal(await post(TYPE, form([{ value: 'no name' }])), 400)
    assert.deepEqual(outcomes, [{ fields: { a: '1' }, files: ['file'] }, 'skipped', 'multipart.field.name.missing'])
  })

  it('with a schema, resolves { fields, files } whether it read a form or not, the fields being the schema\'s output', async () => {
    const schema = z.object({ a: z.coerce.number().default(0) }).optional().transform((fields) => fields ?? { a: -1 })
    const request = (contentType: string, body: Buffer): Request => new Request('http://127.0.0.1/', { method: 'POST', headers: { 'content-type': contentType }, body })
    const read = await bodykit.readMultipart(request(TYPE, form([{ name: 'a', value: '1' }, { name: 'f', value: 'x', filename: 'f.txt' }])), { schema, files: { storage: 'memory' } })
    // Typed from the schema: `fields.a` is a number, and the result is never undefined.
    assert.deepEqual([read.fields.a, read.files.map((file) => file.fieldName)], [1, ['f']])
    const notRead = await bodykit.readMultipart(request('text/plain', Buffer.from('x')), { schema })
    assert.deepEqual(notRead, { fields: { a: -1 }, files: [] })
    assert.equal(await bodykit.readMultipart(request('text/plain', Buffer.from('x'))), undefined)
  })
})

async function waitFor (condition: () => boolean): Promise<void> {
  // Removal follows the response's 'finish'; polled, with no time limit of its own (the test's timeout bounds it).
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 5))
}
