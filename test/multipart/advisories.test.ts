// Every row of the multipart security history that applies to multipart() (both entries): a 4xx or the documented
// result, next called once, the process up, no file left in the upload folder and no descriptor left open.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import type { IncomingMessage } from 'node:http'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import { abortRequest, endRequest, fakeRequest, fakeResponse, listenerCounts, prototypeSnapshot, sleep, startServer, tick, type HttpErrorLike, type Middleware } from '../hostile/helpers'

const B = 'advisoryBoundary'
const TYPE = 'multipart/form-data; boundary=' + B
const baseline = listenerCounts(fakeRequest({}))

const uncaught: unknown[] = []
const record = (err: unknown): void => { uncaught.push(err) }
before(() => { process.on('uncaughtException', record); process.on('unhandledRejection', record) })
after(() => {
  process.off('uncaughtException', record)
  process.off('unhandledRejection', record)
  assert.deepEqual(uncaught, [], 'uncaught exception or unhandled rejection')
})

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-advisories-'))
after(() => { fs.rmSync(root, { recursive: true, force: true }) })
let folders = 0
/** A fresh, empty upload folder. */
function folder (): string {
  const dir = path.join(root, String(folders++))
  fs.mkdirSync(dir)
  return dir
}

/** Open descriptors of this process. */
function openDescriptors (): number {
  return fs.readdirSync('/proc/self/fd').length
}

/** One part's bytes: its headers as given, then its data. */
function part (headers: string, data: string | Buffer = ''): Buffer {
  return Buffer.concat([Buffer.from('--' + B + '\r\n' + headers + '\r\n\r\n'), Buffer.from(data), Buffer.from('\r\n')])
}
const field = (name: string, value: string): Buffer => part('Content-Disposition: form-data; name="' + name + '"', value)
const file = (name: string, filename: string, data: string | Buffer): Buffer => part('Content-Disposition: form-data; name="' + name + '"; filename="' + filename + '"', data)
const close = Buffer.from('--' + B + '--\r\n')

interface Run { calls: number, err?: HttpErrorLike, req: IncomingMessage & { body?: unknown, files?: Array<{ path?: string, originalName: string, fileName?: string, size: number }> } }

/** Feeds a fake request in pieces through a middleware, then ends or aborts it; waits for next. */
async function play (mw: Middleware, chunks: Buffer[], then: 'end' | 'abort' = 'end', headers: Record<string, string> = {}): Promise<Run> {
  const length = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const req = fakeRequest({ 'content-type': TYPE, 'content-length': String(length), ...headers }) as Run['req']
  const run: Run = { calls: 0, req }
  mw(req, fakeResponse(req), (err) => {
    run.calls++
    run.err = err as HttpErrorLike | undefined
  })
  for (const chunk of chunks) {
    if (run.calls > 0 && then === 'end') break
    req.push(chunk)
    await tick()
  }
  if (then === 'end') endRequest(req)
  else abortRequest(req)
  while (run.calls === 0) await sleep(1)
  await tick()
  return run
}

/** A value as JSON sees it (legacy's flat fields have a null prototype, as its urlencoded() gives). */
function plain (value: unknown): unknown {
  return JSON.parse(JSON.stringify(value))
}

/** Splits a body into pieces of `size` bytes. */
function pieces (body: Buffer, size = 64 * 1024): Buffer[] {
  const out: Buffer[] = []
  for (let at = 0; at < body.length; at += size) out.push(body.subarray(at, at + size))
  return out
}

