// Issue 45's wait before the 413 (the stage judges the bytes up to the limit first, pending user decisions included)
// still ends every read with its files removed and its descriptors closed: multipart() and bodykit/multer on disk,
// the limit met mid-file in pieces, with an async fileFilter still deciding, and a form cut short after it.
import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import * as bodykit from '../../src'
import multer from '../../src/multer'
import { fdsBackTo, listFolder, makeFolder, openFds, type Middleware } from '../faults/harness'
import { runMiddleware, splitAt } from '../fuzz/targets/harness'

const BOUNDARY = 'X'
const headers = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'transfer-encoding': 'chunked' }
const filePart = (name: string, data: string): string =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"; filename="${name}.txt"\r\nContent-Type: text/plain\r\n\r\n${data}`
/** Two files, the second cut short (no delimiter after it, no closing delimiter). */
const body = Buffer.from(filePart('a', 'a'.repeat(3000)) + '\r\n' + filePart('b', 'b'.repeat(6000)))
const pieces = splitAt(body, Array.from({ length: Math.ceil(body.length / 700) }, (_, i) => (i + 1) * 700))

/**
 * Runs one request; returns its error, the files left in `folder`, and the descriptors it left open (at most 0: one
 * that an earlier test was still closing when the count began may close meanwhile).
 */
async function leftAfter (middleware: Middleware, folder: string, chunks = pieces): Promise<{ err: { status?: number, type?: string, code?: string } | undefined, files: string[], fds: number }> {
  const baseline = openFds()
  const { err } = await runMiddleware(middleware, { headers, chunks }, 'release')
  const fds = await fdsBackTo(baseline)
  return { err: err as { status?: number, type?: string, code?: string } | undefined, files: listFolder(folder), fds: Math.max(0, fds - baseline) }
}

describe('issue 45: files and descriptors after a limit whose 413 waited for the stage', () => {
  it('multipart() on disk, limit met inside the second file, in 700-byte pieces: 413, no file, no descriptor', async (t) => {
    const folder = makeFolder('bodykit-limits-')
    t.after(() => { fs.rmSync(folder, { recursive: true, force: true }) })
    const left = await leftAfter(bodykit.multipart({ limit: 5000, files: { storage: 'disk', directory: folder } }) as unknown as Middleware, folder)
    assert.deepEqual([left.err?.status, left.err?.type, left.files, left.fds], [413, 'entity.too.large', [], 0])
  })

  it('multipart() on disk, a file stored, then a malformed header block the limit cuts (judged by busboy at the cut): 400, no file, no descriptor', async (t) => {
    const folder = makeFolder('bodykit-limits-')
    t.after(() => { fs.rmSync(folder, { recursive: true, force: true }) })
    const cut = Buffer.from(filePart('a', 'a'.repeat(3000)) + `\r\n--${BOUNDARY}\r\nform-data; nam--X\r\n` + 'x'.repeat(2000))
    const chunks = splitAt(cut, Array.from({ length: Math.ceil(cut.length / 700) }, (_, i) => (i + 1) * 700))
    const left = await leftAfter(bodykit.multipart({ limit: 3200, files: { storage: 'disk', directory: folder } }) as unknown as Middleware, folder, chunks)
    assert.deepEqual([left.err?.status, left.err?.type, left.files, left.fds], [400, 'multipart.header.malformed', [], 0])
  })

  it('bodykit/multer on disk, an async fileFilter deciding while the second file passes fileSize and the form is cut short: LIMIT_FILE_SIZE, no file, no descriptor', async (t) => {
    const folder = makeFolder('bodykit-limits-')
    t.after(() => { fs.rmSync(folder, { recursive: true, force: true }) })
    const upload = multer({
      storage: multer.diskStorage({ destination: folder }),
      limits: { fileSize: 4000 },
      fileFilter: (_req, _file, callback) => { setTimeout(() => { callback(null, true) }, 20) }
    }).any() as unknown as Middleware
    const left = await leftAfter(upload, folder)
    assert.deepEqual([left.err?.code, left.files, left.fds], ['LIMIT_FILE_SIZE', [], 0])
  })

  it('bodykit/multer on disk, an async fileFilter that refuses while a later error waits: the refusal, no file, no descriptor', async (t) => {
    const folder = makeFolder('bodykit-limits-')
    t.after(() => { fs.rmSync(folder, { recursive: true, force: true }) })
    const refusal = new Error('refused by the filter')
    const upload = multer({
      storage: multer.diskStorage({ destination: folder }),
      fileFilter: (_req, file, callback) => { setTimeout(() => { if (file.fieldname === 'b') callback(refusal); else callback(null, true) }, 20) }
    }).any() as unknown as Middleware
    const left = await leftAfter(upload, folder)
    assert.deepEqual([left.err, left.files, left.fds], [refusal, [], 0])
  })
})
