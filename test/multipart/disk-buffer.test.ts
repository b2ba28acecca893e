// Disk storage against a slow disk, for multipart() (both entries) and bodykit/multer: the upload waits for the
// disk, with no more than the write buffer (and a few chunks) read ahead of it, and the file arrives whole.
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { describe, it, type TestContext } from 'node:test'
import bodykit from '../../src/index'
import legacy from '../../src/legacy'
import multer from '../../src/multer'
import { DISK_WRITE_BUFFER } from '../../src/multipart/sinks'
import { BOUNDARY, FORM_TYPE, listUploads, openFds, settleFds, uploadDir, type Middleware } from './helpers'

const KiB = 1024
const MiB = 1024 * KiB
/** What may be read ahead of the disk besides the write buffer: the chunk that fills it, the file stream's and
 * the request's buffers, and the socket's last read (each at most 64 KiB plus a 16 KiB high-water mark). */
const CHUNKS_IN_FLIGHT = 512 * KiB
const FILE_SIZE = 8 * MiB
/** Each write to the disk completes this long after it was made: the disk is much slower than the socket. */
const WRITE_DELAY_MS = 10

type Done = (err: NodeJS.ErrnoException | null, ...results: unknown[]) => void

/**
 * Makes fs.write and fs.writev (what a write stream calls) complete late, and counts the bytes whose write completed.
 * Restored after the test.
 */
function slowDisk (t: TestContext): { readonly written: number } {
  const disk = { written: 0 }
  const original = { write: fs.write, writev: fs.writev }
  const late = (done: Done): Done => (err, ...results) => {
    if (err === null && typeof results[0] === 'number') disk.written += results[0]
    setTimeout(() => { done(err, ...results) }, WRITE_DELAY_MS)
  }
  const patched = fs as unknown as Record<'write' | 'writev', (...args: unknown[]) => void>
  patched.write = (...args: unknown[]) => { (original.write as (...a: unknown[]) => void)(...args.slice(0, -1), late(args[args.length - 1] as Done)) }
  patched.writev = (...args: unknown[]) => { (original.writev as (...a: unknown[]) => void)(...args.slice(0, -1), late(args[args.length - 1] as Done)) }
  t.after(() => { Object.assign(fs, original) })
  return disk
}

/** The upload's file bytes: a pattern with no CR, so no delimiter can start inside it. */
function fileBytes (): Buffer {
  const bytes = Buffer.alloc(FILE_SIZE)
  for (let i = 0; i < bytes.length; i++) bytes[i] = 0x20 + (i * 7 + (i >> 11)) % 90
  return bytes
}

interface Upload {
  /** The most bytes read from the socket whose write to disk had not completed, seen at each piece read. */
  aheadOfDisk: number
  /** SHA-256 of the stored file, read when `next` was called. */
  storedHash: string
}

/** Uploads one file through `mw` on a slow disk and measures how far the socket was read ahead of the disk. */
async function uploadToSlowDisk (t: TestContext, mw: Middleware, storedPath: (req: IncomingMessage) => string): Promise<Upload> {
  const disk = slowDisk(t)
  let aheadOfDisk = 0
  const stored = new Promise<string>((resolve, reject) => {
    const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
      mw(req, res, (err) => {
        if (err !== undefined && err !== null) {
          reject(err as Error)
        } else {
          resolve(createHash('sha256').update(fs.readFileSync(storedPath(req))).digest('hex'))
        }
        res.end()
      })
      // Added after the middleware's own listener: it sees each piece as it is read and never resumes the request.
      req.on('data', () => { aheadOfDisk = Math.max(aheadOfDisk, req.socket.bytesRead - disk.written) })
    })
    t.after(() => { server.close() })
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)
      const body = Buffer.concat([FILE_HEAD, fileBytes(), tail])
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': FORM_TYPE, 'content-length': body.length, connection: 'close' } })
      req.on('error', reject)
      req.on('response', (res) => { res.resume() })
      req.end(body)
    })
  })
  const storedHash = await stored
  return { aheadOfDisk, storedHash }
}

/** The part header of the one file every upload here sends. */
const FILE_HEAD = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)

/**
 * Sends the head and 4 MiB of an 8 MiB file to `mw` on a slow disk, then destroys the socket while writes are in
 * flight and the write buffer is full. Resolves with the upload folder's listing when `next` was called.
 */
async function abortOnSlowDisk (t: TestContext, mw: Middleware, directory: string): Promise<string[]> {
  slowDisk(t)
  return await new Promise<string[]>((resolve) => {
    const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
      mw(req, res, () => {
        resolve(listUploads(directory))
        res.end()
      })
    })
    t.after(() => { server.close() })
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number }
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', headers: { 'content-type': FORM_TYPE, 'content-length': FILE_HEAD.length + FILE_SIZE + 64 } })
      req.on('error', () => {})
      req.write(Buffer.concat([FILE_HEAD, fileBytes().subarray(0, FILE_SIZE / 2)]), () => {
        // Some of it is still waiting for the disk (WRITE_DELAY_MS per write) when the client goes.
        setTimeout(() => { req.destroy() }, WRITE_DELAY_MS * 3)
      })
    })
  })
}

const expectedHash = createHash('sha256').update(fileBytes()).digest('hex')
const diskMiddlewares: Array<[string, (directory: string) => Middleware, (req: IncomingMessage) => string]> = [
  ['multipart(), default entry', (directory) => bodykit.multipart({ files: { storage: 'disk', directory, fileSizeLimit: 16 * MiB } }) as Middleware,
    (req) => (req as unknown as { files: Array<{ path: string }> }).files[0].path],
  ['multipart(), legacy entry', (directory) => legacy.multipart({ files: { storage: 'disk', directory, fileSizeLimit: 16 * MiB } }) as Middleware,
    (req) => (req as unknown as { files: Array<{ path: string }> }).files[0].path],
  ['bodykit/multer diskStorage', (directory) => multer({ dest: directory }).single('file') as unknown as Middleware,
    (req) => (req as unknown as { file: { path: string } }).file.path]
]

describe('disk storage on a slow disk', () => {
  for (const [name, create, storedPath] of diskMiddlewares) {
    it(`${name}: the socket is read at most the write buffer and a few chunks ahead of the disk; the file is whole`, async (t) => {
      const { aheadOfDisk, storedHash } = await uploadToSlowDisk(t, create(uploadDir(t)), storedPath)
      assert.equal(storedHash, expectedHash)
      assert.ok(aheadOfDisk <= DISK_WRITE_BUFFER + CHUNKS_IN_FLIGHT, `read ${aheadOfDisk} bytes ahead of the disk`)
      // The buffer is used: the socket goes on being read while earlier chunks wait for the disk.
      assert.ok(aheadOfDisk >= DISK_WRITE_BUFFER / 2, `read only ${aheadOfDisk} bytes ahead of the disk`)
    })

    it(`${name}: the client aborts while writes wait for the disk: the file is removed and every descriptor closed`, async (t) => {
      const directory = uploadDir(t)
      const baseline = openFds()
      assert.deepEqual(await abortOnSlowDisk(t, create(directory), directory), [])
      // At most the baseline: a descriptor open when it was taken (another read's, Node's own) may close since.
      const fds = await settleFds(baseline)
      assert.ok(fds <= baseline, `descriptors back to baseline (${fds} > ${baseline})`)
      assert.deepEqual(listUploads(directory), [])
    })
  }
})
