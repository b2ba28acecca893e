// The server side of the multipart bench: one upload handler per target in this child process, so the client's
// work is not counted; prints its port, reports its peak RSS on GET /rss (and resets it on GET /rss/reset) and its
// user CPU time on GET /cpu.
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { createRequire } from 'node:module'
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { Readable } from 'node:stream'

// `root`: the checkout whose dist and node_modules are loaded (bench/multipart.ts runs this file, types stripped,
// from a temporary folder, under plain node).
const [target, directory, root] = process.argv.slice(2)
const load = createRequire(path.join(root, 'package.json'))
const dist = path.join(root, 'dist', 'index.js')
const multerEntry = path.join(root, 'dist', 'multer.js')
type Handler = (req: IncomingMessage, res: ServerResponse) => void

/** Answers with the number of fields and files, then removes what was stored (every target pays for it). */
function reply (res: ServerResponse, fields: number, stored: string[]): void {
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({ fields, files: stored.length }))
  for (const file of stored) fs.unlink(file, () => {})
}

function fail (res: ServerResponse, err: unknown): void {
  res.statusCode = (err as { status?: number }).status ?? 500
  res.end(JSON.stringify({ error: String((err as Error).message) }))
}

const GIB2 = 2 * 1024 * 1024 * 1024

function handlerFor (name: string): Handler {
  switch (name) {
    case 'floor-disk': return (req, res) => {
      // The floor: the request's bytes straight to a file, no parsing at all.
      const file = path.join(directory, 'floor-' + Math.random().toString(16).slice(2))
      req.pipe(fs.createWriteStream(file)).on('close', () => reply(res, 0, [file]))
    }
    case 'floor-disk-1mib': return (req, res) => {
      // The floor with the write buffer bodykit's disk storage uses: what that buffer gives on its own.
      const file = path.join(directory, 'floor-' + Math.random().toString(16).slice(2))
      req.pipe(fs.createWriteStream(file, { highWaterMark: 1024 * 1024 })).on('close', () => reply(res, 0, [file]))
    }
    case 'bodykit-disk': {
      const mw = load(dist).multipart({ limit: GIB2, files: { storage: 'disk', directory, fileSizeLimit: GIB2 } })
      // bodykit removes its disk files once the response has finished.
      return (req, res) => mw(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'bodykit-memory': {
      const mw = load(dist).multipart({ files: true })
      return (req, res) => mw(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'bodykit-fields': {
      const mw = load(dist).multipart()
      return (req, res) => mw(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'bodykit-urlencoded': {
      const mw = load(dist).urlencoded()
      return (req, res) => mw(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'multer-disk':
    case 'bodykit-multer-disk': {
      const upload = load(name === 'multer-disk' ? 'multer' : multerEntry)({ dest: directory }).any()
      return (req, res) => upload(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, ((req as unknown as { files: Array<{ path: string }> }).files).map((f) => f.path)))
    }
    case 'multer-fields':
    case 'bodykit-multer-fields': {
      const upload = load(name === 'multer-fields' ? 'multer' : multerEntry)().none()
      return (req, res) => upload(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'multer-memory':
    case 'bodykit-multer-memory': {
      const multer = load(name === 'multer-memory' ? 'multer' : multerEntry)
      const upload = multer({ storage: multer.memoryStorage() }).any()
      return (req, res) => upload(req, res, (err?: unknown) => err ? fail(res, err) : reply(res, Object.keys((req as { body?: object }).body ?? {}).length, []))
    }
    case 'formidable-disk': {
      const formidable = (load('formidable') as { formidable: (options: object) => { parse: (...args: unknown[]) => void } }).formidable
      return (req, res) => {
        const form = formidable({ uploadDir: directory, maxFileSize: GIB2, maxTotalFileSize: GIB2 })
        form.parse(req, (err: unknown, fields: object, files: Record<string, Array<{ filepath: string }>>) => {
          if (err) return fail(res, err)
          reply(res, Object.keys(fields).length, Object.values(files).flat().map((f) => f.filepath))
        })
      }
    }
    case 'fastify-busboy-disk': {
      const Busboy = load('@fastify/busboy')
      return (req, res) => {
        // @fastify/busboy alone, files written to disk: what @fastify/multipart runs under Fastify.
        const parser = new Busboy({ headers: req.headers, limits: { fileSize: GIB2 } })
        const stored: string[] = []
        const writes: Array<Promise<void>> = []
        let fields = 0
        parser.on('field', () => { fields++ })
        parser.on('file', (_name: string, stream: Readable) => {
          const file = path.join(directory, 'fb-' + Math.random().toString(16).slice(2))
          stored.push(file)
          writes.push(new Promise((resolve) => { stream.pipe(fs.createWriteStream(file)).on('close', () => resolve()) }))
        })
        parser.on('finish', () => { void Promise.all(writes).then(() => reply(res, fields, stored)) })
        parser.on('error', (err: Error) => fail(res, err))
        req.pipe(parser)
      }
    }
    default: throw new Error('unknown target ' + name)
  }
}

const handle = handlerFor(target)
let peak = process.memoryUsage().rss
setInterval(() => { peak = Math.max(peak, process.memoryUsage().rss) }, 10).unref()
const server = http.createServer((req, res) => {
  if (req.method === 'GET' && req.url === '/rss/reset') {
    peak = process.memoryUsage().rss
    res.end(JSON.stringify({ rss: peak }))
    return
  }
  if (req.method === 'GET' && req.url === '/cpu') {
    // This process's user CPU time so far (µs): the client takes the difference around one upload. System time
    // is left out: it is mostly the kernel copying the file into the page cache, the same for every target.
    res.end(JSON.stringify({ cpu: process.cpuUsage().user }))
    return
  }
  if (req.method === 'GET' && req.url === '/rss') {
    res.end(JSON.stringify({ rss: process.memoryUsage().rss, peak: Math.max(peak, process.memoryUsage().rss) }))
    return
  }
  handle(req, res)
})
server.listen(0, '127.0.0.1', () => { process.stdout.write(JSON.stringify({ port: (server.address() as { port: number }).port }) + '\n') })
process.on('disconnect', () => process.exit(0))
