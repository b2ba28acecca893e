// Fuzz target 11: bodykit/web against the Node build: one drawn Request (the web target's draw) read by each build's reader; the same value or error, but for the differences docs/web.md lists.
import { readContentTypeLeniently } from '../../../src/content-type'
import bodykit from '../../../src/index'
import * as web from '../../../src/web'
import { webDecompressors } from '../../../src/web/inflate'
import { runReader, sameAnswer, turn, webRequest, withInput, type Answer, type Answers, type Source } from './harness'
import * as webTarget from './web'

type AnyReader = (req: unknown, options: object) => Promise<unknown>
type Kind = 'json' | 'text' | 'urlencoded' | 'raw' | 'multipart'
const READERS: Record<Kind, [node: AnyReader, web: AnyReader]> = {
  json: [bodykit.readJson as AnyReader, web.readJson as AnyReader],
  text: [bodykit.readText as AnyReader, web.readText as AnyReader],
  urlencoded: [bodykit.readUrlencoded as AnyReader, web.readUrlencoded as AnyReader],
  raw: [bodykit.readRaw as AnyReader, web.readRaw as AnyReader],
  multipart: [bodykit.readMultipart as AnyReader, web.readMultipart as AnyReader]
}

export const draw = (source: Source): ReturnType<typeof webTarget.draw> => webTarget.draw(source)
type Input = ReturnType<typeof draw>

/** The Web build's Uint8Arrays as the Buffers the Node build gives (docs/web.md), so that the two compare as bytes. */
function asBuffers (value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (Array.isArray(value)) return value.map(asBuffers)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, asBuffers(field)]))
  return value
}

/**
 * Why two answers may differ (docs/web.md, "Where it differs from the default entry"), or null: a charset other than
 * utf-8 (TextDecoder against iconv-lite), a form's error before a wrong length, an encoding this runtime's
 * DecompressionStream lacks (415), a compressed body whose wrong length the Node build answers first, or output Node's
 * DecompressionStream dropped with its error.
 */
function allowedDifference (headers: Record<string, string>, fromNode: Answer, fromWeb: Answer): string | null {
  const charset = readContentTypeLeniently(headers['content-type']).charset
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return 'charset'
  // A form whose Content-Length is wrong: the Web build answers the form's error where it lies, in the bytes before the
  // length was found wrong (or the body outgrew it past the limit); the Node build reads a small declared one whole first,
  // and answers the length or the limit.
  const wireVerdict = fromNode.error?.type === 'request.size.invalid' || (fromNode.error?.type === 'entity.too.large' && headers['content-length'] !== undefined)
  if (wireVerdict && String(fromWeb.error?.type).startsWith('multipart.')) return 'form-before-length'
  const encoding = (headers['content-encoding'] ?? 'identity').toLowerCase()
  if (encoding === 'identity') return null
  if (!webDecompressors().has(encoding) && fromWeb.error?.type === 'encoding.unsupported') return 'format'
  if (fromNode.error === undefined || fromWeb.error === undefined) return null
  if (fromNode.error.type === 'request.size.invalid' && fromWeb.error.type !== 'request.size.invalid') return 'length-first'
  // Node's DecompressionStream drops the output still queued when it fails at the end (docs/web.md): the Web build
  // answers without those bytes (zlib's error, or the wire's 413) where the Node build answers what they held.
  if (fromNode.error.type === 'entity.too.large' || fromWeb.error.type === 'entity.too.large' ||
    (fromWeb.error.type === undefined && fromWeb.error.status === 400)) return 'dropped-output'
  return null
}

export async function check (input: Input): Promise<void> {
  const { wire, options } = webTarget.requestOf(input)
  const [readNode, readWeb] = READERS[input.kind]
  const requests: Request[] = []
  try {
    requests.push(webRequest(wire, input.asBytes), webRequest(wire, input.asBytes))
  } catch {
    // Headers a Request refuses: no such request reaches a reader.
    return
  }
  const fromWeb = await runReader(() => readWeb(requests[0], options).then(asBuffers), turn(), 'bodykit/web')
  const fromNode = await runReader(() => readNode(requests[1], options), turn(), 'the Node build')
  if (allowedDifference(wire.headers, fromNode, fromWeb) !== null) return
  sameAnswer(fromWeb, fromNode, `read${input.kind}() of bodykit/web against the Node build`)
}

export const fuzz = (data: Buffer): Promise<void> => withInput('web-build', data, draw, check)

export const seeds: Record<string, Answers> = webTarget.seeds
