// Chunking section: server CPU per request when a body comes over real HTTP in tiny chunks (1 byte each: one 'data' event per byte), bodykit against multer and body-parser.
import { fork, type ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import zlib from 'node:zlib'
import type { Format, Sample, ServerKind } from './chunking-server'
import { median, textTable, type Context, type Row, type SectionResult } from './report'

const KiB = 1024
const BOUNDARY = 'chunkingBoundary7MA4YWxkTrZu0gW'
const root = path.join(__dirname, '..')
const load = createRequire(__filename)
/** Long enough for the slowest target's 1-byte case; a request past it is reported, not waited for. */
const REQUEST_TIMEOUT_MS = 120_000

interface Target {
  id: string
  /** The library it replaces, whose CPU time is the denominator of its ratio. */
  baseline: string
  kind: ServerKind
  /** The checkout whose dist/ a bodykit target loads. */
  distRoot: string
}

interface Case {
  name: string
  format: Format
  body: Buffer
  /** Body bytes per chunk on the wire (the last one may be shorter). */
  chunk: number
  contentType: string
  encoding?: string
  /** The server's summary of what it read, when the body was read right. */
  expected: string
}

const multerId = 'multer ' + (load('multer/package.json') as { version: string }).version
const bodyParserId = 'body-parser ' + (load('body-parser/package.json') as { version: string }).version
const floorId = 'floor (Node only)'
const BEFORE = ' (before)'

/** The targets of one format, baseline first; with BENCH_BEFORE, each bodykit target also as the earlier build's. */
function targetsFor (format: Format): Target[] {
  const own: Target[] = format === 'multipart'
    ? [
        { id: multerId, baseline: multerId, kind: 'multer', distRoot: root },
        { id: 'bodykit multipart()', baseline: multerId, kind: 'bodykit-multipart', distRoot: root },
        { id: 'bodykit/multer', baseline: multerId, kind: 'bodykit-multer', distRoot: root }
      ]
    : [
        { id: bodyParserId, baseline: bodyParserId, kind: 'body-parser', distRoot: root },
        { id: 'bodykit', baseline: bodyParserId, kind: 'bodykit', distRoot: root }
      ]
  const before = process.env.BENCH_BEFORE
  const earlier = before ? own.filter((t) => t.kind.startsWith('bodykit')).map((t) => ({ ...t, id: t.id + BEFORE, distRoot: before })) : []
  // The floor's baseline is whichever library the case's format replaces; its label says so.
  return [...own, ...earlier, { id: floorId, baseline: `${multerId} / ${bodyParserId}`, kind: 'floor', distRoot: root }]
}

interface Part { name: string, filename?: string, headers?: string[], value: Buffer }

/** A multipart body of `parts`, and the summary the server gives when it read every part (ASCII values: a byte is a character). */
function form (parts: Part[]): { body: Buffer, expected: string } {
  const pieces: Buffer[] = []
  for (const part of parts) {
    const lines = [`Content-Disposition: form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`]
    if (part.filename !== undefined) lines.push('Content-Type: application/octet-stream')
    lines.push(...(part.headers ?? []))
    pieces.push(Buffer.from(`--${BOUNDARY}\r\n${lines.join('\r\n')}\r\n\r\n`), part.value, Buffer.from('\r\n'))
  }
  pieces.push(Buffer.from(`--${BOUNDARY}--\r\n`))
  const files = parts.filter((p) => p.filename !== undefined).length
  const bytes = parts.reduce((sum, p) => sum + p.value.length, 0)
  return { body: Buffer.concat(pieces), expected: `${parts.length - files} fields, ${files} files, ${bytes} B` }
}

/** Deterministic bytes that look like a binary file (a 32-bit xorshift), so no two runs differ. */
function binary (size: number): Buffer {
  const out = Buffer.allocUnsafe(size)
  let x = 0x9e3779b9
  for (let i = 0; i < size; i++) {
    x ^= x << 13; x ^= x >>> 17; x ^= x << 5
    out[i] = x & 0xff
  }
  return out
}

/** Key/value pairs rendered by `render` until the next one would pass `size` bytes. */
function fill (size: number, render: (i: number) => string, separator: string, open = '', close = ''): { text: string, count: number } {
  let text = open
  let count = 0
  for (;;) {
    const next = (count ? separator : '') + render(count)
    if (text.length + next.length + close.length > size) break
    text += next
    count++
  }
  return { text: text + close, count }
}

function buildCases (): Case[] {
  const multipartType = 'multipart/form-data; boundary=' + BOUNDARY
  const small = Buffer.from('the file content, 33 bytes long.\n')
  const multipart = (name: string, parts: Part[], chunks: number[]): Case[] => {
    const { body, expected } = form(parts)
    return chunks.map((chunk) => ({ name, format: 'multipart', body, chunk, contentType: multipartType, expected }))
  }
  const json = fill(64 * KiB, (i) => `"item${i}":{"id":${i},"name":"item number ${i}","score":${(i * 7919) % 1000 / 10},"tags":["t${i % 7}","u${i % 13}"]}`, ',', '{', '}')
  const urlencoded = fill(64 * KiB, (i) => `key${i}=value+number+${i}`, '&')
  const text = 'The quick brown fox jumps over the lazy dog, again and again. '.repeat(1100).slice(0, 64 * KiB)
  const jsonBody = Buffer.from(json.text)
  const gzipped = zlib.gzipSync(jsonBody)
  const plain = (name: string, format: Format, body: Buffer, contentType: string, expected: string, encoding?: string): Case[] =>
    [1, 64 * KiB].map((chunk) => ({ name, format, body, chunk, contentType, expected, encoding }))
  return [
    ...multipart('multipart: 8 KiB filename', [{ name: 'file', filename: 'f'.repeat(8 * KiB), value: small }], [1]),
    ...multipart('multipart: 200 header lines', [{ name: 'file', filename: 'upload.bin', headers: Array.from({ length: 200 }, (_, i) => `X-Extra-${String(i).padStart(3, '0')}: ${'v'.repeat(24)}`), value: small }], [1]),
    ...multipart('multipart: 16,000-byte filename', [{ name: 'file', filename: 'f'.repeat(16_000), value: small }], [1]),
    ...multipart('multipart: 500 small fields', Array.from({ length: 500 }, (_, i) => ({ name: `field${i}`, value: Buffer.from(`value of field ${i}`) })), [1]),
    ...multipart('multipart: 64 KiB field', [{ name: 'long', value: Buffer.from('abcdefghijklmnopqrstuvwxyz012345'.repeat(2 * KiB)) }], [1]),
    ...multipart('multipart: 2,000 tiny fields', Array.from({ length: 2000 }, (_, i) => ({ name: `f${i}`, value: Buffer.from(String(i)) })), [1, 16]),
    ...multipart('multipart: 64 KiB file', [{ name: 'file', filename: 'upload.bin', value: binary(64 * KiB) }], [1, 64 * KiB]),
    ...plain('json 64 KiB', 'json', jsonBody, 'application/json', `${json.count} keys`),
    ...plain('urlencoded 64 KiB', 'urlencoded', Buffer.from(urlencoded.text), 'application/x-www-form-urlencoded', `${urlencoded.count} keys`),
    ...plain('text 64 KiB', 'text', Buffer.from(text), 'text/plain', `${text.length} chars`),
    ...plain(`gzip json 64 KiB (${(gzipped.length / KiB).toFixed(1)} KiB gzipped)`, 'json', gzipped, 'application/json', `${json.count} keys`, 'gzip')
  ]
}

/**
 * The whole request, head and chunked framing included, in one Buffer: the client then costs a few large writes
 * whatever the chunk size, and the server's parser still hands the app each chunk as its own 'data' event.
 */
function encodeRequest (c: Case): Buffer {
  const head = Buffer.from([
    'POST / HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: ' + c.contentType, ...(c.encoding ? ['Content-Encoding: ' + c.encoding] : []),
    'Transfer-Encoding: chunked', 'Connection: close', '', ''
  ].join('\r\n'), 'latin1')
  let size = head.length + 5
  for (let at = 0; at < c.body.length; at += c.chunk) {
    const length = Math.min(c.chunk, c.body.length - at)
    size += length.toString(16).length + 4 + length
  }
  const wire = Buffer.allocUnsafe(size)
  let offset = head.copy(wire, 0)
  for (let at = 0; at < c.body.length; at += c.chunk) {
    const length = Math.min(c.chunk, c.body.length - at)
    offset += wire.write(length.toString(16) + '\r\n', offset, 'latin1')
    offset += c.body.copy(wire, offset, at, at + length)
    wire[offset++] = 13
    wire[offset++] = 10
  }
  wire.write('0\r\n\r\n', offset, 'latin1')
  return wire
}

interface Answer { status: number | null, read: string }

/** Sends one pre-encoded request on a fresh connection; resolves with the status and the server's summary once it closed. */
function send (port: number, wire: Buffer): Promise<Answer> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' })
    const received: Buffer[] = []
    let done = false
    const finish = (): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      socket.destroy()
      const text = Buffer.concat(received).toString('utf8')
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)
      let read = ''
      try {
        const answer = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { read?: string, error?: string }
        read = answer.read ?? 'error: ' + String(answer.error)
      } catch {
        read = 'no answer'
      }
      resolve({ status: status ? Number(status[1]) : null, read })
    }
    const timer = setTimeout(finish, REQUEST_TIMEOUT_MS)
    socket.on('data', (chunk: Buffer) => received.push(chunk))
    // The request says `Connection: close`: the server ends the connection after its answer.
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', finish)
    // Not ended after writing: a half-close could end the exchange before the answer.
    socket.write(wire)
  })
}

