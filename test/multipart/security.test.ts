// The multipart security history (docs: work/shared/research/multipart-security-history.md) replayed over real sockets against multipart(), both entries: each case gets its 4xx or documented result, next once, the process still answering, no upload left and descriptors back to baseline.
import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import {
  BOUNDARY, CLOSE, field, file, form, interruptMidBody, listUploads, openFds, part, pieces, settleFds,
  sleep, startMultipartServer, uploadDir, type Answer, type Middleware, type MultipartServer
} from './helpers'

type Entry = typeof bodykit | typeof legacy
type MultipartOptions = Parameters<typeof bodykit.multipart>[0]

const MiB = 1024 * 1024

interface Harness {
  server: MultipartServer
  /** The upload folder (empty, this test's own), or null when files stay in memory or are off. */
  dir: string | null
  /** Descriptors after a warm-up request. */
  baseline: number
}

/**
 * A server running `entry.multipart(options)`; with `disk`, files go to a fresh folder. A warm-up request is
 * answered before the descriptor baseline is taken (the first request opens what stays open: lazy modules, pools).
 */
async function setUp (t: TestContext, entry: Entry, options: MultipartOptions = {}, disk = false): Promise<Harness> {
  const dir = disk ? uploadDir(t) : null
  const given = options ?? {}
  const fileOptions = disk ? { ...(typeof given.files === 'object' ? given.files : {}), storage: 'disk' as const, directory: dir as string } : given.files
  const mw = entry.multipart({ ...given, files: fileOptions }) as Middleware
  const server = await startMultipartServer(t, mw, dir === null ? {} : { directory: dir })
  await server.ping()
  return { server, dir, baseline: openFds() }
}

/** After the test's requests: the process answers the next request, no upload is left, descriptors are back. */
async function assertClean ({ server, dir, baseline }: Harness): Promise<void> {
  await server.ping()
  if (dir !== null) {
    // Files of a successful request live until its response finished; a refused request's are gone before next(err).
    const until = Date.now() + 3000
    while (listUploads(dir).length > 0 && Date.now() < until) await sleep(5)
    assert.deepEqual(listUploads(dir), [], 'no upload left')
  }
  const fds = await settleFds(baseline)
  assert.ok(fds <= baseline, `descriptors back to baseline (${fds} > ${baseline})`)
}

/** The answer is a refusal of this status and type, with next called once and (on disk) no file left when it was called. */
async function assertRefused (h: Harness, answer: Answer | null, status: number, type: string, index = h.server.count - 1): Promise<void> {
  const outcome = await h.server.outcome(index)
  assert.equal(outcome.calls, 1, 'next called once')
  assert.equal(outcome.json.type, type, JSON.stringify(outcome.json))
  assert.equal(outcome.status, status)
  if (outcome.uploadsAtNext !== null) assert.deepEqual(outcome.uploadsAtNext, [], 'stored files removed before next(err)')
  if (answer !== null) {
    assert.equal(answer.status, status)
    assert.equal(answer.json?.type, type)
  }
}

/** Answered 200: the JSON reply. */
function assertAccepted (answer: Answer): NonNullable<Answer['json']> {
  assert.equal(answer.status, 200, answer.text.slice(0, 300))
  return answer.json as NonNullable<Answer['json']>
}

/** Whether this test's upload folder holds a file yet: the cut then comes while a file is being written. */
function hasUpload (h: Harness): () => boolean {
  return () => listUploads(h.dir as string).length > 0
}

const head = (headers: string): Buffer => Buffer.from('--' + BOUNDARY + '\r\n' + headers + '\r\n\r\n', 'latin1')