for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
  describe(`multipart advisories (${name} entry)`, () => {
    it('dicer CVE-2022-24434: a header block starting with a space is a 400, and the next request is served', async () => {
      const mw = entry.multipart()
      const bad = await play(mw, [Buffer.from('--' + B + '\r\n Content-Disposition: form-data; name="a"\r\n\r\nx\r\n'), close])
      assert.equal(bad.err?.status, 400)
      assert.equal(bad.err?.type, 'multipart.header.malformed')
      const good = await play(mw, [field('a', '1'), close])
      assert.deepEqual(plain(good.req.body), { a: '1' })
    })

    it('@fastify/busboy #72, CVE-2026-42561, CVE-2026-87908, CVE-2025-61772: a 16 KiB header line without a colon, 100k header lines, a 10 MB header block: refused at the 16 KiB cap', async () => {
      const mw = entry.multipart({ limit: '20mb' })
      const noColon = await play(mw, [Buffer.from('--' + B + '\r\n' + ' \t'.repeat(8 * 1024) + '\r\n\r\n'), close])
      assert.equal(noColon.err?.type, 'multipart.header.malformed')
      const lines = await play(mw, pieces(Buffer.from('--' + B + '\r\nContent-Disposition: form-data; name="a"\r\n' + 'X-A: b\r\n'.repeat(100_000))))
      assert.equal(lines.err?.type, 'multipart.header.malformed')
      // A 400 is answered after the read-off (body-parser's order), so all 10 MB arrive; the parser stopped at the cap.
      const block = await play(mw, pieces(Buffer.concat([Buffer.from('--' + B + '\r\nX-Big: '), Buffer.alloc(10 * 1024 * 1024, 'a')])))
      assert.equal(block.err?.type, 'multipart.header.malformed')
    })

    it('multer #1176, CVE-2025-47944, multer #1411: a part that never closes gives one 400, 1000 times over', async () => {
      const mw = entry.multipart({ files: true })
      const body = Buffer.concat([Buffer.from('--' + B + '\r\nContent-Disposition: form-data; name="f"; filename="a"\r\n\r\n--' + B + '--')])
      for (let i = 0; i < 1000; i++) {
        const run = await play(mw, [body])
        assert.equal(run.calls, 1)
        assert.equal(run.err?.status, 400)
        assert.equal(run.err?.type, 'multipart.unexpected.end')
      }
      await sleep(20)
      assert.deepEqual(uncaught, [])
    })

    it('multer CVE-2025-47935, CVE-2026-5038, CVE-2026-77037: 200 uploads destroyed mid-file: next once each, folder empty, descriptors flat', async () => {
      const dir = folder()
      const mw = entry.multipart({ files: { storage: 'disk', directory: dir } })
      await play(mw, [file('f', 'a', 'warm')], 'abort')
      const descriptors = openDescriptors()
      for (let i = 0; i < 200; i++) {
        const run = await play(mw, [file('f', 'a.bin', Buffer.alloc(70_000, 1)).subarray(0, 50_000)], 'abort')
        assert.equal(run.calls, 1)
        assert.equal(run.err?.type, 'request.aborted')
        assert.deepEqual(fs.readdirSync(dir), [])
        assert.deepEqual(listenerCounts(run.req), baseline)
      }
      assert.equal(openDescriptors(), descriptors)
    })

    it('multer CVE-2025-48997: a file part with name="" or without a name is a 400', async () => {
      const dir = folder()
      const mw = entry.multipart({ files: { storage: 'disk', directory: dir } })
      for (const disposition of ['form-data; name=""; filename="a"', 'form-data; filename="a"']) {
        const run = await play(mw, [file('ok', 'first', 'stored first'), part('Content-Disposition: ' + disposition, 'x'), close])
        assert.equal(run.err?.type, 'multipart.field.name.missing')
        assert.deepEqual(fs.readdirSync(dir), [])
      }
    })

    it('multer CVE-2025-7338: filename="" and a closing delimiter cut by one character is a 400', async () => {
      const mw = entry.multipart({ files: true })
      const run = await play(mw, [Buffer.from('--' + B + '\r\nContent-Disposition: form-data; name="f"; filename=""\r\n\r\n\r\n--' + B + '-')])
      assert.equal(run.err?.status, 400)
    })

    it('multer CVE-2026-2359, @fastify/multipart CVE-2025-24033 and CVE-2026-19474: a real client gone mid-file or between parts: settled, folder empty', async () => {
      const dir = folder()
      const server = await startServer(entry.multipart({ files: { storage: 'disk', directory: dir } }))
      try {
        const heads = (length: number): string => 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: ' + TYPE + '\r\nContent-Length: ' + length + '\r\n\r\n'
        const sends = [
          Buffer.concat([Buffer.from(heads(999_999)), file('f', 'a', 'sixteen bytes!!!').subarray(0, 100)]),
          Buffer.concat([Buffer.from(heads(999_999)), file('f', 'a', 'complete file'), Buffer.from('--' + B)])
        ]
        for (let i = 0; i < sends.length; i++) {
          const socket = net.connect(server.port, '127.0.0.1')
          await new Promise((resolve) => socket.once('connect', resolve))
          socket.write(sends[i])
          await sleep(30)
          socket.destroy()
          const outcome = await server.outcome(i)
          assert.equal(outcome.calls, 1)
          assert.equal(outcome.err?.type, 'request.aborted')
          assert.deepEqual(fs.readdirSync(dir), [])
        }
      } finally {
        await server.close()
      }
    })

    it('multer CVE-2026-3520, Go CVE-2022-41725: 20,000 one-byte files then a malformed tail: a 4xx, no stack overflow, every file removed', async () => {
      const count = 20_000
      const files = Buffer.concat(Array.from({ length: count }, (_, i) => file('f' + i, 'a', 'x')))
      const tail = Buffer.from('--' + B + '\r\n Bad: header\r\n\r\n')
      const memory = await play(entry.multipart({ partLimit: count + 1, files: { fileLimit: count }, limit: '10mb' }), pieces(Buffer.concat([files, tail])))
      assert.equal(memory.err?.type, 'multipart.header.malformed')
      // On disk with a tenth as many (the same code path; 20,000 files on a shared CI disk take long).
      const dir = folder()
      const some = Buffer.concat(Array.from({ length: 2000 }, (_, i) => file('f' + i, 'a', 'x')))
      const disk = await play(entry.multipart({ partLimit: 2001, files: { storage: 'disk', directory: dir, fileLimit: 2000 }, limit: '10mb' }), pieces(Buffer.concat([some, tail])))
      assert.equal(disk.err?.type, 'multipart.header.malformed')
      assert.deepEqual(fs.readdirSync(dir), [])
    })

    it('multer CVE-2026-5079: a name nested 5,000 deep is refused (413 by its size, 400 by depth when names may be long)', async () => {
      // 5,000 levels: 10,000 would pass the 16 KiB part-header cap first (a 400 of its own).
      const deep = 'a' + '[x]'.repeat(5000)
      const bySize = await play(entry.multipart({ extended: true }), [field(deep, '1'), close])
      assert.equal(bySize.err?.type, 'multipart.field.name.too.large')
      const byDepth = await play(entry.multipart({ extended: true, fieldNameSizeLimit: '1mb' }), [field(deep, '1'), close])
      assert.equal(byDepth.err?.type, 'querystring.parse.rangeError')
    })

    it('multer CVE-2026-77078, CVE-2026-82333: items[4294967294] then items[] or items[x]: an object, no RangeError, no long walk', async () => {
      const mw = entry.multipart({ extended: true })
      const pushed = await play(mw, [field('items[4294967294]', 'a'), field('items[]', 'b'), close])
      assert.equal(pushed.err, undefined)
      assert.equal(Array.isArray((pushed.req.body as { items: unknown }).items), false)
      const keyed = await play(mw, [field('items[4294967294]', 'a'), field('items[x]', 'b'), close])
      assert.equal(keyed.err, undefined)
      assert.deepEqual(plain(keyed.req.body), { items: { 4294967294: 'a', x: 'b' } })
    })

    it('fastify-multipart #83, rack CVE-2026-26961: no boundary, an empty, a long or two boundaries: 400 before reading', async () => {
      for (const contentType of ['multipart/form-data', 'multipart/form-data; boundary=' + 'b'.repeat(71), 'multipart/form-data; boundary=a; boundary=b', 'multipart/form-data; boundary=""']) {
        const run = await play(entry.multipart(), [close], 'end', { 'content-type': contentType })
        assert.equal(run.err?.status, 400, contentType)
        assert.equal(run.err?.type, 'multipart.boundary.invalid', contentType)
      }
    })

    it('multer #1335: limits that are strings, NaN or booleans throw when the middleware is created', () => {
      for (const options of [{ files: { fileSizeLimit: NaN } }, { files: { fileSizeLimit: true } }, { partLimit: '5' }, { parameterLimit: NaN }, { files: { fileLimit: '3' } }]) {
        assert.throws(() => entry.multipart(options as never), TypeError, JSON.stringify(options))
      }
    })

    it('CVE-2020-8136, CVE-2021-23597, CVE-2020-7699, GHSA-v8w9-8mx6-g223, formidable #1066, multiparty CVE-2026-8161: prototype names pollute nothing and crash nothing', async () => {
      const protos = prototypeSnapshot()
      const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype']
      const flat = await play(entry.multipart({ files: true }), [...names.map((n) => field(n, 'v')), ...names.map((n) => file(n, 'f', 'x')), close])
      assert.equal(flat.err, undefined)
      assert.equal(Object.getPrototypeOf(flat.req.body) === Object.prototype || Object.getPrototypeOf(flat.req.body) === null, true)
      assert.equal(flat.req.files?.length, names.length)
      const nested = await play(entry.multipart({ extended: true }), [field('__proto__[x]', '1'), field('constructor[prototype][x]', '1'), field('a[__proto__][x]', '1'), field('__proto__.x', '1'), close])
      assert.equal(nested.err, undefined)
      assert.equal(({} as Record<string, unknown>).x, undefined)
      assert.equal(prototypeSnapshot(), protos)
    })

    it('rack CVE-2022-44571, CVE-2025-49007, CVE-2026-34827, multiparty CVE-2026-8159: an 8 KB Content-Disposition of quotes and escapes is read (linear: no regex on it)', async () => {
      const mw = entry.multipart({ files: true })
      const escapes = await play(mw, [part('Content-Disposition: form-data; name="a"; filename="' + '\\"'.repeat(4000) + '"', 'x'), close])
      assert.equal(escapes.calls, 1)
      const quotes = await play(mw, [part('Content-Disposition: form-data; name="a"; x="' + '"'.repeat(8000), 'x'), close])
      assert.equal(quotes.calls, 1)
    })

    it('multiparty CVE-2026-8162, PYSEC-2026-3041: a broken filename* crashes nothing; a valid one is preferred, as data only', async () => {
      const mw = entry.multipart({ files: true })
      const broken = await play(mw, [part('Content-Disposition: form-data; name="f"; filename="plain.txt"; filename*=UTF-8\'\'%E0%A4%A', 'x'), field('after', 'ok'), close])
      // busboy cannot read that filename* (and would skip the part): RFC 6266 §4.3, the plain filename is used
      // (docs/multipart.md, Charsets; test/multipart/filename-star.test.ts).
      assert.equal(broken.err, undefined)
      assert.deepEqual(broken.req.files?.map((file) => [file.originalName, file.size]), [['plain.txt', 1]])
      assert.deepEqual(plain(broken.req.body), { after: 'ok' })
      const both = await play(mw, [part('Content-Disposition: form-data; name="f"; filename="safe.txt"; filename*=UTF-8\'\'evil.exe', 'x'), close])
      assert.equal(both.req.files?.[0].originalName, 'evil.exe')
    })

    it('python-multipart CVE-2024-53981, CVE-2026-40347, rack CVE-2025-61770: 10 MB of CRLF before the first boundary and junk after the last are read through', async () => {
      const mw = entry.multipart({ limit: '25mb' })
      const run = await play(mw, pieces(Buffer.concat([Buffer.alloc(10 * 1024 * 1024, '\r\n'), Buffer.from('\r\n'), field('a', '1'), close, Buffer.alloc(10 * 1024 * 1024, 'j')])))
      assert.equal(run.err, undefined)
      assert.deepEqual(plain(run.req.body), { a: '1' })
    })

    it('werkzeug CVE-2023-46136: a file of CRLF and 50 MB of zeros in 64 KiB pieces is read through', async () => {
      const mw = entry.multipart({ limit: '60mb', files: { fileSizeLimit: '60mb' } })
      const run = await play(mw, pieces(Buffer.concat([file('f', 'zeros', Buffer.concat([Buffer.from('\r\n'), Buffer.alloc(50 * 1024 * 1024)])), close])))
      assert.equal(run.err, undefined)
      assert.equal(run.req.files?.[0]?.size, 50 * 1024 * 1024 + 2)
    })

    it('@fastify/multipart CVE-2023-25576, werkzeug CVE-2023-25577, rack CVE-2023-27530, Go CVE-2023-24536: 1001 parts, 1001 fields: 413', async () => {
      const empties = await play(entry.multipart(), [...Array.from({ length: 1001 }, () => part('X-Empty: 1')), close])
      assert.equal(empties.err?.type, 'multipart.parts.too.many')
      const fields = await play(entry.multipart({ partLimit: 2000 }), [...Array.from({ length: 1001 }, (_, i) => field('f' + i, '')), close])
      assert.equal(fields.err?.type, 'multipart.fields.too.many')
    })

    it('kemal #793, Go CVE-2022-41725: 100,000 tiny file parts are refused at the file count, and the stored ones removed', async () => {
      const dir = folder()
      const run = await play(entry.multipart({ limit: '10mb', files: { storage: 'disk', directory: dir } }), pieces(Buffer.concat([...Array.from({ length: 100_000 }, (_, i) => file('f' + i, 'a', '')), close])))
      assert.equal(run.err?.type, 'multipart.files.too.many')
      assert.deepEqual(fs.readdirSync(dir), [])
    })

    it('GHSA-3pm6-wjfr-3v47: many files each under fileSizeLimit meet the total limit', async () => {
      const run = await play(entry.multipart({ limit: '100kb', files: { fileSizeLimit: '1kb', fileLimit: 1000 } }), pieces(Buffer.concat([...Array.from({ length: 1000 }, (_, i) => file('f' + i, 'a', Buffer.alloc(1000, 1))), close])))
      assert.equal(run.err?.type, 'entity.too.large')
    })

    it('werkzeug CVE-2024-49767, starlette CVE-2024-47874, rack CVE-2025-61771: a field over fieldSizeLimit in small pieces is a 413, counted across pieces', async () => {
      const small = await play(entry.multipart({ fieldSizeLimit: 2048 }), pieces(Buffer.concat([field('a', 'x'.repeat(4096)), close]), 1024))
      assert.equal(small.err?.type, 'multipart.field.too.large')
      const large = await play(entry.multipart({ limit: '3mb' }), pieces(Buffer.concat([field('a', 'x'.repeat(2 * 1024 * 1024)), close])))
      assert.equal(large.err?.type, 'multipart.field.too.large')
    })

    it('@fastify/multipart CVE-2026-18549: an oversize file then an abort: the 413 is reported, folder empty', async () => {
      const dir = folder()
      // Over 64 KiB, so it streams (a smaller body is read whole first, and its abort is request.aborted).
      const run = await play(entry.multipart({ files: { storage: 'disk', directory: dir, fileSizeLimit: 1000 } }), pieces(file('f', 'a', Buffer.alloc(100_000)).subarray(0, 70_000)), 'abort')
      assert.equal(run.err?.type, 'multipart.file.too.large')
      assert.deepEqual(fs.readdirSync(dir), [])
    })

    it('formidable CVE-2025-46653, CVE-2022-29622, #1061; python-multipart CVE-2024-24486: client names are data; stored names are random and inside the folder', async () => {
      const dir = folder()
      const mw = entry.multipart({ files: { storage: 'disk', directory: dir, fileLimit: 10 } })
      const names = ['../../x', '..\\..\\x', '/abs/x', 'C:\\x', 'x.js<svg onload=1>', 'a.php.']
      const run = await play(mw, [...names.map((n, i) => file('f' + i, n, 'x')), close])
      assert.equal(run.err, undefined)
      const stored = run.req.files ?? []
      assert.deepEqual(stored.map((f) => f.originalName), ['x', 'x', 'x', 'x', 'x.js<svg onload=1>', 'a.php.'])
      for (const f of stored) {
        assert.match(f.fileName as string, /^[0-9a-f]{32}$/)
        assert.equal(path.dirname(f.path as string), dir)
      }
      // Two uploads share no prefix beyond chance (128 random bits each).
      assert.notEqual((stored[0].fileName as string).slice(0, 8), (stored[1].fileName as string).slice(0, 8))
      for (const f of stored) fs.unlinkSync(f.path as string)
    })

    it('koa-body #75: a JSON or urlencoded body claiming files never sets req.files', async () => {
      const run = await play(entry.json() as Middleware, [Buffer.from('{"files":[{"path":"/etc/passwd"}]}')], 'end', { 'content-type': 'application/json' })
      assert.equal(run.req.files, undefined)
      const form = await play(entry.multipart({ files: true }), [field('files', '/etc/passwd'), close])
      assert.deepEqual(form.req.files, [])
    })

    it('rack CVE-2026-26962, CVE-2022-44572: a folded Content-Disposition and control characters leave no CR or LF in names', async () => {
      const mw = entry.multipart()
      const folded = await play(mw, [Buffer.from('--' + B + '\r\nContent-Disposition: form-data;\r\n name="a"\r\n\r\nv\r\n'), close])
      if (folded.err === undefined) for (const key of Object.keys(folded.req.body as object)) assert.doesNotMatch(key, /[\r\n]/)
      else assert.equal(folded.err.status, 400)
      const control = await play(mw, [part('Content-Disposition: form-data; name="a\u0001b"', 'v'), close])
      assert.equal(control.calls, 1)
    })

    it('python-multipart CVE-2024-24762: a long crafted Content-Type option is read (linear)', async () => {
      const run = await play(entry.multipart(), [close], 'end', { 'content-type': TYPE + ';' + ' x='.repeat(3000) + ';' })
      assert.equal(run.calls, 1)
    })

    it('@fastify/multipart #594: a malformed body read after an await rejects the promise, nothing uncaught', async () => {
      const body = Buffer.from('--' + B + '\r\n Broken: header\r\n\r\n')
      const req = fakeRequest({ 'content-type': TYPE, 'content-length': String(body.length) })
      req.push(body)
      endRequest(req)
      await sleep(5)
      await assert.rejects(bodykit.readMultipart(req), { type: 'multipart.header.malformed' })
    })
  })
}