/** The next IPC message of `child`; rejects if it exits first. */
function nextMessage<T> (child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null): void => { child.off('message', onMessage); reject(new Error(`chunking server exited (${code})`)) }
    const onMessage = (msg: unknown): void => { child.off('exit', onExit); resolve(msg as T) }
    child.once('message', onMessage)
    child.once('exit', onExit)
  })
}

/**
 * bench/chunking-server.ts with its types stripped, as plain CommonJS in `directory`: the server runs under plain
 * `node`, as an application does (bench/multipart.ts found tsx's loader changing how often a server collects).
 */
function writePlainServer (directory: string): string {
  const ts = load('typescript') as typeof import('typescript')
  const source = fs.readFileSync(path.join(__dirname, 'chunking-server.ts'), 'utf8')
  const { outputText } = ts.transpileModule(source, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true } })
  const file = path.join(directory, 'chunking-server.cjs')
  fs.writeFileSync(file, outputText)
  return file
}

interface Measure { cpuMs: number[], dataEvents: number[], answers: Answer[], seconds: number, firstCounted: boolean }

/** Past this, a request is long enough that its first run's compiling is lost in it (and more runs would cost minutes). */
const SLOW_MS = 2000
/** From this chunk size on (the "normal" rows) a request takes a few ms: compiling and noise weigh, more runs cost nothing. */
const NORMAL_CHUNK = 64 * KiB