for (const [name, entry] of [['default', bodykit], ['legacy', legacy]] as const) {
  describe(`multipart security history (${name} entry)`, () => {
    it('dicer CVE-2022-24434: a header block starting with a space is 400 multipart.header.malformed', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const answer = await h.server.send(Buffer.concat([head(' Content-Disposition: form-data; name="f"; filename="a"'), Buffer.from('data\r\n'), CLOSE]))
      await assertRefused(h, answer, 400, 'multipart.header.malformed')
      await assertClean(h)
    })

    it('@fastify/busboy #72: a 16 KiB header line of spaces with no colon is 400 multipart.header.malformed', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const answer = await h.server.send(Buffer.concat([head(' '.repeat(16 * 1024)), Buffer.from('x\r\n'), CLOSE]))
      await assertRefused(h, answer, 400, 'multipart.header.malformed')
      await assertClean(h)
    })

    it('multer #1176, CVE-2025-47944, multer #1411: a part that never closes gives exactly one next(err), 300 times', async (t) => {
      // 300 rounds per entry rather than 1000: each round is a fresh connection, and the double error either shows on the first or never.
      const h = await setUp(t, entry, { files: true }, true)
      const body = Buffer.concat([head('Content-Disposition: form-data; name="f"; filename="a"'), Buffer.from('--' + BOUNDARY + '--')])
      for (let i = 0; i < 300; i++) {
        const answer = await h.server.send(body)
        await assertRefused(h, answer, 400, 'multipart.unexpected.end')
      }
      await sleep(20)
      for (const outcome of h.server.outcomes) assert.equal(outcome.calls, 1)
      await assertClean(h)
    })

    it('multer CVE-2025-47935: the server destroys the request mid-file, 50 times: next once each, folder empty, descriptors flat', async (t) => {
      // 50 rounds: a leaked parser or descriptor shows as one per round, so 50 prove it as well as 500.
      const h = await setUp(t, entry, { files: true }, true)
      const partial = file('f', 'a.bin', Buffer.alloc(100_000, 1)).subarray(0, 40_000)
      for (let i = 0; i < 50; i++) {
        await interruptMidBody(h.server, partial, 200_000, 'server', hasUpload(h))
        // The pipeline reports a destroyed request as an aborted one, whoever destroyed it.
        await assertRefused(h, null, 400, 'request.aborted')
      }
      await assertClean(h)
    })

    it('multer CVE-2025-48997: a file part with name="" or no name is 400 multipart.field.name.missing', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      for (const disposition of ['form-data; name=""; filename="a.txt"', 'form-data; filename="a.txt"']) {
        const answer = await h.server.send(form(file('first', 'ok.txt', 'stored first'), part('Content-Disposition: ' + disposition, 'x')))
        await assertRefused(h, answer, 400, 'multipart.field.name.missing')
      }
      await assertClean(h)
    })

    it('multer CVE-2025-7338: filename="" then a closing delimiter one character short is a 400', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const body = Buffer.concat([head('Content-Disposition: form-data; name="f"; filename=""'), Buffer.from('\r\n--' + BOUNDARY + '-')])
      const answer = await h.server.send(body)
      await assertRefused(h, answer, 400, 'multipart.unexpected.end')
      await assertClean(h)
    })

    it('multer CVE-2026-2359: raw socket, Content-Length 999999, 16 file bytes, destroy: settles as request.aborted, folder empty', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const partial = Buffer.concat([head('Content-Disposition: form-data; name="f"; filename="a.bin"'), Buffer.from('sixteen bytes!!!')])
      await interruptMidBody(h.server, partial, 999_999, 'client', hasUpload(h))
      await assertRefused(h, null, 400, 'request.aborted')
      await assertClean(h)
    })

    it('multer CVE-2026-3520: 20,000 one-byte files on disk then a malformed tail: a 4xx, no stack overflow, every file removed', async (t) => {
      // Needs more than ~1,100 descriptors: disk storage opens one per file part with no cap on how many are open at
      // once, so under `ulimit -n 1024` this request gets 500 multipart.storage.failed (EMFILE) instead of its 400.
      const count = 20_000
      const h = await setUp(t, entry, { limit: '10mb', partLimit: count + 1, files: { fileLimit: count } }, true)
      const files = Buffer.concat(Array.from({ length: count }, (_, i) => file('f' + i, 'a', 'x')))
      const answer = await h.server.send(pieces(Buffer.concat([files, head(' Bad: header')])))
      await assertRefused(h, answer, 400, 'multipart.header.malformed')
      await assertClean(h)
    })

    it('multer CVE-2026-5079: a name `a` + [x] nested thousands deep is refused (depth, name size, header cap)', async (t) => {
      const h = await setUp(t, entry, { extended: true, fieldNameSizeLimit: '1mb' })
      // 5,000 levels (15 KB) fit in busboy's 16 KiB part-header cap, so the depth check is what refuses them.
      const byDepth = await h.server.send(form(field('a' + '[x]'.repeat(5000), '1')))
      await assertRefused(h, byDepth, 400, 'querystring.parse.rangeError')
      // 10,000 levels (30 KB) cannot be sent in a part header at all: the header cap refuses them first.
      const byHeader = await h.server.send(form(field('a' + '[x]'.repeat(10_000), '1')))
      await assertRefused(h, byHeader, 400, 'multipart.header.malformed')
      await assertClean(h)
      // Under the default fieldNameSizeLimit (256 bytes) the name's size refuses it before any parsing.
      const d = await setUp(t, entry, { extended: true })
      const bySize = await d.server.send(form(field('a' + '[x]'.repeat(5000), '1')))
      await assertRefused(d, bySize, 413, 'multipart.field.name.too.large')
      await assertClean(d)
    })

    it('multer CVE-2026-77078, CVE-2026-82333: items[4294967294]=a then items[]=b or items[x]=b (extended): answered, no crash', async (t) => {
      const h = await setUp(t, entry, { extended: true })
      const pushed = assertAccepted(await h.server.send(form(field('items[4294967294]', 'a'), field('items[]', 'b'))))
      assert.equal(Array.isArray((pushed.body as { items: unknown }).items), false, 'no 4-billion-slot array')
      const keyed = assertAccepted(await h.server.send(form(field('items[4294967294]', 'a'), field('items[x]', 'b'))))
      assert.deepEqual(keyed.body, { items: { 4294967294: 'a', x: 'b' } })
      await assertClean(h)
    })

    it('multer CVE-2026-5038, @fastify/multipart CVE-2025-24033: the client aborts mid-file 100 times on disk: folder empty each time', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const partial = Buffer.concat([file('done', 'a.txt', 'complete'), file('f', 'b.bin', Buffer.alloc(100_000, 2)).subarray(0, 30_000)])
      for (let i = 0; i < 100; i++) {
        await interruptMidBody(h.server, partial, 200_000, 'client', hasUpload(h))
        await assertRefused(h, null, 400, 'request.aborted')
      }
      await assertClean(h)
    })

    it('a streamed upload cut inside a part header, between parts, or after a file passed its size limit: folder empty, descriptors flat', async (t) => {
      // Declared larger than 64 KiB, so each is read as it streams (by the streamed fast path, the boundary being plain).
      const stored = file('done', 'a.txt', 'complete')
      const cuts: Array<{ sent: Buffer, options: MultipartOptions, status: number, type: string }> = [
        { sent: Buffer.concat([stored, Buffer.from('--' + BOUNDARY + '\r\nContent-Disposition: form-da')]), options: { files: true }, status: 400, type: 'request.aborted' },
        { sent: Buffer.concat([stored, Buffer.from('--' + BOUNDARY)]), options: { files: true }, status: 400, type: 'request.aborted' },
        // The limit's 413 comes first and is the one reported; the cut comes after it.
        { sent: Buffer.concat([stored, file('f', 'big.bin', Buffer.alloc(5000, 4)).subarray(0, 3000)]), options: { files: { fileSizeLimit: 1000 } }, status: 413, type: 'multipart.file.too.large' }
      ]
      for (const cut of cuts) {
        const h = await setUp(t, entry, cut.options, true)
        // 10 rounds: a leaked descriptor or file shows once per round.
        for (let i = 0; i < 10; i++) {
          // Cut while the stored file exists; after the limit it is already removed (the 413 went first).
          await interruptMidBody(h.server, cut.sent, 200_000, 'client', cut.status === 413 ? () => true : hasUpload(h))
          await assertRefused(h, null, cut.status, cut.type)
        }
        await assertClean(h)
      }
    })

    it('multer CVE-2026-77037: 200 aborted disk uploads leave descriptors flat', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const partial = file('f', 'big.bin', Buffer.alloc(300_000, 3)).subarray(0, 150_000)
      for (let i = 0; i < 200; i++) {
        await interruptMidBody(h.server, partial, 300_000, 'client', hasUpload(h))
        await assertRefused(h, null, 400, 'request.aborted')
      }
      await assertClean(h)
    })

    it('multer #1335: string, NaN and boolean limits throw a TypeError when the middleware is created', () => {
      const bad = [
        { files: { fileSizeLimit: NaN } }, { files: { fileSizeLimit: true } }, { files: { fileLimit: true } },
        { files: { fileLimit: '3' } }, { files: { fileLimit: NaN } }, { partLimit: '5' }, { partLimit: NaN },
        { partLimit: true }, { parameterLimit: '10' }, { fieldSizeLimit: NaN }, { fieldSizeLimit: true },
        { fieldNameSizeLimit: false }, { depth: '3' }, { limit: NaN }, { files: { storage: 'cloud' } }
      ]
      for (const options of bad) assert.throws(() => entry.multipart(options as never), TypeError, JSON.stringify(options))
    })

    it('fastify-multipart #83, rack CVE-2026-26961: no boundary, empty, over 70 characters or two boundary params: 400 multipart.boundary.invalid', async (t) => {
      const h = await setUp(t, entry)
      const types = [
        'multipart/form-data', 'multipart/form-data; boundary=', 'multipart/form-data; boundary=""',
        'multipart/form-data; boundary=' + 'b'.repeat(71), 'multipart/form-data; boundary=a; boundary=b',
        'multipart/form-data; boundary=' + BOUNDARY + '; boundary=' + BOUNDARY
      ]
      for (const contentType of types) {
        const answer = await h.server.send(form(field('a', '1')), { contentType })
        if (name === 'legacy' && contentType.endsWith('boundary=')) {
          // compat(v1): body-parser 1.x's type-is cannot parse `boundary=` (an empty token), so the type does not
          // match and the body is left unread, as for any parser of that release: nothing parsed, nothing stored.
          assert.deepEqual(assertAccepted(answer), { body: {} }, contentType)
          continue
        }
        await assertRefused(h, answer, 400, 'multipart.boundary.invalid')
      }
      // 70 characters is the most RFC 2046 allows, and is read.
      const longest = 'b'.repeat(70)
      const ok = await h.server.send(Buffer.from('--' + longest + '\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--' + longest + '--\r\n'), { contentType: 'multipart/form-data; boundary=' + longest })
      assert.deepEqual(assertAccepted(ok).body, { a: '1' })
      await assertClean(h)
    })

    it('CVE-2020-8136, CVE-2021-23597, formidable #1066, multiparty CVE-2026-8161: prototype names as fields and files: no crash, Object.prototype untouched', async (t) => {
      const h = await setUp(t, entry, { files: { fileLimit: 10 } }, true)
      const before = Object.getOwnPropertyNames(Object.prototype).join()
      const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'prototype']
      const answer = await h.server.send(form(...names.map((n) => field(n, 'v')), ...names.map((n) => file(n, 'f.txt', 'x'))))
      const json = assertAccepted(answer)
      assert.deepEqual(json.files?.map((f) => f.fieldName), names)
      assert.equal(Object.getOwnPropertyNames(Object.prototype).join(), before)
      assert.equal(({} as Record<string, unknown>).v, undefined)
      assert.equal(typeof ({}).toString, 'function')
      await assertClean(h)
    })

    it('CVE-2020-7699, GHSA-v8w9-8mx6-g223: __proto__.x, constructor[prototype][x], a[__proto__][x] (extended) pollute nothing', async (t) => {
      const h = await setUp(t, entry, { extended: true })
      const names = ['__proto__.x', 'constructor[prototype][x]', 'a[__proto__][x]', '__proto__[x]', 'constructor.prototype.x']
      for (const n of names) {
        const answer = await h.server.send(form(field(n, 'polluted')))
        assert.ok(answer.status === 200 || (answer.status >= 400 && answer.status < 500), n + ': ' + answer.text)
      }
      const all = await h.server.send(form(...names.map((n) => field(n, 'polluted'))))
      assert.ok(all.status === 200 || (all.status >= 400 && all.status < 500), all.text)
      assert.equal(({} as Record<string, unknown>).x, undefined)
      assert.equal((Object.prototype as Record<string, unknown>).x, undefined)
      await assertClean(h)
    })

    it('rack CVE-2022-44571, CVE-2026-34827, multiparty CVE-2026-8159: an 8 KB Content-Disposition of quotes and escapes is answered', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const escapes = await h.server.send(form(part('Content-Disposition: form-data; name="f"; filename="' + '\\"'.repeat(4000) + '"', 'x')))
      assert.equal(assertAccepted(escapes).files?.[0]?.originalName === '"'.repeat(4000), true, 'each quoted-pair read as its character')
      const backslashes = await h.server.send(form(part('Content-Disposition: form-data; name="f"; filename="' + '\\a'.repeat(4000) + '"', 'x')))
      // busboy keeps backslashes in a file name (Windows paths) and then takes its base name: only the last `a` is left.
      assert.equal(assertAccepted(backslashes).files?.[0]?.originalName, 'a')
      // An unterminated quoted value: busboy cannot read the Content-Disposition and skips the part (docs/multipart.md).
      const quotes = await h.server.send(form(part('Content-Disposition: form-data; name="a"; x="' + '"'.repeat(8000), 'x'), field('b', '1')))
      assert.deepEqual(assertAccepted(quotes), { body: { b: '1' }, files: [] })
      await assertClean(h)
    })

    it('multiparty CVE-2026-8162, PYSEC-2026-3041: a broken filename* crashes nothing; the plain filename is kept (RFC 6266 §4.3)', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const broken = await h.server.send(form(part('Content-Disposition: form-data; name="f"; filename*=UTF-8\'\'%E0%A4%A', 'x'), field('after', 'ok')))
      await assertRefused(h, broken, 400, 'multipart.header.malformed')
      const both = await h.server.send(form(part('Content-Disposition: form-data; name="f"; filename="plain.txt"; filename*=UTF-8\'\'%E0%A4%A', 'x'), field('after', 'ok')))
      const json = assertAccepted(both)
      assert.deepEqual(json.body, { after: 'ok' })
      // busboy 1.6 skips such a part whole; bodykit falls back to the plain filename (docs/multipart.md, Charsets).
      assert.deepEqual(json.files?.map((file) => [file.fieldName, file.originalName, file.size]), [['f', 'plain.txt', 1]])
      // A valid filename* wins over filename (busboy's rule), and is still only a name (data).
      const valid = assertAccepted(await h.server.send(form(part('Content-Disposition: form-data; name="f"; filename="safe.txt"; filename*=UTF-8\'\'evil.exe', 'x'))))
      assert.equal(valid.files?.[0]?.originalName, 'evil.exe')
      await assertClean(h)
    })

    it('multiparty CVE-2026-87908, python-multipart CVE-2026-42561: a 10 MB header block with no blank line is 400 multipart.header.malformed', async (t) => {
      const h = await setUp(t, entry, { limit: '20mb', files: true }, true)
      const answer = await h.server.send(pieces(Buffer.concat([Buffer.from('--' + BOUNDARY + '\r\nX-Big: '), Buffer.alloc(10 * MiB, 'a')])))
      await assertRefused(h, answer, 400, 'multipart.header.malformed')
      await assertClean(h)
    })

    it('@fastify/multipart CVE-2023-25576, werkzeug CVE-2023-25577: 1001 empty parts under defaults are 413 multipart.parts.too.many', async (t) => {
      const h = await setUp(t, entry)
      const answer = await h.server.send(form(...Array.from({ length: 1001 }, () => part('X-Empty: 1'))))
      await assertRefused(h, answer, 413, 'multipart.parts.too.many')
      await assertClean(h)
    })

    it('starlette, Go CVE-2023-24536: 1001 fields under defaults are 413 multipart.fields.too.many', async (t) => {
      const h = await setUp(t, entry)
      const answer = await h.server.send(form(...Array.from({ length: 1001 }, (_, i) => field('f' + i, 'v'))))
      await assertRefused(h, answer, 413, 'multipart.fields.too.many')
      await assertClean(h)
    })

    it('kemal #793: 11 files under defaults are 413 multipart.files.too.many, the ten stored ones removed', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const answer = await h.server.send(form(...Array.from({ length: 11 }, (_, i) => file('f' + i, 'a.txt', 'x'.repeat(1000)))))
      await assertRefused(h, answer, 413, 'multipart.files.too.many')
      assert.equal(answer.json?.field, 'f10')
      await assertClean(h)
    })

    it('CVE-2026-77063: a file of fileSizeLimit+1 bytes is 413 multipart.file.too.large; exactly fileSizeLimit is accepted', async (t) => {
      const h = await setUp(t, entry, { files: { fileSizeLimit: 1000 } }, true)
      const over = await h.server.send(form(file('f', 'a.bin', Buffer.alloc(1001, 7))))
      await assertRefused(h, over, 413, 'multipart.file.too.large')
      assert.equal(over.json?.field, 'f')
      const exact = assertAccepted(await h.server.send(form(file('f', 'a.bin', Buffer.alloc(1000, 7)))))
      assert.equal(exact.files?.[0]?.size, 1000)
      await assertClean(h)
    })

    it('werkzeug CVE-2024-49767, starlette CVE-2024-47874: a field of fieldSizeLimit+1 bytes is 413 multipart.field.too.large; exactly is accepted', async (t) => {
      const h = await setUp(t, entry, { fieldSizeLimit: 2048 })
      const over = await h.server.send(pieces(form(field('a', 'x'.repeat(2049))), 512))
      await assertRefused(h, over, 413, 'multipart.field.too.large')
      assert.equal(over.json?.field, 'a')
      const exact = assertAccepted(await h.server.send(pieces(form(field('a', 'x'.repeat(2048))), 512)))
      assert.equal((exact.body as { a: string }).a.length, 2048)
      await assertClean(h)
    })

    it('python-multipart CVE-2026-24486, formidable #1061: traversal file names: originalName a basename, stored inside the folder under a random name', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const names = ['../../x', '..\\..\\x', '/abs/x', 'C:\\x', '..', 'a/../../../etc/passwd']
      const json = assertAccepted(await h.server.send(form(...names.map((n, i) => file('f' + i, n, 'data' + i)))))
      const files = json.files ?? []
      assert.equal(files.length, names.length)
      for (const f of files) {
        assert.doesNotMatch(f.originalName, /[/\\]/, 'a basename: ' + f.originalName)
        assert.match(f.fileName as string, /^[0-9a-f]{32}$/)
        assert.equal(path.dirname(f.path as string), h.dir)
        assert.ok(path.resolve(f.path as string).startsWith((h.dir as string) + path.sep))
      }
      assert.deepEqual(files.slice(0, 4).map((f) => f.originalName), ['x', 'x', 'x', 'x'])
      await assertClean(h)
    })

    it('formidable CVE-2025-46653: two uploads get unrelated random names, never derived from the client name', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const first = assertAccepted(await h.server.send(form(file('f', 'same.txt', 'one'))))
      const second = assertAccepted(await h.server.send(form(file('f', 'same.txt', 'two'))))
      const [a, b] = [first.files?.[0]?.fileName as string, second.files?.[0]?.fileName as string]
      assert.match(a, /^[0-9a-f]{32}$/)
      assert.match(b, /^[0-9a-f]{32}$/)
      // Consecutive names from a counter or a time-seeded generator share a long prefix; 128 random bits share none.
      let shared = 0
      while (shared < a.length && a[shared] === b[shared]) shared++
      assert.ok(shared < 8, `names share a ${shared}-character prefix: ${a} ${b}`)
      assert.ok(!a.includes('same') && !b.includes('same'))
      await assertClean(h)
    })

    it('koa-body #75: a JSON or urlencoded body with `files` keys never sets req.files', async (t) => {
      for (const [parser, contentType, body] of [
        [entry.json(), 'application/json', '{"files":[{"path":"/etc/passwd","fieldName":"f"}],"file":{"path":"/etc/passwd"}}'],
        [entry.urlencoded({ extended: true }), 'application/x-www-form-urlencoded', 'files[0][path]=/etc/passwd&file[path]=/etc/passwd']
      ] as const) {
        // multipart() with files on runs after it: a body another parser read is not multipart's to describe.
        const multipart = entry.multipart({ files: true }) as Middleware
        const chain: Middleware = (req, res, next) => (parser as Middleware)(req, res, (err) => err ? next(err) : multipart(req, res, next))
        const server = await startMultipartServer(t, chain)
        const answer = await server.send(Buffer.from(body), { contentType })
        const json = assertAccepted(answer)
        assert.equal('files' in json, false, 'req.files is not set')
        assert.notEqual(json.body, undefined)
      }
      // And multipart's own fields named files do not reach req.files either.
      const h = await setUp(t, entry, { files: true })
      const json = assertAccepted(await h.server.send(form(field('files', '/etc/passwd'), field('files[0][path]', '/etc/passwd'))))
      assert.deepEqual(json.files, [])
      await assertClean(h)
    })

    it('python-multipart CVE-2024-53981, CVE-2026-40347: 10 MB of CRLF before the first boundary and 10 MB of junk after the last are read through', async (t) => {
      const h = await setUp(t, entry, { limit: '25mb' })
      const body = Buffer.concat([Buffer.alloc(10 * MiB, '\r\n'), Buffer.from('\r\n'), form(field('a', '1')), Buffer.alloc(10 * MiB, 'j')])
      assert.deepEqual(assertAccepted(await h.server.send(pieces(body))).body, { a: '1' })
      await assertClean(h)
    })

    it('werkzeug CVE-2023-46136: a file of CRLF then 50 MB of zeros, in 64 KiB writes, completes', async (t) => {
      const h = await setUp(t, entry, { limit: '60mb', files: { fileSizeLimit: '60mb' } }, true)
      const body = form(file('f', 'zeros.bin', Buffer.concat([Buffer.from('\r\n'), Buffer.alloc(50 * MiB)])))
      const json = assertAccepted(await h.server.send(pieces(body)))
      assert.equal(json.files?.[0]?.size, 50 * MiB + 2)
      await assertClean(h)
    })

    it('GHSA-3pm6-wjfr-3v47: 1000 files each just under fileSizeLimit hit the total limit: 413 entity.too.large', async (t) => {
      const h = await setUp(t, entry, { limit: '200kb', partLimit: 2000, files: { fileSizeLimit: 1000, fileLimit: 1000 } }, true)
      const answer = await h.server.send(pieces(form(...Array.from({ length: 1000 }, (_, i) => file('f' + i, 'a.bin', Buffer.alloc(999, 1))))))
      await assertRefused(h, answer, 413, 'entity.too.large')
      await assertClean(h)
    })

    it('multer #1176, @fastify/multipart CVE-2026-19474: a whole file with no closing delimiter, then the client aborts: request.aborted, folder empty', async (t) => {
      const h = await setUp(t, entry, { files: true }, true)
      const sent = Buffer.concat([file('a', 'one.txt', 'complete file'), head('Content-Disposition: form-data; name="b"; filename="two.txt"'), Buffer.from('all of it, but no delimiter')])
      await interruptMidBody(h.server, sent, sent.length + 1000, 'client', hasUpload(h))
      await assertRefused(h, null, 400, 'request.aborted')
      await assertClean(h)
    })

    it('a file part when files are off is 400 multipart.file.unexpected naming the field', async (t) => {
      const h = await setUp(t, entry)
      const answer = await h.server.send(form(field('a', '1'), file('avatar', 'me.png', 'png')))
      await assertRefused(h, answer, 400, 'multipart.file.unexpected')
      assert.equal(answer.json?.field, 'avatar')
      await assertClean(h)
    })

    it('a file in a field not in fieldNames is 400 multipart.file.unexpected naming the field, the allowed file removed', async (t) => {
      const h = await setUp(t, entry, { files: { fieldNames: ['avatar'] } }, true)
      const answer = await h.server.send(form(file('avatar', 'me.png', 'png'), file('other', 'x.sh', '#!/bin/sh')))
      await assertRefused(h, answer, 400, 'multipart.file.unexpected')
      assert.equal(answer.json?.field, 'other')
      const ok = assertAccepted(await h.server.send(form(file('avatar', 'me.png', 'png'))))
      assert.equal(ok.files?.[0]?.fieldName, 'avatar')
      await assertClean(h)
    })
  })
}
