// The compressed-body generator (issue 14): compressible bodies, every encoding, damaged every way, whole or in pieces, limits around their size;
// and the model of issue 45's rule for a damaged body (the longest prefix that inflates without error).
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import fc from 'fast-check'
import bodykit from '../../src/index'
import { endRequest, fakeRequest, fakeResponse, shieldReferencePipes, tick, type Entry, type HttpErrorLike, type Middleware, type ParserName } from '../hostile/helpers'
import { shape } from './model'

type Compress = (data: Buffer) => Buffer
type EntryName = Entry['name']
const zstdCompressSync = (zlib as unknown as { zstdCompressSync?: Compress }).zstdCompressSync

/** Every Content-Encoding the entry inflates (zstd where Node has it: body-parser 2.4.0 inflates it there too). */
export function encodingsOf (entry: EntryName): Record<string, Compress> {
  const both: Record<string, Compress> = { gzip: (b) => zlib.gzipSync(b), deflate: (b) => zlib.deflateSync(b) }
  if (entry === 'legacy') return both
  return { ...both, br: (b) => zlib.brotliCompressSync(b), ...(zstdCompressSync ? { zstd: zstdCompressSync } : {}) }
}

/** Inflated sizes: empty, tiny, around zlib's 16 KiB output chunk and its multiples, and up to 240 KiB. */
const SIZES = [0, 1, 37, 200, 1000, 1024, 1034, 4000, 16383, 16384, 16385, 20000, 32768, 50000, 65537, 102400, 120000, 245760]
const KINDS = ['text', 'json', 'run'] as const
type Kind = typeof KINDS[number]

/** A compressible body of about `size` bytes: repeated text, a JSON array, or a run of one byte. */
function payloadOf (kind: Kind, size: number): Buffer {
  if (kind === 'run') return Buffer.alloc(size, 0x61)
  if (kind === 'text') return Buffer.from('The quick brown fox jumps over the lazy dog. '.repeat(Math.ceil(size / 45)).slice(0, size))
  if (size < 2) return Buffer.from('[]'.slice(0, size))
  const items: string[] = []
  let length = 2
  for (let i = 0; length < size; i++) {
    const item = JSON.stringify({ id: i, name: 'item ' + i, tags: ['a', 'b'], ok: i % 3 === 0 })
    items.push(item)
    length += item.length + 1
  }
  // Cut to the exact size: the tail may leave the JSON unfinished, one more kind of bad body.
  return Buffer.from('[' + items.join(',') + ']').subarray(0, size)
}

/** Compressed payloads, made once per entry (brotli at its default quality is slow). */
const pools = new Map<string, Map<string, { plain: Buffer, packed: Buffer }>>()
function pooled (entry: EntryName, encoding: string, kind: Kind, size: number): { plain: Buffer, packed: Buffer } {
  const key = `${entry}|${encoding}`
  let pool = pools.get(key)
  if (!pool) pools.set(key, pool = new Map())
  const item = `${kind}|${size}`
  let found = pool.get(item)
  if (!found) {
    const plain = payloadOf(kind, size)
    found = { plain, packed: encodingsOf(entry)[encoding](plain) }
    pool.set(item, found)
  }
  return found
}

/** How the compressed stream is damaged before it is sent. */
export type Damage =
  | { kind: 'none' }
  | { kind: 'cut', at: number } // cut at a fraction of its length
  | { kind: 'cutEnd', bytes: number } // the last 1–8 bytes missing
  | { kind: 'flip', at: number, bit: number } // one bit flipped anywhere
  | { kind: 'garbage', bytes: number[] } // trailing garbage
  | { kind: 'zeros', count: number } // trailing zero bytes
  | { kind: 'twice' } // the stream twice (a second gzip member)
  | { kind: 'thenValid' } // followed by another, valid, stream
  | { kind: 'nothing' } // no bytes at all, with the Content-Encoding

export const damage: fc.Arbitrary<Damage> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({ kind: 'none' as const }) },
  { weight: 3, arbitrary: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }).map((at) => ({ kind: 'cut' as const, at })) },
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 8 }).map((bytes) => ({ kind: 'cutEnd' as const, bytes })) },
  { weight: 3, arbitrary: fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), bit: fc.nat(7) }).map((f) => ({ kind: 'flip' as const, ...f })) },
  { weight: 1, arbitrary: fc.array(fc.nat(255), { minLength: 1, maxLength: 24 }).map((bytes) => ({ kind: 'garbage' as const, bytes })) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 32 }).map((count) => ({ kind: 'zeros' as const, count })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'twice' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'thenValid' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'nothing' as const }) }
)