/** What the server answers when it read the case right: the floor counts bytes, the others summarize what they parsed. */
const expectedFor = (target: Target, c: Case): string => target.kind === 'floor' ? `${c.body.length} B read` : c.expected

interface Run { target: Target, child: ChildProcess, port: number, expected: string, answers: Answer[], seconds: number, warm: number, runs: number }

const isRight = (answer: Answer, expected: string): boolean => answer.status === 200 && answer.read === expected

/**
 * One case against its targets, each in a fresh server process, all started at once and sent requests in turns (each
 * round in another order), so that a drift of the machine falls on all of them. Each target's first request warms it up;
 * then 5 are measured (quick: 3); for a case in NORMAL_CHUNK chunks, 11 after 10 more warm-ups (quick: 5 after 5); for
 * a target whose first request took over SLOW_MS, 3 with the first counted (quick: 2).
 */
async function measureCase (serverFile: string, c: Case, targets: Target[], wire: Buffer, quick: boolean): Promise<Map<string, Measure>> {
  const children = targets.map((target) => fork(serverFile, [target.kind, c.format, target.distRoot, root], { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }))
  try {
    const ports = await Promise.all(children.map((child) => nextMessage<{ port: number }>(child)))
    const runs: Run[] = targets.map((target, i) => ({ target, child: children[i], port: ports[i].port, expected: expectedFor(target, c), answers: [], seconds: 0, warm: 0, runs: 0 }))
    const sendOne = async (run: Run): Promise<number> => {
      const started = Date.now()
      run.answers.push(await send(run.port, wire))
      const ms = Date.now() - started
      run.seconds += ms / 1000
      return ms
    }
    for (const run of runs) {
      const firstMs = await sendOne(run)
      const normal = c.chunk >= NORMAL_CHUNK
      run.warm = normal ? (quick ? 6 : 11) : firstMs > SLOW_MS ? 0 : 1
      run.runs = normal ? (quick ? 5 : 11) : firstMs > SLOW_MS ? (quick ? 2 : 3) : (quick ? 3 : 5)
    }
    // A target that refuses or misreads is reported as such; its other tries would say the same.
    const pending = (): Run[] => runs.filter((run) => run.answers.length < run.warm + run.runs && isRight(run.answers[run.answers.length - 1], run.expected))
    for (let round = 0; pending().length; round++) {
      const turn = pending()
      for (const run of [...turn.slice(round % turn.length), ...turn.slice(0, round % turn.length)]) await sendOne(run)
    }
    const measures = new Map<string, Measure>()
    for (const run of runs) {
      run.child.send('report')
      const { samples } = await nextMessage<{ samples: Sample[] }>(run.child)
      const measured = samples.slice(run.warm)
      measures.set(run.target.id, { cpuMs: measured.map((s) => s.cpuMicros / 1000), dataEvents: measured.map((s) => s.dataEvents), answers: run.answers, seconds: run.seconds, firstCounted: run.warm === 0 })
    }
    return measures
  } finally {
    for (const child of children) child.kill('SIGKILL')
  }
}

