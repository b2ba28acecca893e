// The Web build's form reader by example: every limit and error type (each answer also the Node build's), the
// hostile bodies (an endless file, a 100 KiB part header, 10,000 tiny parts, a delimiter's prefix across every split)
// and what both builds refuse alike.
import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import * as esbuild from 'esbuild'
import { normalizeMultipartOptions } from '../../src/multipart/settings'
import { createFieldAssembler } from '../../src/multipart/fields'
import { modern } from '../../src/variants'
import { WEB_BYTES } from '../../src/web/bytes'
import { startWebForm, type WebForm, type WebFormReader } from '../../src/web/form-reader'
import { nodeAnswer, webAnswer, webResult } from './form-compare'
import { NODE_FORMS } from '../../src/parsers/node-forms'

const TYPE = 'multipart/form-data; boundary=XB'
const bytes = (text: string): Uint8Array => Uint8Array.from(text, (c) => c.charCodeAt(0) & 0xff)
const part = (headers: string, data: string): string => '--XB\r\n' + headers + '\r\n\r\n' + data + '\r\n'
const field = (name: string, value: string): string => part(`Content-Disposition: form-data; name="${name}"`, value)
const file = (name: string, filename: string, data: string, type = 'text/plain'): string =>
  part(`Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}`, data)
const CLOSE = '--XB--\r\n'

function reader (options: Record<string, unknown>, contentType = TYPE): WebFormReader {
  const settings = normalizeMultipartOptions(options)
  const started = startWebForm(contentType, settings, createFieldAssembler(settings, modern, NODE_FORMS, WEB_BYTES.decode))
  assert.ok(!(started instanceof Error), 'the header is refused')
  return started
}

