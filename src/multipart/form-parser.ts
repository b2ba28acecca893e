// The multipart/form-data byte machine of both builds, on Uint8Array: delimiters, part header blocks and part data, read
// as busboy 1.6 reads them, but one way however the body is split, linear in every delivery, and never throwing.

/** The first values of the part headers a form reader needs (latin1 text, one character per byte), by header. */
export interface PartHeaders {
  disposition?: string
  type?: string
  encoding?: string
}

/** What the parser reports; a method that returns true stops the parser for good (the form has its answer). */
export interface PartEvents {
  /** A part's header block ended. */
  headers (headers: PartHeaders): boolean
  /** Bytes of the current part (the caller's chunk, or a byte the parser put back): `bytes[start..end)`, never empty. */
  data (bytes: Uint8Array, start: number, end: number): boolean
  /** A delimiter: the current part ends. */
  delimiter (): boolean
  /** A part's header block busboy refuses (a bad byte, or over 16 KiB as busboy counts). */
  malformed (): boolean
}

/**
 * Where the delimiter (`needle`) begins in `chunk` from `from`, or -1: each build hands the parser its own search
 * (Buffer.indexOf in the Node builds, searchByHorspool on the Web).
 */
export type DelimiterSearch = (needle: Uint8Array) => (chunk: Uint8Array, from: number) => number

/**
 * A search in JavaScript alone, Boyer-Moore-Horspool: how far the needle may move on, by the byte under its last one
 * (a text with a CR every 11 bytes: 0.12 ms a MiB, where indexOf on CR took 1.7).
 */
export const searchByHorspool: DelimiterSearch = (needle) => {
  const size = needle.length
  const last = size - 1
  const shift = new Int32Array(256).fill(size)
  for (let i = 0; i < last; i++) shift[needle[i]] = last - i
  return function find (chunk, at) {
    for (const end = chunk.length - last; at < end; at += shift[chunk[at + last]]) {
      if (chunk[at + last] !== needle[last]) continue
      let j = 0
      while (j < last && chunk[at + j] === needle[j]) j++
      if (j === last) return at
    }
    return -1
  }
}

/** What a build gives the parser: its delimiter search, and latin1 text from bytes (`bytes[start..end)`). */
export interface ParserTools {
  readonly search: DelimiterSearch
  latin1 (bytes: Uint8Array, start: number, end: number): string
  /** latin1 text as bytes: Node's pooled Buffers (a typed array of its own per form costs a garbage collection every few hundred). */
  bytesOf (text: string): Uint8Array
}

/** A multipart body read a chunk at a time. Its methods only: an object literal with a getter gets a hidden class of its own per form. */
export interface PartParser {
  write (chunk: Uint8Array): void
  /**
   * The body ended: the bytes held as a possible delimiter's start are data after all (busboy's search flushes them).
   * Returns whether the form was complete (its closing delimiter's `--` read).
   */
  end (): boolean
  /** From the next delimiter on, no header block is read: what follows a delimiter is bytes of no part (busboy past `parts`). */
  ignoreHeaders (): void
}

const CR = 13
const LF = 10
const DASH = 45
const SP = 32
const HT = 9
const COLON = 58
/** busboy's cap on a part's header block (Node's header size), counted as busboy counts: some bytes twice. */
const MAX_HEADER_BYTES = 16 * 1024
/** busboy keeps the first 1999 header lines of a part; later ones are read, and not kept. */
const MAX_HEADER_PAIRS = 2000
const DASH_BYTE = Uint8Array.of(DASH)
const CR_BYTE = Uint8Array.of(CR)

/** RFC 9110 tchar as a table by byte. (Exported below: an exported `const` is read as `exports.TOKEN` in each loop.) */
const TOKEN = new Uint8Array(256)
for (const char of "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") TOKEN[char.charCodeAt(0)] = 1
export { TOKEN }

/** A header value's bytes: HT, visible ASCII, space and obs-text. */
function isValueByte (code: number): boolean {
  return code === HT || (code >= 0x20 && code !== 0x7f)
}