function applyDamage (packed: Buffer, d: Damage, other: Buffer): Buffer {
  switch (d.kind) {
    case 'none': return packed
    case 'cut': return packed.subarray(0, Math.floor(d.at * packed.length))
    case 'cutEnd': return packed.subarray(0, Math.max(0, packed.length - d.bytes))
    case 'flip': {
      if (packed.length === 0) return packed
      const copy = Buffer.from(packed)
      copy[Math.floor(d.at * copy.length)] ^= 1 << d.bit
      return copy
    }
    case 'garbage': return Buffer.concat([packed, Buffer.from(d.bytes)])
    case 'zeros': return Buffer.concat([packed, Buffer.alloc(d.count)])
    case 'twice': return Buffer.concat([packed, packed])
    case 'thenValid': return Buffer.concat([packed, other])
    case 'nothing': return Buffer.alloc(0)
  }
}

/** Where `limit` falls: around the inflated size (below, equal, above, far above), a fraction of it, or a fixed value. */
export type LimitChoice = { around: number } | { fraction: number } | { fixed: number }
const limitChoice: fc.Arbitrary<LimitChoice> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(-1024, -17, -1, 0, 1, 17, 1024, 16384, 1e6).map((around) => ({ around })) },
  { weight: 2, arbitrary: fc.constantFrom(0.01, 0.1, 0.5, 0.9, 2, 10).map((fraction) => ({ fraction })) },
  { weight: 1, arbitrary: fc.constantFrom(0, 1, 1024, 16384, 102400, 262144, 262145).map((fixed) => ({ fixed })) }
)

export interface CompressedInput {
  parser: ParserName
  encodingIndex: number
  kind: Kind
  size: number
  damage: Damage
  limit: LimitChoice
  /** Split points (fractions of the wire body); empty: one piece. */
  pieces: readonly number[]
  rawBody: boolean
  /** Through the promise API (default entry) instead of the middleware. */
  reader: boolean
}

export const compressedInput: fc.Arbitrary<CompressedInput> = fc.record({
  parser: fc.constantFrom<ParserName>('json', 'json', 'raw', 'text', 'urlencoded'),
  encodingIndex: fc.nat(7),
  kind: fc.constantFrom(...KINDS),
  size: fc.constantFrom(...SIZES),
  damage,
  limit: limitChoice,
  pieces: fc.oneof(
    { weight: 1, arbitrary: fc.constant<readonly number[]>([]) },
    { weight: 1, arbitrary: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }) }
  ),
  rawBody: fc.boolean(),
  reader: fc.boolean()
})

export const CONTENT_TYPE: Record<ParserName, string> = {
  json: 'application/json', raw: 'application/octet-stream', text: 'text/plain', urlencoded: 'application/x-www-form-urlencoded'
}

/** One generated request, ready to send. */
export interface CompressedRequest {
  encoding: string
  limit: number
  headers: Record<string, string>
  wire: Buffer
  chunks: Buffer[]
  /** The body as a client meant it (before compression and damage). */
  inflatedSize: number
}

export function toRequest (entry: EntryName, input: CompressedInput): CompressedRequest {
  const names = Object.keys(encodingsOf(entry))
  const encoding = names[input.encodingIndex % names.length]
  const { plain, packed } = pooled(entry, encoding, input.kind, input.size)
  const other = pooled(entry, encoding, 'text', 37).packed
  const wire = applyDamage(packed, input.damage, other)
  const l = input.limit
  const limit = 'fixed' in l ? l.fixed : 'around' in l ? Math.max(0, plain.length + l.around) : Math.floor(plain.length * l.fraction)
  const cuts = [...new Set(input.pieces.map((p) => Math.floor(p * wire.length)))].filter((c) => c > 0 && c < wire.length).sort((a, b) => a - b)
  const chunks: Buffer[] = []
  let from = 0
  for (const cut of [...cuts, wire.length]) {
    if (cut > from) chunks.push(wire.subarray(from, cut))
    from = cut
  }
  const headers = { 'content-type': CONTENT_TYPE[input.parser], 'content-encoding': encoding, 'content-length': String(wire.length) }
  return { encoding, limit, headers, wire, chunks, inflatedSize: plain.length }
}

/** What one middleware (or reader) did with a request. */
export interface Outcome {
  calls: number
  err?: HttpErrorLike
  body?: unknown
  rawBody?: unknown
}

