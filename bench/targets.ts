// Benchmark targets: bodykit entries (dist, else src), body-parser 2.x / 1.x, and the "floor" reader.
import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import querystring from 'node:querystring'
import zlib from 'node:zlib'
import type { IncomingMessage, ServerResponse } from 'node:http'
import qs from 'qs'
import getRawBody from 'raw-body'

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void
export type ParserName = 'json' | 'raw' | 'text' | 'urlencoded'
export type Parsers = Record<ParserName, (options?: Record<string, unknown>) => Middleware>

export interface Target {
  id: string
  /** Target whose time is the denominator of this target's ratio. */
  baseline: string
  /** Compare `req.body` with the baseline's strictly (prototypes, types) or loosely (same JSON). */
  exact: boolean
  /** Where the code came from, for the report. */
  source: string
  parsers: Parsers
}

const load = createRequire(__filename)
const root = join(__dirname, '..')

/** Interop with `module.exports = fn` and with a transpiled `export default`. */
function asParsers (mod: unknown): Parsers {
  const m = mod as Partial<Parsers> & { default?: Parsers }
  return typeof m.json === 'function' ? (m as Parsers) : (m.default as Parsers)
}

/** Loads a bodykit entry from dist/ (what users run), else from src/ through tsx, else null. */
function loadEntry (entry: string): { parsers: Parsers, source: string } | null {
  const candidates = [join(root, 'dist', entry + '.js'), join(root, 'src', entry + '.ts')]
  for (const file of candidates) {
    if (!existsSync(file)) continue
    return { parsers: asParsers(load(file)), source: file.slice(root.length + 1) }
  }
  return null
}

const zstd = zlib as unknown as { zstdDecompressSync?: (body: Buffer) => Buffer }

/** The floor inflates in one synchronous call, with no bound at all. */
const floorInflaters: Record<string, (body: Buffer) => Buffer> = {
  gzip: (body) => zlib.gunzipSync(body),
  deflate: (body) => zlib.inflateSync(body),
  br: (body) => zlib.brotliDecompressSync(body),
  // zstd where Node has it (22.15 and later)
  ...(zstd.zstdDecompressSync ? { zstd: zstd.zstdDecompressSync } : {})
}

/** Reads the whole body with no checks at all: the cost every parser pays at least. */
function floorReader (parse: (body: Buffer) => unknown): Middleware {
  return (req, _res, next) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('error', next)
    req.on('end', () => {
      let body: Buffer = Buffer.concat(chunks)
      const inflate = floorInflaters[req.headers['content-encoding'] ?? '']
      if (inflate) body = inflate(body)
      ;(req as IncomingMessage & { body?: unknown }).body = parse(body)
      next()
    })
  }
}

/**
 * raw-body and the parse, nothing else (no type, charset or already-read checks, no inflation): the least a parser
 * built on raw-body, as body-parser and bodykit are, can cost. BENCH_RAW_BODY_FLOOR=1 adds it to the run.
 */
function rawBodyReader (parse: (body: Buffer) => unknown): Middleware {
  return (req, _res, next) => {
    getRawBody(req, { length: req.headers['content-length'], limit: Infinity, encoding: null }, (err: Error | null, body: Buffer) => {
      if (err) return next(err)
      try {
        ;(req as IncomingMessage & { body?: unknown }).body = parse(body)
      } catch (parseErr) {
        // A compressed body, which this floor does not inflate: the case is reported as one it cannot run.
        return next(parseErr)
      }
      next()
    })
  }
}

export const floor: Parsers = {
  json: () => floorReader((body) => JSON.parse(body.toString('utf8'))),
  raw: () => floorReader((body) => body),
  text: () => floorReader((body) => body.toString('utf8')),
  urlencoded: (options) => floorReader((body) => options?.extended
    ? qs.parse(body.toString('utf8'))
    : querystring.parse(body.toString('utf8')))
}

/** Every target available now, in table order; a missing bodykit entry is skipped with a notice. */
export function loadTargets (notice: (msg: string) => void = console.log): Target[] {
  const targets: Target[] = [
    { id: 'body-parser 2', baseline: 'body-parser 2', exact: true, source: 'body-parser@' + load('body-parser/package.json').version, parsers: asParsers(load('body-parser')) }
  ]
  const main = loadEntry('index')
  if (main) targets.push({ id: 'bodykit', baseline: 'body-parser 2', exact: true, ...main })
  else notice('bodykit default entry (dist/index.js, src/index.ts) not found: skipped')
  targets.push({ id: 'body-parser 1', baseline: 'body-parser 2', exact: false, source: 'body-parser@' + load('body-parser-1/package.json').version, parsers: asParsers(load('body-parser-1')) })
  const legacy = loadEntry('legacy')
  if (legacy) targets.push({ id: 'bodykit/legacy', baseline: 'body-parser 1', exact: true, ...legacy })
  else notice('bodykit legacy entry (dist/legacy.js, src/legacy.ts) not found: skipped')
  targets.push({ id: 'floor', baseline: 'body-parser 2', exact: false, source: 'bench/targets.ts', parsers: floor })
  if (process.env.BENCH_RAW_BODY_FLOOR) {
    const rawBodyFloor: Parsers = {
      json: () => rawBodyReader((body) => JSON.parse(body.toString('utf8'))),
      raw: () => rawBodyReader((body) => body),
      text: () => rawBodyReader((body) => body.toString('utf8')),
      urlencoded: (options) => rawBodyReader((body) => options?.extended ? qs.parse(body.toString('utf8')) : querystring.parse(body.toString('utf8')))
    }
    targets.push({ id: 'raw-body floor', baseline: 'body-parser 2', exact: false, source: 'bench/targets.ts', parsers: rawBodyFloor })
  }
  // BENCH_BEFORE=<folder with an earlier build's dist/>: that build's entries too, to pair a change's before and after in one sitting.
  const before = process.env.BENCH_BEFORE
  if (before) {
    targets.push({ id: 'bodykit (before)', baseline: 'body-parser 2', exact: true, source: join(before, 'dist/index.js'), parsers: asParsers(load(join(before, 'dist/index.js'))) })
    targets.push({ id: 'bodykit/legacy (before)', baseline: 'body-parser 1', exact: true, source: join(before, 'dist/legacy.js'), parsers: asParsers(load(join(before, 'dist/legacy.js'))) })
  }
  return targets
}

/** Loads one target by id (used by child processes). */
export function loadTarget (id: string): Target {
  const target = loadTargets(() => {}).find((t) => t.id === id)
  if (!target) throw new Error(`unknown or missing target ${id}`)
  return target
}
