// The server side of the chunking bench: one target's middleware in a fresh process, reporting the CPU time each request took to next().
import http, { type IncomingMessage, type ServerResponse } from 'node:http'
import { createRequire } from 'node:module'
import path from 'node:path'

type Next = (err?: unknown) => void
type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void

/** Which middleware this process runs; `floor` only counts the body's 'data' events (Node's own cost). */
export type ServerKind = 'bodykit-multipart' | 'bodykit-multer' | 'multer' | 'bodykit' | 'body-parser' | 'floor'
export type Format = 'multipart' | 'json' | 'urlencoded' | 'text'

/** One request's figures, sent to the parent when it asks. */
export interface Sample {
  /** CPU time (user + system, whole process) from the request's arrival to next(), in microseconds. */
  cpuMicros: number
  /** 'data' events the body gave (counted by the floor only: a listener of the bench's own would change how the others read). */
  dataEvents: number
}

const LIMIT = '10mb'
// Raised so that no case is refused: the bench measures reading, not refusing.
const MANY = 100_000

type BodyRequest = IncomingMessage & { body?: unknown, files?: Array<{ buffer?: Buffer }> }

/** The middleware of `kind` for `format`, loaded from `distRoot`'s dist/ (bodykit) or `modulesRoot`'s node_modules (the others). */
function createMiddleware (kind: ServerKind, format: Format, distRoot: string, modulesRoot: string): Middleware {
  const load = createRequire(path.join(modulesRoot, 'package.json'))
  const dist = (entry: string): string => path.join(distRoot, 'dist', entry)
  const options = format === 'urlencoded' ? { limit: LIMIT, extended: false, parameterLimit: MANY } : { limit: LIMIT }
  switch (kind) {
    case 'bodykit-multipart': return load(dist('index.js')).multipart({ files: true, limit: LIMIT, parameterLimit: MANY, partLimit: MANY })
    // multer counts no parts or fields unless told to (its limits default to Infinity), and bodykit/multer keeps that.
    case 'bodykit-multer': return load(dist('multer.js'))().any()
    case 'multer': return load('multer')().any()
    case 'bodykit': return load(dist('index.js'))[format](options)
    case 'body-parser': return load('body-parser')[format](options)
    case 'floor': return (req, _res, next) => {
      req.on('data', (chunk: Buffer) => {
        dataEvents++
        floorBytes += chunk.length
      })
      req.on('end', () => next())
      req.on('error', next)
    }
  }
}

/** What the middleware read, in a few numbers the parent checks against what it sent (a 200 that read nothing is no result). */
function summarize (req: BodyRequest, kind: ServerKind, format: Format): string {
  if (kind === 'floor') return `${floorBytes} B read`
  const body = req.body
  if (format === 'multipart') {
    const values = Object.values((body ?? {}) as Record<string, unknown>)
    const files = req.files ?? []
    const bytes = values.reduce((sum: number, value) => sum + String(value).length, 0) + files.reduce((sum, file) => sum + (file.buffer?.length ?? 0), 0)
    return `${values.length} fields, ${files.length} files, ${bytes} B`
  }
  if (typeof body === 'string') return `${body.length} chars`
  return `${Object.keys((body ?? {}) as object).length} keys`
}

let dataEvents = 0
let floorBytes = 0

function serve (kind: ServerKind, format: Format, distRoot: string, modulesRoot: string): void {
  const mw = createMiddleware(kind, format, distRoot, modulesRoot)
  const gc = (globalThis as { gc?: () => void }).gc
  const samples: Sample[] = []
  const server = http.createServer((req: BodyRequest, res) => {
    dataEvents = floorBytes = 0
    // The request event comes as soon as the head is parsed, before the body's first chunk is handed on.
    const cpu0 = process.cpuUsage()
    mw(req, res, (err?: unknown) => {
      const cpu = process.cpuUsage(cpu0)
      samples.push({ cpuMicros: cpu.user + cpu.system, dataEvents })
      const status = err ? (err as { status?: number }).status ?? 500 : 200
      res.statusCode = status
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify(err ? { error: String((err as Error).message) } : { read: summarize(req, kind, format) }))
      // Collected between requests, so that no request pays for the garbage of the one before.
      res.once('finish', () => setImmediate(() => gc?.()))
    })
  })
  server.listen(0, '127.0.0.1', () => process.send?.({ port: (server.address() as { port: number }).port }))
  process.on('message', () => {
    process.send?.({ samples: samples.splice(0) })
  })
  process.on('disconnect', () => process.exit(0))
}

// Run as bench/chunking.ts starts it; the parent imports only this file's types.
if (require.main === module) {
  const [kind, format, distRoot, modulesRoot] = process.argv.slice(2)
  serve(kind as ServerKind, format as Format, distRoot, modulesRoot)
}