const middlewares = new Map<string, Middleware>()
function middlewareFor (entry: Entry, role: 'bodykit' | 'reference', parser: ParserName, limit: number, rawBody: boolean): Middleware {
  const key = `${entry.name}|${role}|${parser}|${limit}|${rawBody}`
  let mw = middlewares.get(key)
  if (!mw) {
    const options: Record<string, unknown> = { limit }
    if (parser === 'urlencoded') options.extended = true
    if (role === 'bodykit' && rawBody) options.rawBody = true
    middlewares.set(key, mw = entry[role][parser](options))
  }
  return mw
}

const readers = { json: bodykit.readJson, raw: bodykit.readRaw, text: bodykit.readText, urlencoded: bodykit.readUrlencoded }

/** Sends the request's chunks into a fake request read by bodykit (middleware or reader) or by body-parser. */
export async function play (entry: Entry, role: 'bodykit' | 'reference', input: CompressedInput, request: CompressedRequest): Promise<Outcome> {
  const req = fakeRequest(request.headers)
  if (role === 'reference') shieldReferencePipes(req)
  const outcome: Outcome = { calls: 0 }
  let done: () => void = () => {}
  const answered = new Promise<void>((resolve) => { done = resolve })
  const record = (err: unknown, body: unknown): void => {
    outcome.calls++
    if (outcome.calls > 1) return
    outcome.err = err as HttpErrorLike | undefined
    outcome.body = body
    outcome.rawBody = (req as { rawBody?: unknown }).rawBody
    done()
  }
  const options = { limit: request.limit, ...(input.parser === 'urlencoded' ? { extended: true } : {}), ...(input.rawBody ? { rawBody: true } : {}) }
  if (role === 'bodykit' && input.reader && entry.name === 'default') {
    readers[input.parser](req, options).then((body) => { record(undefined, body) }, (err: unknown) => { record(err, undefined) })
  } else {
    middlewareFor(entry, role, input.parser, request.limit, input.rawBody)(req, fakeResponse(req), (err) => { record(err, (req as { body?: unknown }).body) })
  }
  for (const chunk of request.chunks) req.push(chunk)
  endRequest(req)
  // zlib works on the thread pool; a request never answered is reported by the verdict (calls 0).
  let timer: NodeJS.Timeout | undefined
  await Promise.race([answered, new Promise<void>((resolve) => { timer = setTimeout(resolve, 5000) })])
  clearTimeout(timer)
  await tick()
  return outcome
}

/** zlib's output chunk: body-parser's stream, and bodykit's calls, stop at the end of the first one past `limit`. */
const CHUNK = 16 * 1024
const zstdDecompressSync = (zlib as unknown as { zstdDecompressSync?: (input: Buffer, options: object) => Buffer }).zstdDecompressSync

/** Each encoding's one-shot inflation and the `finishFlush` under which a prefix cut anywhere is no error. */
const PREFIX_INFLATION: Record<string, [(input: Buffer, options: object) => Buffer, number]> = {
  gzip: [zlib.gunzipSync, zlib.constants.Z_SYNC_FLUSH],
  deflate: [zlib.inflateSync, zlib.constants.Z_SYNC_FLUSH],
  // bodykit/koa's gzip and deflate, as co-body's inflation reads them: either format.
  unzip: [zlib.unzipSync, zlib.constants.Z_SYNC_FLUSH],
  br: [zlib.brotliDecompressSync, zlib.constants.BROTLI_OPERATION_FLUSH],
  ...(zstdDecompressSync ? { zstd: [zstdDecompressSync, (zlib.constants as unknown as { ZSTD_e_flush?: number }).ZSTD_e_flush ?? 1] } : {})
}

/** What issue 45's rule answers for a compressed body zlib fails on; `intact` when zlib does not (or the body passes `limit` first). */
export type PrefixVerdict =
  | { kind: 'intact' }
  | { kind: 'too costly' } // a damaged body whose every prefix would take too long to inflate
  | { kind: 'damaged', error: Error & { code?: string, errno?: number }, passes: boolean, received: number }

/** Inflated bytes the model may spend on one body (each prefix is inflated from its start). */
const MODEL_BUDGET = 96 * 1024 * 1024

function attempt (inflate: (input: Buffer, options: object) => Buffer, input: Buffer, options: object): Buffer | Error & { code?: string } {
  try {
    return inflate(input, options)
  } catch (err) {
    return err as Error
  }
}

/**
 * The model of issue 45's rule, independent of src/inflate.ts's bisection: zlib's one call on the whole body
 * (stopped at the end of the first 16 KiB output chunk past `limit`, as bodykit and body-parser stop) says whether
 * it is damaged; then every prefix length is tried in turn, with a flush that calls no cut an error, up to the
 * first that fails or passes that chunk. The body is 413 if the longest clean prefix inflates past `limit`
 * (`received`: its output, up to that chunk's end), else zlib's error for the whole.
 */
