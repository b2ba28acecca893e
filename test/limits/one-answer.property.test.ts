// Issue 45 (see ISSUE-45.md), drawn: damaged bodies of limit-8 … limit+8 bytes (multipart forms, JSON, urlencoded and text, plain
// and gzip; files near bodykit/multer's fileSize) with drawn splits, each delivered every way (whole, in the drawn
// pieces, a byte at a time; Node stream, Web stream, Web bytes; with and without Content-Length; for bodykit/multer
// the whole-form path and the streaming one). Every delivery must give the same answer, except that a declared
// Content-Length over `limit` is refused before reading (413).
// ONE_ANSWER_RUNS (default 200) runs per property; ONE_ANSWER_EXPLORE=1 collects every class of difference
// (by kind and answer types) with its smallest body instead of stopping at the first, and prints them.
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import { after, describe, it } from 'node:test'
import fc from 'fast-check'
import type { Answer } from '../fuzz/targets/harness'
import { deliveriesOf, describeAnswer, multerAnswer, multerMiddleware, readerAnswer, type Delivery, type ReaderKind } from './deliveries'

const RUNS = Number(process.env.ONE_ANSWER_RUNS ?? 200)
const EXPLORE = process.env.ONE_ANSWER_EXPLORE === '1'

const BOUNDARIES = ['X', '----WebKitFormBoundary7MA4YWxkTrZu0gW', '------------------------d74496d66958873e']
const LIMITS = [100, 160, 256]

/** A part of a form before damage: a field or a file, its data drawn. */
const partArb = fc.record({
  file: fc.boolean(),
  name: fc.constantFrom('a', 'file', 'f', 'b[c]'),
  data: fc.stringMatching(/^[a-z0-9 \r\n-]{0,16}$/)
})

/**
 * How a body is damaged: bytes replaced at drawn positions (modulo its length) by drawn bytes (a byte that
 * is no token, a CR or LF, a dash, a quote, 0xEA), or its tail cut (a form without its closing delimiter).
 */
const damageArb = fc.record({
  replace: fc.array(fc.record({ at: fc.nat({ max: 65535 }), byte: fc.constantFrom(0xea, 0x0d, 0x0a, 0x2d, 0x22, 0x20, 0x3a, 0x00, 0x7b) }), { maxLength: 2 }),
  cutTail: fc.nat({ max: 12 })
})

/** Split points, taken modulo the body's length + 1 (splitAt). */
const splitsArb = fc.array(fc.nat({ max: 400 }), { maxLength: 4 })

/**
 * A form of about `size` bytes (0: as small as its parts): its parts (the last ones left out while they do not fit),
 * then a padding field whose value makes up the rest, then the closing delimiter.
 */
function formOf (boundary: string, parts: Array<{ file: boolean, name: string, data: string }>, size: number): Buffer {
  const partText = (part: { file: boolean, name: string, data: string }): string =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${part.name}"${part.file ? `; filename="${part.name}.txt"\r\nContent-Type: text/plain` : ''}\r\n\r\n${part.data}\r\n`
  const texts = parts.map(partText)
  while (size > 0 && texts.length > 0 && texts.join('').length + boundary.length + 8 > size) texts.pop()
  const head = texts.join('')
  const tail = `--${boundary}--\r\n`
  const padHead = `--${boundary}\r\nContent-Disposition: form-data; name="pad"\r\n\r\n`
  const room = size - head.length - tail.length - padHead.length - 2
  const padding = room >= 0 ? padHead + 'p'.repeat(room) + '\r\n' : ''
  return Buffer.from(head + padding + tail, 'latin1')
}

function damage (body: Buffer, how: { replace: Array<{ at: number, byte: number }>, cutTail: number }): Buffer {
  const damaged = Buffer.from(body.subarray(0, Math.max(0, body.length - how.cutTail)))
  for (const { at, byte } of how.replace) if (damaged.length > 0) damaged[at % damaged.length] = byte
  return damaged
}

