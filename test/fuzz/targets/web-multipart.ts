// Fuzz target 10: the Web build's form reader (src/web/form-reader.ts) with busboy as its oracle: a drawn body and
// limits read by startWebForm in the drawn pieces and in 1-byte chunks, and by the Node build's busboy-backed
// readMultipart: the same fields, files (bytes) and error (status, type, message, properties), every time.
import { checkError, drawSplits, Finding, headerValue, splitAt, withInput, type Answers, type Source } from './harness'
import { describeAnswer, nodeAnswer, NOT_READ, webResult } from '../../web-build/form-compare'

const CONTENT_TYPES = ['multipart/form-data; boundary=X', 'multipart/form-data; boundary="a b:c"', 'multipart/form-data; boundary=X; charset=utf-8',
  'multipart/form-data', 'multipart/form-data; boundary=X; boundary=Y', 'multipart/form-data; boundary="a\\b"', 'multipart/form-data; boundary=' + 'b'.repeat(71)]
// Counts and sizes of at least 1 (0 for sizes): what the options accept.
const SMALL = [undefined, 1, 2, 3, 8, 64]

export function draw (source: Source) {
  return {
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 120)),
    files: source.pick('files', ['none', 'memory', 'fields-f'] as const),
    fileSizeLimit: source.pick('fileSizeLimit', [...SMALL, 0]),
    fileLimit: source.pick('fileLimit', SMALL),
    partLimit: source.pick('partLimit', SMALL),
    parameterLimit: source.pick('parameterLimit', SMALL),
    fieldSizeLimit: source.pick('fieldSizeLimit', [...SMALL, 0]),
    fieldNameSizeLimit: source.pick('fieldNameSizeLimit', SMALL),
    extended: source.bool('extended'),
    defaultCharset: source.pick('defaultCharset', [undefined, 'latin1', 'utf-16le', 'shift_jis']),
    splits: drawSplits(source, 12),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>

function optionsOf (input: Input): Record<string, unknown> {
  const files = input.files === 'none'
    ? false
    : { storage: 'memory', fileSizeLimit: input.fileSizeLimit, fileLimit: input.fileLimit, fieldNames: input.files === 'fields-f' ? ['f'] : undefined }
  return JSON.parse(JSON.stringify({
    files,
    partLimit: input.partLimit,
    parameterLimit: input.parameterLimit,
    fieldSizeLimit: input.fieldSizeLimit,
    fieldNameSizeLimit: input.fieldNameSizeLimit,
    extended: input.extended,
    defaultCharset: input.defaultCharset
  })) as Record<string, unknown>
}

/** The Web reader's answer, checked: it never throws, and an error is one of bodykit's, with its type's status. */
function webAnswerOf (input: Input, chunks: Uint8Array[], where: string): string {
  let result
  try {
    result = webResult(input.contentType, chunks, optionsOf(input))
  } catch (err) {
    throw new Finding(`${where}: the Web reader broke its contract: ${err instanceof Error ? err.stack : String(err)}`, 'threw')
  }
  if (result instanceof Error) checkError(result, where)
  return describeAnswer(result)
}

export async function check (input: Input): Promise<void> {
  const body = new Uint8Array(input.body)
  const pieces = splitAt(input.body, input.splits).map((piece) => new Uint8Array(piece))
  // busboy reads the body in the drawn pieces (the Node build makes its reading the same however split).
  const expected = await nodeAnswer(input.contentType, pieces, optionsOf(input))
  // A Content-Type readMultipart skips never reaches a reader.
  if (expected === NOT_READ) return
  const inPieces = webAnswerOf(input, pieces, 'in pieces')
  if (inPieces !== expected) throw new Finding(`the Web reader and busboy differ:\n  web:  ${inPieces}\n  node: ${expected}`, 'differ')
  const bytes = body.length <= 4096 ? Array.from(body, (_, i) => body.subarray(i, i + 1)) : [body]
  const oneByOne = webAnswerOf(input, bytes, 'in 1-byte chunks')
  if (oneByOne !== inPieces) throw new Finding(`two answers for one body:\n  1-byte chunks: ${oneByOne}\n  pieces:        ${inPieces}`, 'differ')
}

export const fuzz = (data: Buffer): Promise<void> => withInput('web-multipart', data, draw, check)

const form = (...parts: string[]): string => parts.map((part) => '--X\r\n' + part + '\r\n').join('') + '--X--\r\n'
const field = (name: string, value: string): string => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`
const file = (name: string, filename: string, data: string, type = 'text/plain'): string =>
  `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n${data}`

export const seeds: Record<string, Answers> = {
  fields: { body: form(field('a', '1'), field('b', 'two words'), field('a', '3')), pieces: 4, split: [5, 30, 31] },
  'file-memory': { files: 'memory', body: form(field('title', 't'), file('f', 'a/b.txt', 'file data\r\nwith lines')) },
  'file-refused': { body: form(file('f', 'a.txt', 'no files accepted')) },
  'file-size-limit': { files: 'memory', fileSizeLimit: 3, body: form(file('f', 'big.txt', 'more than three')) },
  'part-limit': { partLimit: 2, body: form(field('a', '1'), field('b', '2'), field('c', '3')) },
  'field-size-limit': { fieldSizeLimit: 2, body: form(field('a', 'three')) },
  'filename-star': { files: 'memory', body: form('Content-Disposition: form-data; name="f"; filename*=UTF-8\'\'%E2%9C%93.txt\r\n\r\nstar') },
  'filename-star-broken': { files: 'memory', body: form('Content-Disposition: form-data; name="f"; filename*=UTF-8\'\'%E0%A4%A\r\n\r\nbroken') },
  'part-charset': { body: form('Content-Disposition: form-data; name="a"\r\nContent-Type: text/plain; charset=utf-16le\r\n\r\n\u00e9x') },
  'charset-field': { body: form(field('_charset_', 'iso-8859-1'), field('a', '\u00e9')) },
  'lost-delimiter': { body: '--X\r\r\n--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X--\r\n' },
  'delimiter-in-header': { body: '--X\r\nContent-Disposition: form-data; na\r\n--X--\r\n\r\n\r\n\xfe\r\n' },
  'folded-header': { body: form('Content-Disposition: form-data;\r\n name="a"\r\n\r\nv') },
  'cut-in-header': { body: '--X\r\nContent-Disposition: form-data; name="a"\r' },
  'boundary-in-data': { files: 'memory', body: form(file('f', 'b', '--X-not-a-delimiter\r\n--Xmore\r\n--')), pieces: 4, split: [60, 61, 62] },
  'quoted-boundary': { contentType: 'multipart/form-data; boundary="a b:c"', body: '--a b:c\r\n' + field('q', '1') + '\r\n--a b:c--' }
}