export function prefixVerdictOf (encoding: string, wire: Buffer, limit: number): PrefixVerdict {
  const [inflate] = PREFIX_INFLATION[encoding]
  const stop = (Math.floor(limit / CHUNK) + 1) * CHUNK
  const whole = attempt(inflate, wire, { maxOutputLength: stop })
  if (Buffer.isBuffer(whole) || whole.code === 'ERR_BUFFER_TOO_LARGE') return { kind: 'intact' }
  const clean = cleanOutputOf(encoding, wire, stop)
  if (clean === null) return { kind: 'too costly' }
  return { kind: 'damaged', error: whole, passes: clean > limit, received: Math.min(clean, stop) }
}

/**
 * How much the longest prefix of `wire` that inflates without error inflates to, counted up to `stop` (a
 * larger count means past it): every prefix length tried in turn, with a flush that calls no cut an error.
 * Null when that would take too long.
 */
function cleanOutputOf (encoding: string, wire: Buffer, stop: number): number | null {
  const [inflate, flush] = PREFIX_INFLATION[encoding]
  let clean = 0
  let spent = 0
  for (let length = 1; length <= wire.length && clean <= stop; length++) {
    const prefix = attempt(inflate, wire.subarray(0, length), { finishFlush: flush, maxOutputLength: stop + CHUNK })
    if (!Buffer.isBuffer(prefix)) {
      // Past `stop` + one chunk in one byte (br, zstd): no byte of gzip or deflate inflates to that much.
      if (prefix.code === 'ERR_BUFFER_TOO_LARGE') clean = stop + CHUNK + 1
      break
    }
    clean = prefix.length
    spent += clean
    if (spent > MODEL_BUDGET) return null
  }
  return clean
}

/**
 * For a body over `limit` on the wire: zlib's error when its first `limit` bytes hold a damage (not just their
 * end) and inflate to at most `limit` before it, the body's first error in byte order; else null (the wire's 413).
 */
export function damageBeforeWireLimit (encoding: string, wire: Buffer, limit: number): (Error & { code?: string, errno?: number }) | null {
  const [inflate, flush] = PREFIX_INFLATION[encoding]
  const head = wire.subarray(0, limit)
  const stop = (Math.floor(limit / CHUNK) + 1) * CHUNK
  const error = attempt(inflate, head, { finishFlush: flush, maxOutputLength: stop })
  if (Buffer.isBuffer(error) || error.code === 'ERR_BUFFER_TOO_LARGE') return null
  const clean = cleanOutputOf(encoding, head, stop)
  return clean !== null && clean <= limit ? error : null
}

/**
 * A damaged body against the model and against body-parser (issue 45, docs/differences.md). bodykit gives the
 * model's answer exactly. body-parser's stream hands raw-body the output of each zlib write (and each full 16 KiB
 * chunk) that did not fail, so where it differs, the difference is one of two, both from the bytes around the
 * damage: (a) bodykit 413, because the clean prefix inflates past `limit`, and body-parser zlib's error, because
 * that output came in the write or chunk that failed; (b) bodykit zlib's error and body-parser a 413 counted at
 * a 16 KiB chunk's end inside the damaged byte's output (the bits before the damage, which no clean byte prefix
 * holds).
 */
export function checkDamaged (verdict: Extract<PrefixVerdict, { kind: 'damaged' }>, request: CompressedRequest, mine: Outcome, reference: Outcome): void {
  const { limit } = request
  const err = mine.err
  assert.ok(err, `a damaged body was accepted: ${JSON.stringify(shape(mine.body))}`)
  const zlibError = { status: 400, message: verdict.error.message, code: verdict.error.code, errno: verdict.error.errno }
  if (verdict.passes) {
    assert.deepEqual({ status: err.status, type: err.type, limit: err.limit, received: err.received }, { status: 413, type: 'entity.too.large', limit, received: verdict.received })
  } else {
    assert.deepEqual({ status: err.status, message: err.message, code: err.code, errno: err.errno }, zlibError)
  }
  const theirs = reference.err
  assert.ok(theirs, 'body-parser accepted a damaged body')
  if (theirs.type === 'entity.too.large' && err.type === 'entity.too.large') {
    // The count differs by how each stopped: both past `limit` by at most one chunk.
    assert.ok(typeof theirs.received === 'number' && theirs.received > limit && theirs.received <= limit + CHUNK, `body-parser's received ${String(theirs.received)}`)
    return
  }
  if (theirs.type !== 'entity.too.large' && err.type !== 'entity.too.large') {
    assert.deepEqual(describe(err), describe(theirs))
    return
  }
  if (verdict.passes) {
    assert.deepEqual({ status: theirs.status, message: theirs.message, code: theirs.code, errno: theirs.errno }, zlibError, 'bodykit 413: body-parser must give zlib\'s error')
  } else {
    assert.ok(typeof theirs.received === 'number' && theirs.received % CHUNK === 0 && theirs.received > limit, `bodykit gives zlib's error; body-parser's 413 counts ${String(theirs.received)}, not a chunk's end inside the damaged byte`)
  }
}

