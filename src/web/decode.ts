// Turning a body's bytes into text in the Web build: the runtime's TextDecoder, and by hand the labels iconv-lite reads otherwise than WHATWG.

/** A decoder for one charset: the body's bytes to text, a leading BOM dropped (as iconv-lite drops it). */
type Decode = (bytes: Uint8Array) => string

/**
 * windows-1252's characters for 0x80–0x9F (U+FFFD where it has none, as iconv-lite reads them); the other bytes are
 * their own code points. Hand-written because Node 20's TextDecoder (and so Vercel's edge-runtime) reads the label as
 * ISO-8859-1, where Bun, Deno and workerd follow WHATWG.
 */
const WINDOWS_1252_HIGH = '€\ufffd‚ƒ„…†‡ˆ‰Š‹Œ\ufffdŽ\ufffd\ufffd‘’“”•–—˜™š›œ\ufffdžŸ'

/** Bytes as code points, each byte one character, through `map` for bytes at or above 0x80. */
function byteDecoder (high: (byte: number) => string): Decode {
  return function decodeBytes (bytes) {
    let text = ''
    // Runs of plain ASCII go through fromCharCode in slices: a character at a time is several times slower.
    for (let start = 0; start < bytes.length;) {
      let end = start
      while (end < bytes.length && bytes[end] < 0x80 && end - start < 4096) end++
      if (end > start) text += String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[])
      if (end < bytes.length && bytes[end] >= 0x80) text += high(bytes[end++])
      start = end
    }
    return text
  }
}

/**
 * iconv-lite's single-byte charsets whose WHATWG label means another one (WHATWG reads every one of them as
 * windows-1252): names folded as iconv-lite folds them, lower case, letters and digits only.
 */
const HAND_DECODERS = new Map<string, Decode>()
const asLatin1 = byteDecoder((byte) => String.fromCharCode(byte))
for (const name of ['latin1', 'iso88591', 'l1', 'cp819', 'ibm819', 'csisolatin1', 'isoir100', 'iso885911987', 'binary']) HAND_DECODERS.set(name, asLatin1)
HAND_DECODERS.set('ascii', byteDecoder(() => '\ufffd'))
HAND_DECODERS.set('usascii', byteDecoder(() => '\ufffd'))
const asWindows1252 = byteDecoder((byte) => byte < 0xa0 ? WINDOWS_1252_HIGH[byte - 0x80] : String.fromCharCode(byte))
for (const name of ['windows1252', 'cp1252']) HAND_DECODERS.set(name, asWindows1252)

const UTF8 = new TextDecoder('utf-8')

/** Decoders made for the labels requests named; bounded, since labels come from requests. */
const madeDecoders = new Map<string, Decode | null>()

/** The decoder for a charset label, or null when this runtime's TextDecoder refuses it (then 415 `charset.unsupported`). */
function decoderFor (charset: string): Decode | null {
  if (charset === 'utf-8' || charset === 'utf8') return decodeUtf8
  let decode = madeDecoders.get(charset)
  if (decode !== undefined) return decode
  decode = HAND_DECODERS.get(charset.toLowerCase().replace(/[^0-9a-z]/g, '')) ?? null
  if (decode === null) {
    try {
      const decoder = new TextDecoder(charset)
      decode = (bytes) => decoder.decode(bytes)
    } catch {
      decode = null
    }
  }
  if (madeDecoders.size > 256) madeDecoders.clear()
  madeDecoders.set(charset, decode)
  return decode
}

/** UTF-8 as every runtime reads it (WHATWG's replacement of bad sequences is Node's and iconv-lite's). */
function decodeUtf8 (bytes: Uint8Array): string {
  return UTF8.decode(bytes)
}

/** Whether the runtime can decode a charset: its TextDecoder knows the label, or it is one read by hand. */
export function knowsWebCharset (charset: string): boolean {
  return decoderFor(charset) !== null
}

/** Decodes a body in a charset knowsWebCharset accepted; a leading BOM is dropped (TextDecoder's default). */
export function decodeWebBody (bytes: Uint8Array, charset: string): string {
  const text = (decoderFor(charset) as Decode)(bytes)
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
}
