// Prototype (a): a total multipart/form-data reader on Uint8Array, busboy's reading, no Node built-in, no Buffer.
/* global TextDecoder, TextEncoder */
// write(chunk) and end() never throw: every outcome is one call of onDone(error | null), error a { type } of bodykit's.
const CR = 13
const LF = 10
const decoder = new TextDecoder('utf-8')
const latin1 = (bytes) => { let s = ''; for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]); return s }

function concat (a, b) {
  if (a.length === 0) return b
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}

/** Where needle starts in hay from `from`, or -(length of the longest needle prefix that ends hay) - 1. */
function search (hay, needle, from) {
  const first = needle[0]
  for (let i = hay.indexOf(first, from); i !== -1; i = hay.indexOf(first, i + 1)) {
    let j = 1
    while (j < needle.length && i + j < hay.length && hay[i + j] === needle[j]) j++
    if (j === needle.length) return i
    if (i + j === hay.length) return -(hay.length - i) - 1
  }
  return -1
}

/** RFC 7578 §4.2 parameters of Content-Disposition; filename* (RFC 5987, UTF-8 or ISO-8859-1) wins over filename. */
function parseDisposition (value) {
  const params = {}
  const re = /;\s*([^\s=;]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;]*))/g
  let m
  while ((m = re.exec(value)) !== null) {
    const key = m[1].toLowerCase()
    let v = m[2] !== undefined ? m[2].replace(/\\(.)/g, '$1') : m[3].trim()
    if (key.endsWith('*')) {
      const ext = /^([^']*)'[^']*'(.*)$/.exec(v)
      if (ext === null) continue
      const bytes = Uint8Array.from(ext[2].replace(/%([0-9a-f]{2})|./gis, (s, hex) => String.fromCharCode(hex ? parseInt(hex, 16) : s.charCodeAt(0) & 0xff)), (c) => c.charCodeAt(0))
      v = /^utf-?8$/i.test(ext[1]) ? decoder.decode(bytes) : latin1(bytes)
      params[key.slice(0, -1)] = v
      params[key] = true
    } else if (!(key + '*' in params)) {
      params[key] = decoder.decode(Uint8Array.from(v, (c) => c.charCodeAt(0) & 0xff))
    }
  }
  return params
}

/**
 * @param {{ boundary: string, limits?: { parts?: number, headerSize?: number, fieldSize?: number, fileSize?: number },
 *   onPart: (info: { name: string, filename?: string, mimeType: string }) => { data: (bytes: Uint8Array) => void, end: () => void },
 *   onDone: (err: { type: string, message: string } | null) => void }} config
 */
export function createPartReader ({ boundary, limits = {}, onPart, onDone }) {
  const { parts: maxParts = 1000, headerSize = 16 * 1024, fieldSize = 1024 * 1024, fileSize = Infinity } = limits
  const needle = new TextEncoder().encode(`\r\n--${boundary}`)
  let state = 'preamble' // preamble | delimiter | headers | body | done
  let pending = Uint8Array.of(CR, LF) // busboy's reading: the body starts as if after a line break
  let part = null
  let size = 0
  let count = 0
  let settled = false
  const fail = (type, message) => { if (!settled) { settled = true; state = 'done'; onDone({ type, message }) } }

  function startPart (header) {
    if (header.length === 0) { part = { skip: true }; return }
    let disposition = null
    let mimeType = 'text/plain'
    for (const line of latin1(header).split('\r\n')) {
      const colon = line.indexOf(':')
      if (colon <= 0) return fail('multipart.header.malformed', 'Malformed part header')
      const name = line.slice(0, colon).trim().toLowerCase()
      const value = line.slice(colon + 1).trim()
      if (name === 'content-disposition') disposition = value
      else if (name === 'content-type') mimeType = value.split(';')[0].trim().toLowerCase() || mimeType
    }
    if (disposition === null || !/^form-data\s*(;|$)/i.test(disposition)) { part = { skip: true }; return }
    const params = parseDisposition(disposition)
    if (params.name === undefined) { part = { skip: true }; return }
    if (++count > maxParts) return fail('multipart.parts.too.many', 'Too many parts')
    const filename = params.filename === undefined ? undefined : params.filename.slice(Math.max(params.filename.lastIndexOf('/'), params.filename.lastIndexOf('\\')) + 1)
    const isFile = filename !== undefined || mimeType === 'application/octet-stream'
    part = { sink: onPart({ name: params.name, filename, mimeType }), limit: isFile ? fileSize : fieldSize, isFile }
    size = 0
  }

  function data (bytes) {
    if (part === null || part.skip || bytes.length === 0) return
    size += bytes.length
    if (size > part.limit) return fail(part.isFile ? 'multipart.file.too.large' : 'multipart.field.too.large', 'Part too large')
    part.sink.data(bytes)
  }

  function write (chunk) {
    if (state === 'done') return
    let buf = concat(pending, chunk)
    pending = new Uint8Array(0)
    let at = 0
    while (at < buf.length && !settled) {
      if (state === 'preamble' || state === 'body') {
        const found = search(buf, needle, at)
        if (found >= 0) {
          if (state === 'body') { data(buf.subarray(at, found)); if (part && !part.skip && !settled) part.sink.end() }
          part = null
          state = 'delimiter'
          at = found + needle.length
        } else {
          const keep = found === -1 ? 0 : -found - 1
          if (state === 'body') data(buf.subarray(at, buf.length - keep))
          pending = buf.slice(buf.length - keep)
          return
        }
      } else if (state === 'delimiter') {
        // busboy's reading after a delimiter: "--" closes the form, CRLF opens a part's headers, anything else is
        // data of no part, skipped up to the next delimiter.
        if (buf.length - at < 2) { pending = buf.slice(at); return }
        // The CRLF after a delimiter may begin the next one (an empty part): busboy's search finds that first.
        let j = 0
        while (j < needle.length && at + j < buf.length && buf[at + j] === needle[j]) j++
        if (j === needle.length) { at += j; continue }
        if (at + j === buf.length) { pending = buf.slice(at); return }
        if (buf[at] === 0x2d && buf[at + 1] === 0x2d) { state = 'done'; settled = true; onDone(null); return }
        if (buf[at] === CR && buf[at + 1] === LF) { state = 'headers'; at += 2 } else state = 'body'
      } else if (state === 'headers') {
        // busboy reads a part without header lines as a malformed header.
        if (buf[at] === CR) return fail('multipart.header.malformed', 'Malformed part header')
        if (buf.length - at < 2) { pending = buf.slice(at); return }
        const end = search(buf, Uint8Array.of(CR, LF, CR, LF), at)
        if (end < 0 || end - at > headerSize) {
          if (buf.length - at > headerSize) return fail('multipart.header.malformed', 'Malformed part header')
          pending = buf.slice(at)
          return
        }
        startPart(buf.subarray(at, end))
        state = 'body'
        at = end + 4
      }
    }
  }

  function end () {
    if (!settled) fail('multipart.unexpected.end', 'Unexpected end of form')
  }
  return { write (chunk) { try { write(chunk) } catch (err) { fail('multipart.reader.bug', String(err)) } }, end }
}

// The harness's interface (check.mjs): name and parse(chunks, boundary).
export const name = '(a) hand-written prototype'
export function parse (chunks, boundary) {
  return new Promise((resolve) => {
    const parts = []
    const reader = createPartReader({
      boundary,
      onPart: (info) => {
        const bufs = []
        return { data: (b) => bufs.push(b.slice()), end: () => parts.push(`${info.name}${info.filename === undefined ? '' : `[${info.filename}]`}=${JSON.stringify(decoder.decode(bufs.reduce(concat, new Uint8Array(0))))}`) }
      },
      onDone: (err) => resolve(err ? { error: `typed ${err.type}: ${err.message}`, parts } : { parts })
    })
    for (const c of chunks) reader.write(c)
    reader.end()
  })
}
