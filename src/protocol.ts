// What depends on the request's protocol: whether it carries a body (HTTP/1.x headers, HTTP/2 frames, a Web Request), and its HTTP/2 stream.
import type { IncomingMessage } from 'http'
import type { ServerHttp2Stream } from 'http2'

/** The stream of a request that came through node:http2's compatibility API (an Http2ServerRequest), else null. */
export function http2StreamOf (req: IncomingMessage): ServerHttp2Stream | null {
  if (req.httpVersionMajor !== 2) return null
  const stream = (req as { stream?: unknown }).stream
  return stream !== null && typeof stream === 'object' && 'endAfterHeaders' in stream ? stream as ServerHttp2Stream : null
}

/**
 * Whether a Node request carries a body. HTTP/1.x says so in its headers (type-is: Transfer-Encoding, or a numeric
 * Content-Length). HTTP/2 has no Transfer-Encoding and may send a body without Content-Length: its frames say it,
 * as there is no body only when the HEADERS frame ended the stream (RFC 9113 §8.1). `readHttp2WithoutLength`
 * false: such a body counts as none, as body-parser counts it (its app may read the stream itself).
 */
export function hasBody (req: IncomingMessage, readHttp2WithoutLength: boolean): boolean {
  if (hasBodyHeaders(req)) return true
  if (!readHttp2WithoutLength) return false
  // Security/compat (issue 17): body-parser leaves such a body unread; it is read, limited and parsed as a chunked one.
  const stream = http2StreamOf(req)
  return stream !== null && !stream.endAfterHeaders
}

/**
 * type-is's `hasBody`: a Transfer-Encoding, or a Content-Length that is a number (the global `isNaN`'s coercion,
 * as type-is has it). Written here so that the check every request makes needs no module that loads the MIME
 * database; test/type-match.test.ts draws header sets and compares with type-is.
 */
export function hasBodyHeaders (req: Pick<IncomingMessage, 'headers'>): boolean {
  return req.headers['transfer-encoding'] !== undefined || !isNaN(req.headers['content-length'] as unknown as number)
}

/** A Content-Length as Node's HTTP parser takes it: digits only (a Request from another runtime may carry anything). */
export const LENGTH_DIGITS = /^\d+$/

/**
 * Whether a Web Request carries a body: one it holds, or one its headers declare, as type-is says of a Node request
 * (Bun hands a `Content-Length: 0` request over with no body, which is an empty body to parse). Shared by the Node
 * build's Request source and the Web build.
 */
export function webRequestDeclaresBody (holdsBody: boolean, header: (name: string) => string | undefined): boolean {
  if (holdsBody) return true
  const length = header('content-length')
  return header('transfer-encoding') !== undefined || (length !== undefined && LENGTH_DIGITS.test(length))
}