/** The bytes as latin1 text (one character per byte), in slices: fromCharCode takes a bounded number of arguments. */
export function latin1Of (bytes: Uint8Array, start = 0, end = bytes.length): string {
  let text = ''
  for (let at = start; at < end; at += 8192) {
    text += String.fromCharCode.apply(null, bytes.subarray(at, Math.min(end, at + 8192)) as unknown as number[])
  }
  return text
}

// The header parser's states (busboy's, with its CR LF sub-states spelled out).
const NAME = 0
const SPACES = 1
const VALUE = 2
const AFTER_CR = 3
const AFTER_CRLF = 4
const AFTER_CRLFCR = 5
/** Which kept header a name is, by its lower-case text. */
const KEPT: Readonly<Record<string, keyof PartHeaders>> = { 'content-disposition': 'disposition', 'content-type': 'type', 'content-transfer-encoding': 'encoding' }
const KEPT_NAMES = Object.keys(KEPT)

/** Which kept header the name `bytes[from..to)` (token bytes) is, in any case. */
function keptNameAt (bytes: Uint8Array, from: number, to: number): keyof PartHeaders | undefined {
  for (const name of KEPT_NAMES) {
    if (name.length !== to - from) continue
    let i = 0
    // A token byte | 0x20 is a lower-case letter only when it is that letter, in either case ('-' stays '-').
    while (i < name.length && (bytes[from + i] | 0x20) === name.charCodeAt(i)) i++
    if (i === name.length) return KEPT[name]
  }
  return undefined
}

/**
 * A parser for the boundary (busboy's own reading of it from the Content-Type). Reading as busboy: the body starts
 * as if after a line break, so a first delimiter without one counts; after a delimiter, `--` completes the form, CRLF
 * opens a header block, and anything else is bytes of no part up to the next delimiter; a delimiter inside a header
 * block does not end it. Nothing after the form is complete is read.
 */