const chunkLabel = (chunk: number): string => chunk >= KiB ? `${chunk / KiB} KiB chunks` : `${chunk}-byte chunks`

export async function chunking (ctx: Context): Promise<SectionResult> {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'bodykit-bench-chunking-'))
  const serverFile = writePlainServer(directory)
  const rows: Row[] = []
  const checks: string[] = []
  try {
    for (const c of buildCases()) {
      const wire = encodeRequest(c)
      const chunks = Math.ceil(c.body.length / c.chunk)
      const label = `${c.name}, ${chunkLabel(c.chunk)} (${wire.length.toLocaleString('en-US')} B on the wire)`
      const targets = targetsFor(c.format)
      const measures = await measureCase(serverFile, c, targets, wire, ctx.quick)
      const caseRows: Row[] = []
      for (const target of targets) {
        const m = measures.get(target.id) as Measure
        const expected = expectedFor(target, c)
        const failed = m.answers.find((a) => !isRight(a, expected))
        const ms = failed || m.cpuMs.length === 0 ? null : median(m.cpuMs)
        const base = measures.get(targets[0].id) as Measure
        const baseMs = base.cpuMs.length && base.answers.every((a) => isRight(a, c.expected)) ? median(base.cpuMs) : null
        const note = failed
          ? failed.status === 200 ? `200, but read ${failed.read} (sent ${expected})` : `answered ${failed.status ?? 'nothing'} (${failed.read})`
          : undefined
        caseRows.push({
          case: label,
          target: target.id,
          baseline: target.baseline,
          ratio: ms === null || baseMs === null ? null : ms / baseMs,
          value: ms,
          unit: 'ms',
          note: note ?? (baseMs === null ? 'baseline failed' : undefined),
          extra: { wireBytes: wire.length, bodyBytes: c.body.length, chunks, ...(m.cpuMs.length ? { minMs: Math.min(...m.cpuMs), maxMs: Math.max(...m.cpuMs) } : {}), requests: m.cpuMs.length, firstCounted: Number(m.firstCounted), seconds: m.seconds, ...(target.kind === 'floor' ? { dataEvents: median(m.dataEvents) } : {}) }
        })
        if (target.kind === 'floor') {
          const events = m.dataEvents
          // A chunk that straddles two socket reads is handed on in two pieces: a few more events than chunks, never fewer.
          const verdict = events.every((e) => e === chunks) ? 'one per chunk' : events.every((e) => e > chunks) ? 'more: chunks split across socket reads' : 'FEWER than chunks'
          checks.push(`${c.name}, ${chunkLabel(c.chunk)}: ${[...new Set(events)].join(' / ')} 'data' events per request for ${chunks} chunks (${verdict})`)
        }
      }
      rows.push(...caseRows)
      const seconds = [...measures.values()].reduce((sum, m) => sum + m.seconds, 0)
      ctx.log(`\n  ${label}: body ${c.body.length} B in ${chunks} chunks (${seconds.toFixed(1)} s)`)
      ctx.log(textTable([
        ['target', 'CPU ms / request (median)', 'min-max', 'requests', 'ratio to ' + targets[0].id, 'bytes on the wire', 'answer'],
        ...caseRows.map((r) => {
          const m = measures.get(r.target) as Measure
          return [
            r.target,
            r.value === null ? '-' : r.value.toFixed(2),
            m.cpuMs.length ? `${Math.min(...m.cpuMs).toFixed(2)}-${Math.max(...m.cpuMs).toFixed(2)}` : '-',
            m.firstCounted ? `${m.cpuMs.length} (first counted)` : `${m.cpuMs.length} of ${m.answers.length}`,
            r.ratio === null ? (r.note ?? 'n/a') : r.ratio.toFixed(2),
            String(wire.length),
            r.note ?? `200 (${expectedFor(targets.find((t) => t.id === r.target) as Target, c)})`
          ]
        })
      ]).split('\n').map((line) => '    ' + line).join('\n'))
    }
  } finally {
    fs.rmSync(directory, { recursive: true, force: true })
  }
  const oneByte = checks.filter((check) => check.includes(', 1-byte chunks: '))
  const everyByte = oneByte.every((check) => check.endsWith('(one per chunk)'))
  ctx.log(`\n  'data' events counted by the floor in every measured request:\n${checks.map((check) => '    ' + check).join('\n')}`)
  // Row order sets the table's columns: the replaced libraries first, then bodykit's targets, the floor last.
  const order = (id: string): number => id === multerId ? 0 : id === bodyParserId ? 3 : id === floorId ? 9 : id.includes('multipart()') ? 1 : id.includes('multer') ? 2 : 4
  rows.sort((a, b) => order(a.target) - order(b.target))
  return {
    id: 'chunking',
    title: 'Hostile chunking over HTTP: server CPU per request ÷ the replaced library (multer or body-parser); lower is better',
    legend: `Each case is one chunked request on a fresh TCP connection from the bench process, every chunk of the given size its own chunk on the wire; each target and case runs in a fresh server process under plain node: one request to warm up, then the median of 5 requests${ctx.quick ? ' (--quick: 3)' : ''} of the server's CPU time (user + system, process-wide) from the request's arrival to next(); a case in ${NORMAL_CHUNK / KiB} KiB chunks gets 10 more to warm up and 11 measured${ctx.quick ? ' (--quick: 5 and 5)' : ''}; a target whose first request took over ${SLOW_MS / 1000} s counts that first one and gets 3 in all${ctx.quick ? ' (--quick: 2)' : ''} (its compiling is lost in seconds). Targets of a case are sent requests in turns, each round in another order. The floor only listens to 'data' and 'end': Node's own cost of the chunks, ÷ the replaced library. Check: the floor saw ${everyByte ? 'exactly one' : 'NOT always one'} 'data' event per chunk in every 1-byte case (${oneByte.length} cases).`,
    rows
  }
}