const EXTRA = ['expected', 'length', 'limit', 'received', 'charset', 'encoding', 'code', 'errno']

/** Everything the verdict compares of an error: status, type, message and every extra property. */
function describe (err: HttpErrorLike): Record<string, unknown> {
  const out: Record<string, unknown> = { status: err.status, type: err.type, message: err.message, expose: err.expose }
  for (const key of EXTRA) if (key in err) out[key] = err[key]
  if ('body' in err) out.body = shape(err.body)
  return out
}

/**
 * The verdict: body-parser's answer exactly (status, type, message, extra properties, body), with three
 * documented allowances. A body whose compressed size alone is over `limit` is refused on the wire (413
 * counting the wire bytes). In pieces, `received` on a 413 after inflation is past `limit` by at most one
 * 16 KiB zlib chunk on both sides (docs/differences.md); a body in one piece must give body-parser's exact count.
 * A damaged body gets issue 45's answer (`prefixVerdictOf`, `checkDamaged`). The caller checks that the body in
 * pieces gets the answer it gets whole.
 */
export function checkVerdict (input: CompressedInput, request: CompressedRequest, mine: Outcome, reference: Outcome): void {
  assert.equal(mine.calls, 1, 'bodykit must answer exactly once')
  assert.equal(reference.calls, 1, 'body-parser did not answer once')
  const { limit, wire } = request
  if (wire.length > limit) {
    assert.ok(mine.err, 'a compressed body over limit on the wire was accepted')
    const damage = request.encoding in PREFIX_INFLATION ? damageBeforeWireLimit(request.encoding, wire, limit) : null
    if (damage !== null && mine.err.type !== 'entity.too.large') {
      // Issue 45: a damage within the first `limit` bytes comes first.
      assert.deepEqual({ status: mine.err.status, message: mine.err.message, code: mine.err.code }, { status: 400, message: damage.message, code: damage.code })
      return
    }
    assert.equal(mine.err.type, 'entity.too.large')
    const counted = mine.err.expected === wire.length || (typeof mine.err.received === 'number' && mine.err.received > limit && mine.err.received <= wire.length)
    assert.ok(counted, `413 does not count the wire: ${JSON.stringify(describe(mine.err))}`)
    return
  }
  // rawBody is the Buffer verify would get: kept exactly when the body was read in full (parse errors carry it).
  const readInFull = mine.err === undefined || 'body' in mine.err
  if (input.rawBody && readInFull) assert.ok(Buffer.isBuffer(mine.rawBody), 'rawBody missing after a full read')
  else assert.equal(mine.rawBody, undefined, input.rawBody ? 'rawBody set on a body not read in full' : 'rawBody set without the option')
  // Node's zstd stream starts a second frame only at a piece's start: the caller compares the body whole instead.
  if (request.encoding === 'zstd' && request.chunks.length > 1) return
  const verdict = prefixVerdictOf(request.encoding, wire, limit)
  if (verdict.kind === 'damaged') {
    checkDamaged(verdict, request, mine, reference)
    return
  }
  if (verdict.kind === 'too costly') return
  const theirs = reference.err ? describe(reference.err) : { body: shape(reference.body) }
  const ours = mine.err ? describe(mine.err) : { body: shape(mine.body) }
  if (request.chunks.length > 1 && mine.err?.type === 'entity.too.large' && reference.err?.type === 'entity.too.large') {
    for (const received of [mine.err.received, reference.err.received]) {
      assert.ok(typeof received === 'number' && received > limit && received <= limit + 16 * 1024, `received ${String(received)} is not within one chunk past limit ${limit}`)
    }
    assert.deepEqual({ ...ours, received: 'past limit' }, { ...theirs, received: 'past limit' })
    return
  }
  assert.deepEqual(ours, theirs)
}
