// A small multipart/form-data writer for test/multer/ported.test.ts: parts in, the body's bytes out, byte for byte as written.

/** The boundary every form of the ported suite uses unless a case says otherwise. */
export const BOUNDARY = '----PortedFormBoundary7MA4YWxkTrZu0gW'

/** The Content-Type of a form written with `boundary`. */
export function formType (boundary = BOUNDARY): string {
  return 'multipart/form-data; boundary=' + boundary
}

/** A text field; `name` is written as given (escapes such as `%22` included). */
export interface FieldPart { name: string, value: string | Buffer, headers?: readonly string[] }

/** A file part: `filename` goes in `filename="…"`, `filenameStar` verbatim after `filename*=`. */
export interface FilePart {
  name: string
  filename?: string
  filenameStar?: string
  /** The part's Content-Type; null leaves the header out. */
  type?: string | null
  data: string | Buffer
  headers?: readonly string[]
}

/** A part written exactly as given, header block included (its CRLFs too). */
export interface RawPart { raw: string | Buffer }

export type Part = FieldPart | FilePart | RawPart

function isRaw (part: Part): part is RawPart {
  return 'raw' in part
}

function isFile (part: Part): part is FilePart {
  return 'data' in part
}

function headerBlock (part: FieldPart | FilePart): string {
  let disposition = `Content-Disposition: form-data; name="${part.name}"`
  const lines: string[] = []
  if (isFile(part)) {
    if (part.filename !== undefined) disposition += `; filename="${part.filename}"`
    if (part.filenameStar !== undefined) disposition += `; filename*=${part.filenameStar}`
    const type = part.type === undefined ? 'application/octet-stream' : part.type
    if (type !== null) lines.push('Content-Type: ' + type)
  }
  lines.unshift(disposition)
  lines.push(...(part.headers ?? []))
  return lines.map((line) => line + '\r\n').join('') + '\r\n'
}

/** The body of a form with these parts, closed with the final delimiter unless `close` is false. */
export function buildForm (parts: readonly Part[], options: { boundary?: string, close?: boolean } = {}): Buffer {
  const boundary = options.boundary ?? BOUNDARY
  const chunks: Buffer[] = []
  for (const part of parts) {
    chunks.push(Buffer.from('--' + boundary + '\r\n'))
    if (isRaw(part)) {
      chunks.push(Buffer.from(part.raw))
    } else {
      // Header text is sent as UTF-8, as browsers send a name or filename they do not escape.
      chunks.push(Buffer.from(headerBlock(part), 'utf8'))
      chunks.push(Buffer.from(isFile(part) ? part.data : part.value))
    }
    chunks.push(Buffer.from('\r\n'))
  }
  if (options.close !== false) chunks.push(Buffer.from('--' + boundary + '--\r\n'))
  return Buffer.concat(chunks)
}

/** Shorthands for the common parts. */
export function field (name: string, value: string | Buffer): FieldPart {
  return { name, value }
}

export function file (name: string, filename: string, data: string | Buffer, type: string | null = 'text/plain'): FilePart {
  return { name, filename, data, type }
}
