// One-off speed figure for the Web form reader against busboy (not run by npm test; timings are indicative only):
//   node --import tsx test/web-build/form-speed.ts [runs] [text|random]
// Two bodies: one 1 MiB file part written in 64 KiB chunks, and a 20-field form in one chunk. Each reader parses the
// body and keeps the bytes (busboy: its file stream's chunks, concatenated; fields decoded as busboy emits them).
import { randomBytes } from 'node:crypto'
import busboy from 'busboy'
import { createFieldAssembler } from '../../src/multipart/fields'
import { normalizeMultipartOptions } from '../../src/multipart/settings'
import { modern } from '../../src/variants'
import { WEB_BYTES } from '../../src/web/bytes'
import { startWebForm, type WebFormReader } from '../../src/web/form-reader'
import { NODE_FORMS } from '../../src/parsers/node-forms'

const RUNS = Number(process.argv[2] ?? 41)
// 'text' (the default: short lines, a CR every 11 bytes) or 'random' bytes.
const FILE_DATA = process.argv[3] ?? 'text'
const TYPE = 'multipart/form-data; boundary=----WebKitFormBoundary7MA4YWxkTrZu0gW'
const DELIMITER = '------WebKitFormBoundary7MA4YWxkTrZu0gW'
const fileBody = Buffer.concat([Buffer.from(DELIMITER + '\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n'),
  FILE_DATA === 'random' ? randomBytes(1024 * 1024) : Buffer.alloc(1024 * 1024, 'abcdefgh\r\n-'), Buffer.from('\r\n' + DELIMITER + '--\r\n')])
const fileChunks = Array.from({ length: Math.ceil(fileBody.length / 65536) }, (_, i) => fileBody.subarray(i * 65536, (i + 1) * 65536))
const fieldsBody = Buffer.from(Array.from({ length: 20 }, (_, i) => DELIMITER + `\r\nContent-Disposition: form-data; name="field${i}"\r\n\r\nvalue number ${i}\r\n`).join('') + DELIMITER + '--\r\n')

const settings = normalizeMultipartOptions({ files: { fileSizeLimit: 2 * 1024 * 1024 } })
const assemble = createFieldAssembler(settings, modern, NODE_FORMS, WEB_BYTES.decode)

function web (chunks: readonly Buffer[]): void {
  const reader = startWebForm(TYPE, settings, assemble) as WebFormReader
  for (const chunk of chunks) reader.write(chunk)
  if (reader.end() instanceof Error) throw new Error('web reader failed')
}

function bb (chunks: readonly Buffer[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const parser = busboy({ headers: { 'content-type': TYPE }, defParamCharset: 'utf8' })
    parser.on('file', (_name, stream) => {
      const parts: Buffer[] = []
      stream.on('data', (chunk: Buffer) => parts.push(chunk))
      stream.on('end', () => Buffer.concat(parts))
    })
    parser.on('field', () => {})
    parser.on('error', reject)
    parser.on('close', resolve)
    for (const chunk of chunks) parser.write(chunk)
    parser.end()
  })
}

async function median (run: () => unknown): Promise<number> {
  const times: number[] = []
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint()
    await run()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

async function main (): Promise<void> {
  for (const [name, chunks] of [['1 MiB file, 64 KiB chunks', fileChunks], ['20 fields, one chunk', [fieldsBody]]] as const) {
    // Warm both up first.
    for (let i = 0; i < 20; i++) { web(chunks); await bb(chunks) }
    const w = await median(() => web(chunks))
    const b = await median(() => bb(chunks))
    console.log(`${name}: web reader ${w.toFixed(3)} ms, busboy ${b.toFixed(3)} ms (median of ${RUNS})`)
  }
}

void main()
