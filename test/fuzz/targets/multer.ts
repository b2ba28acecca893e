// Fuzz target 7: bodykit/multer against multer 2.x on drawn forms, APIs and limits (memory storage), where multer
// answers within ANSWER_MS: the same req.body, files and error (class, code, field, message; not status: docs/multer.md).
// And bodykit/multer against itself (issue 45): one answer for every body however it arrives, filename* included.
import type { IncomingMessage, ServerResponse } from 'node:http'
import realMulter from 'multer'
import bodykitMulter from '../../../src/multer'
import { comparable, deliveriesOf, drawSplits, Finding, framingHeaders, headerValue, runMiddleware, sameAnswer, splitAt, withInput, type Answers, type Source, type Wire } from './harness'

type Middleware = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void
type Multer = typeof realMulter

const APIS = ['any', 'single', 'array', 'fields', 'none'] as const
const LIMIT_KEYS = ['fieldNameSize', 'fieldSize', 'fields', 'fileSize', 'files', 'parts'] as const
const LIMIT_VALUES = [undefined, 0, 1, 2, 5, 100]
const CONTENT_TYPES = ['multipart/form-data; boundary=X', 'multipart/form-data; boundary="X"', 'multipart/mixed; boundary=X', 'multipart/form-data', 'text/plain']

export function draw (source: Source) {
  const limits: Record<string, number> = {}
  for (const key of LIMIT_KEYS) {
    const value = source.pick(key, LIMIT_VALUES)
    if (value !== undefined) limits[key] = value
  }
  return {
    api: source.pick('api', APIS),
    maxCount: source.pick('maxCount', [undefined, 0, 1, 2] as const),
    limits,
    preservePath: source.bool('preservePath'),
    defParamCharset: source.pick('defParamCharset', [undefined, 'utf8', 'latin1'] as const),
    contentType: headerValue(source.text('contentType', CONTENT_TYPES, 80)),
    chunked: source.bool('chunked'),
    splits: drawSplits(source, 8),
    body: source.rest('body')
  }
}

type Input = ReturnType<typeof draw>
type FileFilter = NonNullable<Parameters<Multer>[0]>['fileFilter']

/** A fileFilter that accepts a turn of the loop later: busboy's events of the same write come before its verdict. */
const acceptLater: FileFilter = (_req, _file, callback) => { setImmediate(callback, null, true) }

function middlewareOf (library: Multer, input: Input, fileFilter?: FileFilter): Middleware {
  // A sparse array index blocks multer's event loop (docs/multer.md): bounded for both.
  const upload = library({ storage: library.memoryStorage(), limits: { ...input.limits, fieldArrayIndexLimit: 100 } as never, preservePath: input.preservePath, defParamCharset: input.defParamCharset, fileFilter })
  switch (input.api) {
    case 'single': return upload.single('f') as unknown as Middleware
    case 'array': return upload.array('f', input.maxCount) as unknown as Middleware
    case 'fields': return upload.fields([{ name: 'f', maxCount: input.maxCount }, { name: 'g', maxCount: 1 }]) as unknown as Middleware
    case 'none': return upload.none() as unknown as Middleware
    default: return upload.any() as unknown as Middleware
  }
}

function describeFile (file: Record<string, unknown>): unknown {
  return comparable({ ...file, buffer: Buffer.isBuffer(file.buffer) ? file.buffer.toString('hex') : file.buffer })
}

/** What one library made of the request: its error (no status, which only bodykit/multer sets) or the body and files. */
async function outcomeOf (library: Multer, input: Input, wire: Wire, where: string, fileFilter?: FileFilter) {
  const run = await runMiddleware(middlewareOf(library, input, fileFilter), wire, where)
  const req = run.req as Record<string, unknown>
  if (run.err) {
    const err = run.err as Error & Record<string, unknown>
    return { value: { error: { class: err.constructor.name, name: err.name, code: err.code, field: err.field, message: err.message } } }
  }
  const files = req.files as unknown
  return {
    value: {
      body: comparable(req.body),
      file: req.file === undefined ? undefined : describeFile(req.file as Record<string, unknown>),
      files: Array.isArray(files)
        ? files.map((f) => describeFile(f as Record<string, unknown>))
        : files === undefined ? undefined : Object.entries(files as Record<string, Record<string, unknown>[]>).map(([name, list]) => [name, list.map(describeFile)])
    }
  }
}