/** One class of difference: which kind, and which answers (by type) met; the smallest body kept. */
interface Finding { key: string, size: number, text: string }
const found = new Map<string, Finding>()

/** A class's key: what was read, and the answers' types with the deliveries that gave each. */
function classify (kind: string, answers: Array<[Delivery, Answer]>): string {
  const byAnswer = new Map<string, string[]>()
  for (const [delivery, answer] of answers) {
    const type = answer.error ? `${String(answer.error.status)} ${String(answer.error.type)}` : 'value'
    const where = `${delivery.source}/${delivery.pieces}/${delivery.length ? 'CL' : 'chunked'}`
    byAnswer.set(type, [...(byAnswer.get(type) ?? []), where])
  }
  // Whether a Node stream and a Web stream differ for the same pieces and framing (the issue's second example).
  const bySource = new Map<string, string>()
  let sources = ''
  for (const [delivery, answer] of answers) {
    if (delivery.source === 'web-bytes') continue
    const same = `${delivery.pieces}/${String(delivery.length)}`
    const text = JSON.stringify(answer)
    const other = bySource.get(same)
    if (other === undefined) bySource.set(same, text)
    else if (other !== text) sources = ' (Node stream and Web stream differ)'
  }
  return kind + ': ' + [...byAnswer.keys()].sort().join(' vs ') + sources
}

/** Checks that every delivery answered alike; in EXPLORE mode records the class and passes. */
function checkOneAnswer (kind: string, body: Buffer, describe: string, answers: Array<[Delivery, Answer]>, limit: number): boolean {
  // A declared length over the limit is refused before reading: the header comes first in byte order.
  const compared = answers.filter(([delivery]) => !(delivery.length && body.length > limit))
  for (const [delivery, answer] of answers) {
    if (delivery.length && body.length > limit) assert.equal(answer.error?.status, 413, `${delivery.name}: a declared length over the limit: ${describeAnswer(answer)}`)
  }
  const distinct = new Set(compared.map(([, answer]) => JSON.stringify(answer)))
  if (distinct.size <= 1) return true
  const lines = compared.map(([delivery, answer]) => `  ${delivery.name}: ${describeAnswer(answer)}`)
  const text = `${describe}\n  body (${body.length} bytes, JSON): ${JSON.stringify(body.toString('latin1'))}\n${lines.join('\n')}`
  if (!EXPLORE) assert.fail('one body, several answers:\n' + text)
  const key = classify(kind, compared)
  const known = found.get(key)
  if (known === undefined || body.length < known.size) found.set(key, { key, size: body.length, text })
  return true
}

if (EXPLORE) {
  after(() => {
    console.log(`\n${found.size} delivery-dependent classes:`)
    for (const finding of [...found.values()].sort((a, b) => a.key.localeCompare(b.key))) console.log(`\n### ${finding.key}\n${finding.text}`)
  })
}

async function readerProperty (kind: ReaderKind, options: object, contentType: string, body: Buffer, splits: number[], limit: number, encoding: string): Promise<boolean> {
  const headers: Record<string, string> = { 'content-type': contentType }
  if (encoding !== 'identity') headers['content-encoding'] = encoding
  const answers: Array<[Delivery, Answer]> = []
  for (const delivery of deliveriesOf(body, splits)) answers.push([delivery, await readerAnswer(kind, options, headers, delivery)])
  const label = `${kind}${encoding === 'identity' ? '' : '+' + encoding}`
  return checkOneAnswer(label, body, `${label}, limit ${limit}, ${JSON.stringify(options)}, ${contentType}, splits ${JSON.stringify(splits)}`, answers, limit)
}