/** [what, body, options, the error type, or null for a form] */
const EXAMPLES: ReadonlyArray<readonly [string, string, Record<string, unknown>, string | null]> = [
  ['fields, nested names, a file in memory', field('a', '1') + field('b[c]', '2') + file('f', 'dir/x.txt', 'data\r\n') + CLOSE, { extended: true, files: true }, null],
  ['an empty body is an empty form', '', {}, null],
  ['preamble and epilogue', 'preamble\r\n' + field('a', '1') + CLOSE + 'epilogue', {}, null],
  ["filename* (RFC 5987) over filename, base name of a Windows path", part('Content-Disposition: form-data; name="f"; filename="x"; filename*=UTF-8\'\'C%3A%5Cd%5C%E2%82%AC.txt', 'e') + CLOSE, { files: true }, null],
  ['an unreadable filename* falls back to filename', part('Content-Disposition: form-data; name="f"; filename="plain.txt"; filename*=nope\'\'x', 'e') + CLOSE, { files: true }, null],
  ['latin1 bytes in names, a part charset, _charset_', field('\xe9', '\xe9') + field('_charset_', 'iso-8859-1') + part('Content-Disposition: form-data; name="u"\r\nContent-Type: text/plain; charset=utf-8', '\xc3\xa9') + CLOSE, {}, null],
  ['octet-stream without a file name is a file', part('Content-Disposition: form-data; name="f"\r\nContent-Type: application/octet-stream\r\nContent-Transfer-Encoding: BINARY', 'b') + CLOSE, { files: true }, null],
  ['a delimiter inside a header block does not end it', '--XB\r\nContent-Disposition: form-data; na\r\n--XB--\r\n\r\n\r\n\xfe\r\n', {}, 'multipart.header.malformed'],
  ['a part without header lines', '--XB\r\n\r\nvalue\r\n' + CLOSE, {}, 'multipart.header.malformed'],
  ['a header line without a colon', part('Content-Disposition form-data', 'v') + CLOSE, {}, 'multipart.header.malformed'],
  ['a part header over 16 KiB', part('X-Long: ' + 'a'.repeat(16 * 1024), 'v') + CLOSE, {}, 'multipart.header.malformed'],
  ['an unreadable filename* and no filename', part('Content-Disposition: form-data; name="f"; filename*=UTF-8\'\'%E0%A4%A', 'x') + CLOSE, { files: true }, 'multipart.header.malformed'],
  ['no closing delimiter', field('a', '1'), {}, 'multipart.unexpected.end'],
  ['cut in a part header', '--XB\r\nContent-Disposition: form-data; name="a"\r', {}, 'multipart.unexpected.end'],
  ['cut in a part header after a bad byte', '--XB\r\nContent-Disposition: form-data; name="a"\r\r', {}, 'multipart.header.malformed'],
  ['cut in a value', '--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\nval', {}, 'multipart.unexpected.end'],
  ['a part without a name', part('Content-Disposition: form-data', 'v') + CLOSE, {}, 'multipart.field.name.missing'],
  ['a part without Content-Disposition is skipped', part('Content-Type: text/plain', 'v') + field('a', '1') + CLOSE, {}, null],
  ['a field with an empty name', field('', 'v') + CLOSE, {}, 'multipart.field.name.missing'],
  ['a file without a name', part('Content-Disposition: form-data; filename="x"', 'v') + CLOSE, { files: true }, 'multipart.field.name.missing'],
  ['fieldNameSizeLimit (bytes, UTF-8)', field('\xc3\xa9\xc3\xa9', 'v') + CLOSE, { fieldNameSizeLimit: 3 }, 'multipart.field.name.too.large'],
  ['files off', file('f', 'x', 'v') + CLOSE, {}, 'multipart.file.unexpected'],
  ['files.fieldNames', file('g', 'x', 'v') + CLOSE, { files: { fieldNames: ['f'] } }, 'multipart.file.unexpected'],
  ['a charset busboy has no decoder for', part('Content-Disposition: form-data; name="a"\r\nContent-Type: text/plain; charset=iso-8859-2', 'v') + CLOSE, {}, 'charset.unsupported'],
  ['partLimit: skipped parts count', field('a', '1') + part('X-No-Disposition: 1', 'v') + field('c', '3') + CLOSE, { partLimit: 2 }, 'multipart.parts.too.many'],
  ['partLimit exactly met', field('a', '1') + field('b', '2') + CLOSE, { partLimit: 2 }, null],
  ['parameterLimit', field('a', '1') + field('b', '2') + CLOSE, { parameterLimit: 1 }, 'multipart.fields.too.many'],
  ['files.fileLimit', file('f', '1', 'a') + file('f', '2', 'b') + CLOSE, { files: { fileLimit: 1 } }, 'multipart.files.too.many'],
  ['files.fileSizeLimit', file('f', '1', 'four') + CLOSE, { files: { fileSizeLimit: 3 } }, 'multipart.file.too.large'],
  ['files.fileSizeLimit exactly met', file('f', '1', 'fou') + CLOSE, { files: { fileSizeLimit: 3 } }, null],
  ['fieldSizeLimit', field('a', 'four') + CLOSE, { fieldSizeLimit: 3 }, 'multipart.field.too.large'],
  ['fieldSizeLimit exactly met', field('a', 'fou') + CLOSE, { fieldSizeLimit: 3 }, null],
  ['a field too large, cut before its end: the end of form comes first', '--XB\r\nContent-Disposition: form-data; name="a"\r\n\r\nfour', { fieldSizeLimit: 3 }, 'multipart.unexpected.end'],
  ['depth: nested deeper than allowed', field('a[b][c][d]', '1') + CLOSE, { extended: true, depth: 1 }, 'querystring.parse.rangeError']
]

describe('the Web form reader by example, each answer the Node build\'s', () => {
  for (const [what, body, options, type] of EXAMPLES) {
    it(what, async () => {
      const chunks = [bytes(body)]
      const web = webAnswer(TYPE, chunks, options)
      assert.equal(web, await nodeAnswer(TYPE, chunks, options))
      const result = webResult(TYPE, chunks, options)
      assert.equal(result instanceof Error ? (result as { type?: string }).type : null, type, web)
    })
  }

  it('a Content-Type without a usable boundary is refused before any byte', () => {
    for (const header of ['multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=a; boundary=b', 'multipart/form-data; boundary=' + 'b'.repeat(71)]) {
      const settings = normalizeMultipartOptions({})
      const answer = startWebForm(header, settings, createFieldAssembler(settings, modern, NODE_FORMS, WEB_BYTES.decode)) as { type?: string, status?: number }
      assert.deepEqual([answer.type, answer.status], ['multipart.boundary.invalid', 400], header)
    }
  })
})