export async function check (input: Input): Promise<void> {
  try {
    middlewareOf(realMulter, input)
  } catch {
    // Options multer refuses (maxCount 0 and the like): bodykit/multer must refuse them too.
    try {
      middlewareOf(bodykitMulter as unknown as Multer, input)
    } catch {
      return
    }
    throw new Finding('bodykit/multer accepts options multer refuses')
  }
  await checkOneAnswer(input)
  const headers = { 'content-type': input.contentType, ...framingHeaders(input.chunked ? 'chunked' : 'length', input.body.length) }
  const wire = { headers, chunks: splitAt(input.body, input.splits) }
  let expected
  try {
    expected = await outcomeOf(realMulter, input, wire, 'multer')
  } catch (err) {
    // multer's own hangs and crashes are not findings here.
    if (err instanceof Finding) return
    throw err
  }
  const actual = await outcomeOf(bodykitMulter as unknown as Multer, input, wire, 'bodykit/multer')
  // Documented differences: a filename* bodykit/multer reads by RFC 6266, and req.body after an error.
  if (/filename\*/i.test(input.body.toString('latin1'))) return
  try {
    sameAnswer(actual, expected, 'bodykit/multer against multer')
  } catch (err) {
    if (!(err instanceof Finding)) throw err
    // Documented difference (docs/multer.md): where multer's answer depends on how the body is split (busboy reads on
    // past the closing delimiter to the end of its piece, loses a delimiter after a lone CR or dash, reads a byte past
    // a cut header value), bodykit/multer answers one way for every split. Not a finding when multer answers this body
    // differently in another split; bodykit/multer must then answer it alike whole and a byte at a time.
    if (!await multerAnswersBySplit(input, headers, expected)) throw err
    const deliveries: Array<[string, Buffer[]]> = [['whole', [input.body]], ['a byte at a time', splitAt(input.body, Array.from(input.body.keys()))]]
    for (const [name, chunks] of deliveries) {
      sameAnswer(await outcomeOf(bodykitMulter as unknown as Multer, input, { headers, chunks }, `bodykit/multer, ${name}`), actual, `bodykit/multer ${name} against in the drawn pieces`)
    }
  }
}

/**
 * Issue 45: bodykit/multer's answer for a body is its first error in byte order, however the body arrives. The whole
 * form with its Content-Length (read whole when small: the fast path, or busboy given the body and its end at once)
 * against the same bytes chunked, whole and in the drawn pieces, and in the drawn pieces with the length; with
 * multer's default fileFilter and with one that answers a turn later (whose verdict a later error must wait for).
 * Every body, a filename* included: the comparison with multer skips those, this one does not.
 */
async function checkOneAnswer (input: Input): Promise<void> {
  const headers = { 'content-type': input.contentType }
  const [whole, ...others] = deliveriesOf(headers, input.body, input.splits)
  const deliveries = [whole, { name: 'whole, chunked', wire: { headers: { ...headers, ...framingHeaders('chunked', input.body.length) }, chunks: [input.body] } }, ...others]
  for (const [filter, fileFilter] of [['default fileFilter', undefined], ['a fileFilter accepting a turn later', acceptLater]] as const) {
    const what = `bodykit/multer, ${filter}`
    const first = await outcomeOf(bodykitMulter as unknown as Multer, input, whole.wire, `${what}, ${whole.name}`, fileFilter)
    for (const delivery of deliveries.slice(1)) {
      const where = `${what}, ${delivery.name}`
      sameAnswer(await outcomeOf(bodykitMulter as unknown as Multer, input, delivery.wire, where, fileFilter), first, `${where} against ${whole.name}`)
    }
  }
}

/** Whether multer answers the body differently (or not at all) in another split: whole, a byte at a time, or in two pieces. */
async function multerAnswersBySplit (input: Input, headers: Record<string, string>, answer: Awaited<ReturnType<typeof outcomeOf>>): Promise<boolean> {
  const body = input.body
  const cuts = body.length <= 512 ? Array.from({ length: body.length - 1 }, (_, i) => i + 1) : Array.from({ length: 64 }, (_, i) => Math.floor((i + 1) * body.length / 65))
  const splits = [[], Array.from(body.keys()), ...cuts.map((cut) => [cut])]
  for (const points of splits) {
    let other
    try {
      other = await outcomeOf(realMulter, input, { headers, chunks: splitAt(body, points) }, 'multer')
    } catch (hang) {
      if (hang instanceof Finding) return true
      throw hang
    }
    try {
      sameAnswer(other, answer, 'multer against itself')
    } catch (differ) {
      if (differ instanceof Finding) return true
      throw differ
    }
  }
  return false
}

export const fuzz = (data: Buffer): Promise<void> => withInput('multer', data, draw, check)