export function createPartParser (boundary: string, events: PartEvents, tools: ParserTools): PartParser {
  const needle = tools.bytesOf('\r\n--' + boundary)
  const size = needle.length
  const last = size - 1
  const find = tools.search(needle)
  const latin1 = tools.latin1
  /** Where the next whole delimiter in `chunk` from `from` starts, or -1 (none fits in fewer bytes: a byte at a time, no search). */
  const findIn = (chunk: Uint8Array, from: number): number => chunk.length - from >= size ? find(chunk, from) : -1
  // The needle's bytes that ended the input so far: a delimiter may start there. busboy's virtual line break first.
  let held = 2
  let stopped = false
  let complete = false
  // What busboy is matching after a delimiter: 1 its first byte, 2 after `-`, 3 after CR; 0 none.
  let afterDelimiter = 0
  let inHeaders = false
  let readsHeaders = true
  let state = NAME
  let counted = 0
  let pairs = 0
  let name = ''
  let value = ''
  let kept: keyof PartHeaders | undefined
  let found: PartHeaders = {}

  /** The headers found, and a fresh record for the next block. */
  function headers (): PartHeaders {
    const block = found
    found = {}
    return block
  }

  /**
   * Reads header bytes from `at`: where the part's data starts once the block ended (its headers reported), `end`
   * when the block goes on, -1 when busboy refuses it.
   */
  function readHeader (bytes: Uint8Array, at: number, end: number): number {
    let from = at
    while (at < end) {
      // compat(busboy): each look at a byte counts, and busboy looks twice at a value's first byte, at the first
      // byte of a header line after the first and at a folded line's space. A name's and a value's bytes are looked
      // at in one run, as far as the count allows.
      if (state === NAME || state === VALUE) {
        const stop = end - at > MAX_HEADER_BYTES - counted ? at + MAX_HEADER_BYTES - counted : end
        const start = at
        if (state === NAME) while (at < stop && TOKEN[bytes[at]] === 1) at++
        else while (at < stop && isValueByte(bytes[at])) at++
        counted += at - start
        if (at === end) break
      }
      if (counted++ === MAX_HEADER_BYTES) return -1
      const code = bytes[at]
      switch (state) {
        case NAME:
          if (code !== COLON) return -1
          if (name === '') {
            // A name within this piece (nearly always): compared as bytes, no text made of it.
            if (at === from) return -1
            kept = keptNameAt(bytes, from, at)
          } else {
            name += latin1(bytes, from, at)
            kept = KEPT[name.toLowerCase()]
          }
          at++
          state = SPACES
          break
        case SPACES:
          if (code === SP || code === HT) at++
          else {
            state = VALUE
            from = at
          }
          break
        case VALUE:
          if (code !== CR) return -1
          if (kept !== undefined) value += latin1(bytes, from, at)
          at++
          state = AFTER_CR
          break
        case AFTER_CR:
        case AFTER_CRLFCR:
          if (code !== LF) return -1
          at++
          if (state === AFTER_CR) {
            state = AFTER_CRLF
            break
          }
          inHeaders = false
          state = NAME
          counted = pairs = 0
          name = value = ''
          kept = undefined
          return events.headers(headers()) ? -2 : at
        default:
          // RFC 9110 obs-fold: the line goes on (its white space kept in the value).
          if (code === SP || code === HT) {
            state = VALUE
            from = at
            break
          }
          if (++pairs < MAX_HEADER_PAIRS && kept !== undefined && found[kept] === undefined) found[kept] = value
          if (code === CR) {
            at++
            state = AFTER_CRLFCR
          } else {
            state = NAME
            name = value = ''
            kept = undefined
            from = at
          }
      }
    }
    if (state === NAME) name += latin1(bytes, from, end)
    else if (state === VALUE && kept !== undefined) value += latin1(bytes, from, end)
    return end
  }

  /** Bytes between delimiters, as busboy's search callback reads them; true once the parser stops. */
  function feed (bytes: Uint8Array, at: number, end: number): boolean {
    for (;;) {
      if (inHeaders) {
        at = readHeader(bytes, at, end)
        if (at === -2) return (stopped = true)
        if (at === -1) {
          stopped = true
          events.malformed()
          return true
        }
      }
      if (at === end) return false
      if (afterDelimiter === 1) {
        const code = bytes[at]
        afterDelimiter = code === DASH ? 2 : code === CR ? 3 : 0
        if (afterDelimiter !== 0 && ++at === end) return false
      }
      if (afterDelimiter === 2) {
        afterDelimiter = 0
        if (bytes[at] === DASH) return (complete = stopped = true)
        // compat(busboy): the `-` it took is the part's after all.
        if (events.data(DASH_BYTE, 0, 1)) return (stopped = true)
      } else if (afterDelimiter === 3) {
        afterDelimiter = 0
        if (bytes[at] === LF) {
          inHeaders = readsHeaders
          if (++at === end) return false
          continue
        }
        if (events.data(CR_BYTE, 0, 1)) return (stopped = true)
      }
      return events.data(bytes, at, end) && (stopped = true)
    }
  }

  function delimiter (): boolean {
    afterDelimiter = 1
    return events.delimiter() && (stopped = true)
  }

  return {
    ignoreHeaders () { readsHeaders = false },
    end () {
      if (!stopped && held > 0) {
        const carried = held
        held = 0
        feed(needle, 0, carried)
      }
      return complete
    },
    write (chunk) {
      if (stopped) return
      const length = chunk.length
      let at = 0
      if (held > 0) {
        let j = held
        while (j < size && at < length && chunk[at] === needle[j]) { j++; at++ }
        if (j === size) {
          held = 0
          if (delimiter()) return
        } else if (at === length) {
          held = j
          return
        } else {
          // Not a delimiter: the held bytes are data. The needle has one CR, its first byte, so no delimiter
          // starts inside them either.
          const carried = held
          held = 0
          at = 0
          if (feed(needle, 0, carried)) return
        }
      }
      let from = at
      for (let i = findIn(chunk, from); i !== -1; i = findIn(chunk, from)) {
        if (i > from && feed(chunk, from, i)) return
        if (delimiter()) return
        from = i + size
      }
      // A delimiter may start in the last bytes, and end in the next chunk: they are held, not copied.
      for (let i = chunk.indexOf(CR, Math.max(from, length - last)); i !== -1; i = chunk.indexOf(CR, i + 1)) {
        let j = 1
        while (i + j < length && chunk[i + j] === needle[j]) j++
        if (i + j === length) {
          if (i > from && feed(chunk, from, i)) return
          held = length - i
          return
        }
      }
      if (from < length) feed(chunk, from, length)
    }
  }
}