describe('hostile bodies', () => {
  it('an endless file part is refused at its size limit, however long the body goes on', () => {
    const form = reader({ files: { fileSizeLimit: 1024 * 1024 } })
    assert.equal(form.write(bytes('--XB\r\nContent-Disposition: form-data; name="f"; filename="x"\r\n\r\n')), null)
    const chunk = new Uint8Array(64 * 1024).fill(0x61)
    let writes = 0
    let answer: Error | null = null
    while (answer === null && writes < 1000) {
      answer = form.write(chunk)
      writes++
    }
    assert.equal((answer as { type?: string } | null)?.type, 'multipart.file.too.large')
    // The 17th 64 KiB chunk passes 1 MiB: answered there, and every later write gives the same error.
    assert.equal(writes, 17)
    assert.equal(form.write(chunk), answer)
    assert.equal(form.end(), answer)
  })

  it('a 100 KiB part header is refused once it passes 16 KiB', () => {
    const form = reader({})
    assert.equal(form.write(bytes('--XB\r\nX-Long: ')), null)
    let answer: Error | null = null
    let written = 0
    while (answer === null && written < 100 * 1024) {
      answer = form.write(new Uint8Array(1024).fill(0x61))
      written += 1024
    }
    assert.equal((answer as { type?: string } | null)?.type, 'multipart.header.malformed')
    assert.ok(written <= 17 * 1024, `answered after ${written} bytes`)
  })

  it('10,000 tiny parts: a form with every limit raised, and the 413s of the default limits', async () => {
    const body = bytes(Array.from({ length: 10000 }, (_, i) => field('f' + (i % 7), String(i))).join('') + CLOSE)
    const raised = { partLimit: Infinity, parameterLimit: Infinity }
    const form = webResult(TYPE, [body], raised) as WebForm
    assert.equal((form.fields.f3 as string[]).length, 1429)
    assert.equal(webAnswer(TYPE, [body], raised), await nodeAnswer(TYPE, [body], raised))
    // At the 1001st field's delimiter, its parameterLimit comes before the part count's.
    for (const [options, type] of [[{}, 'multipart.fields.too.many'], [{ parameterLimit: Infinity }, 'multipart.parts.too.many']] as const) {
      const refused = webResult(TYPE, [body], options) as { type?: string, limit?: number }
      assert.deepEqual([refused.type, refused.limit], [type, 1000])
      assert.equal(webAnswer(TYPE, [body], options), await nodeAnswer(TYPE, [body], options))
    }
  })

  it("a delimiter's prefix repeated through a file, split inside every prefix, is read as the file's bytes", () => {
    const prefix = '\r\n--XB'.slice(0, -1)
    const data = prefix.repeat(64 * 1024) + '\r\n--X-'
    const body = bytes(file('f', 'p', data) + CLOSE)
    // Chunks of 7 bytes never line up with the 5-byte prefix: every split falls inside one.
    const chunks = Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.subarray(i * 7, i * 7 + 7))
    const form = webResult(TYPE, chunks, { files: { fileSizeLimit: 1024 * 1024 } }) as WebForm
    assert.equal(form.files.length, 1)
    assert.equal(Buffer.from(form.files[0].buffer).toString('latin1'), data)
  })
})

describe('a urlencoded Content-Type with a boundary', () => {
  it('both builds refuse the boundary, as for any type but multipart/form-data (busboy read a urlencoded form there)', async () => {
    const header = 'application/x-www-form-urlencoded; boundary=XB'
    const settings = normalizeMultipartOptions({})
    const answer = startWebForm(header, settings, createFieldAssembler(settings, modern, NODE_FORMS, WEB_BYTES.decode)) as { type?: string }
    assert.equal(answer.type, 'multipart.boundary.invalid')
    const node = await nodeAnswer(header, [bytes('a=1')], { type: 'application/x-www-form-urlencoded' })
    assert.match(node, /multipart\.boundary\.invalid/)
  })
})

describe('the module graph', () => {
  it('bundles for a browser with no Node built-in, no Buffer and no process', async () => {
    const result = await esbuild.build({
      entryPoints: [path.resolve(__dirname, '../../src/web/form-reader.ts')],
      bundle: true,
      minify: true,
      metafile: true,
      write: false,
      platform: 'browser',
      format: 'esm',
      logLevel: 'silent',
      // A Node built-in would stay unresolved for a browser: taken as external here, and listed.
      plugins: [{ name: 'builtins', setup (build) { build.onResolve({ filter: /^(node:)?[a-z_]+$/ }, (args) => ['buffer', 'crypto', 'events', 'fs', 'os', 'path', 'stream', 'util', 'zlib', 'string_decoder'].includes(args.path.replace(/^node:/, '')) ? { path: args.path, external: true } : undefined) } }]
    })
    const builtins = Object.values(result.metafile.inputs).flatMap((input) => input.imports.filter((use) => use.external).map((use) => use.path))
    assert.deepEqual(builtins, [])
    assert.doesNotMatch(result.outputFiles[0].text, /\b(require|Buffer|process)\b/)
  })
})