describe('issue 45: one answer for every delivery of a damaged body near its limit', () => {
  it('readMultipart: forms of limit-8 … limit+8 bytes, damaged', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...BOUNDARIES), fc.constantFrom(...LIMITS), fc.integer({ min: -8, max: 8 }), fc.array(partArb, { maxLength: 3 }), damageArb, splitsArb,
      fc.constantFrom<number | undefined>(undefined, 4, 16),
      async (boundary, limit, offset, parts, how, splits, fileSizeLimit) => {
        const body = damage(formOf(boundary, parts, limit + offset + how.cutTail), how)
        const options = { limit, files: { storage: 'memory', fileSizeLimit } }
        return await readerProperty('multipart', options, `multipart/form-data; boundary=${boundary}`, body, splits, limit, 'identity')
      }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('readMultipart: gzip forms inflating to limit-8 … limit+8 bytes, damaged before or after compression', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...BOUNDARIES), fc.constantFrom(...LIMITS), fc.integer({ min: -8, max: 8 }), fc.array(partArb, { maxLength: 3 }), damageArb, fc.boolean(), splitsArb,
      async (boundary, limit, offset, parts, how, afterCompression, splits) => {
        const form = formOf(boundary, parts, limit + offset + how.cutTail)
        const body = afterCompression ? damage(zlib.gzipSync(form), how) : zlib.gzipSync(damage(form, how))
        return await readerProperty('multipart', { limit, files: { storage: 'memory' } }, `multipart/form-data; boundary=${boundary}`, body, splits, limit, 'gzip')
      }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('readJson, readUrlencoded, readText: bodies of limit-8 … limit+8 bytes, damaged, plain and gzip', async () => {
    const kinds: Array<[ReaderKind, string, (size: number) => string]> = [
      ['json', 'application/json', (size) => '{"a":"' + 'j'.repeat(Math.max(0, size - 8)) + '"}'],
      ['urlencoded', 'application/x-www-form-urlencoded', (size) => 'a=' + 'u'.repeat(Math.max(0, size - 2))],
      ['text', 'text/plain; charset=utf-8', (size) => 't'.repeat(size)]
    ]
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...kinds), fc.constantFrom(...LIMITS), fc.integer({ min: -8, max: 8 }), damageArb, fc.constantFrom('identity', 'gzip'), fc.boolean(), splitsArb,
      async ([kind, contentType, make], limit, offset, how, encoding, afterCompression, splits) => {
        const payload = Buffer.from(make(limit + offset + how.cutTail), 'latin1')
        const body = encoding === 'identity'
          ? damage(payload, how)
          : afterCompression ? damage(zlib.gzipSync(payload), how) : zlib.gzipSync(damage(payload, how))
        return await readerProperty(kind, { limit }, contentType, body, splits, limit, encoding)
      }), { numRuns: RUNS, includeErrorInReport: true })
  })

  it('bodykit/multer: a file of fileSize-8 … fileSize+8 bytes, damaged, whole-form path against streaming', async () => {
    await fc.assert(fc.asyncProperty(
      fc.constantFrom(...BOUNDARIES), fc.constantFrom(4, 16, 40), fc.integer({ min: -8, max: 8 }), fc.array(partArb, { maxLength: 2 }), damageArb, splitsArb, fc.boolean(),
      async (boundary, fileSize, offset, before, how, splits, asyncFilter) => {
        const file = { file: true, name: 'file', data: 'd'.repeat(Math.max(0, fileSize + offset)) }
        // Only the first file counts under `files: 1`; the drawn parts before it are fields.
        const parts = [...before.map((part) => ({ ...part, file: false })), file]
        const full = formOf(boundary, parts, 0)
        const body = damage(full, how)
        const headers = { 'content-type': `multipart/form-data; boundary=${boundary}` }
        const answers: Array<[Delivery, Answer]> = []
        for (const delivery of deliveriesOf(body, splits, ['node'])) {
          answers.push([delivery, await multerAnswer(multerMiddleware({ fileSize, files: 1 }, asyncFilter), headers, delivery)])
        }
        return checkOneAnswer(`multer (${asyncFilter ? 'async' : 'sync'} filter)`, body, `bodykit/multer, fileSize ${fileSize}, ${asyncFilter ? 'async' : 'sync'} fileFilter, boundary ${boundary}, splits ${JSON.stringify(splits)}`, answers, Infinity)
      }), { numRuns: RUNS, includeErrorInReport: true })
  })
})