const form = (...parts: string[]): string => parts.map((part) => '--X\r\n' + part + '\r\n').join('') + '--X--\r\n'
const field = (name: string, value: string): string => `Content-Disposition: form-data; name="${name}"\r\n\r\n${value}`
const file = (name: string, filename: string, data: string): string => `Content-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\n${data}`

export const seeds: Record<string, Answers> = {
  'any-fields-files': { body: form(field('a', '1'), file('f', 'a.txt', 'data'), field('b[c]', '2')) },
  single: { api: 'single', body: form(file('f', 'one.txt', 'x')) },
  'single-two-files': { api: 'single', body: form(file('f', '1', 'a'), file('f', '2', 'b')) },
  'single-unexpected-field': { api: 'single', body: form(file('g', 'g.txt', 'unexpected')) },
  'array-max': { api: 'array', maxCount: 1, body: form(file('f', '1', 'a'), file('f', '2', 'b')) },
  fields: { api: 'fields', maxCount: 2, body: form(file('f', '1', 'a'), file('g', '2', 'b'), file('g', '3', 'c')) },
  none: { api: 'none', body: form(field('a', '1'), file('f', 'x', 'y')) },
  'limit-file-size': { fileSize: 2, body: form(file('f', 'big', 'more than two')), pieces: 3, split: [20, 90] },
  'limit-files': { files: 1, body: form(file('f', '1', 'a'), file('f', '2', 'b')) },
  'limit-fields': { fields: 1, body: form(field('a', '1'), field('b', '2')) },
  'limit-parts': { parts: 1, body: form(field('a', '1'), file('f', '2', 'b')) },
  'limit-field-size': { fieldSize: 1, body: form(field('a', 'long')) },
  'limit-field-name': { fieldNameSize: 1, body: form(field('ab', '1')) },
  'nested-names': { body: form(field('a[]', '1'), field('a[]', '2'), field('b[c][d]', '3'), field('x[', '4'), field('[y]', '5')) },
  'proto-names': { body: form(field('__proto__', '1'), field('constructor[prototype][x]', '2'), field('a[__proto__]', '3')) },
  'sparse-index': { body: form(field('items[99]', 'a'), field('items[x]', 'b')) },
  'empty-name': { body: form(field('', 'v')) },
  'no-name': { body: '--X\r\nContent-Disposition: form-data\r\n\r\nv\r\n--X--\r\n' },
  'unexpected-end': { body: '--X\r\n' + field('a', '1') },
  'no-boundary': { contentType: 'multipart/form-data', body: form(field('a', '1')) },
  'not-multipart': { contentType: 'text/plain', body: 'plain' },
  'mixed': { contentType: 'multipart/mixed; boundary=X', body: form(field('a', '1')) },
  chunked: { chunked: true, body: form(field('a', '1'), file('f', 'c.txt', 'chunked')), pieces: 5, split: [1, 2, 30, 31] },
  'preserve-path': { preservePath: true, body: form(file('f', 'dir/sub/name.txt', 'p')) },
  'utf8-filename': { defParamCharset: 'utf8', body: form(file('f', 'caf\u00c3\u00a9.txt', 'u')) },
  'latin1-filename': { defParamCharset: 'latin1', body: form(file('f', 'caf\u00e9.txt', 'l')) },
  'header-malformed': { body: form('Content-Disposition form-data\r\n\r\nv') },
  'empty-body': { body: '' },
  'known-hang-delimiter-after-close': { body: '\r\n--X--\r\n--X\r\n--X\r\nContent-Disposition:form-data;name="e";filename="t"\r\ne:\r\n\r\nf' },
  // Found by fuzzing: busboy reads these by the split (a delimiter lost after a lone CR, a delimiter in a header block).
  'lost-delimiter': { body: '--X\r\r\n--X\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--X--\r\n' },
  'delimiter-in-header': { body: '--X\r\nContent-Disposition: form-data; na\r\n--X--\r\n\r\n\r\n\xfe\r\n' },
  // Found by fuzzing: a delimiter in a file part's header block, then a second block busboy refuses with the file open,
  // or the closing `--` right after the block: busboy leaves the file open (multer hangs).
  'known-hang-header-after-file': { body: '--X\r\nContent-Disposition:form-data;name="f";filename="1"\r\ne:\r\n--X\r\n\r\n\r\n\0' },
  'known-hang-file-before-close': { body: '\r\n--X\r\nContent-Disposition:form-data;name="f";filename="t"\r\n--X\r\nC:\r\n\r\n--' }
}
