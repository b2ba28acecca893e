// Turning a body's bytes into text in its charset, as the iconv-lite of each body-parser release decodes them.
import iconv from 'iconv-lite'

/** iconv-lite's decoding (a BOM is stripped); utf-8 (nearly every request) takes Node's native decoder, which agrees with it. */
export function decodeBody (body: Buffer, charset: string): string {
  if (charset === 'utf-8' || charset === 'utf8') {
    const text = body.toString('utf8')
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text
  }
  return iconv.decode(body, charset)
}

/** The bytes iconv-lite 0.4 looks at to guess the byte order of UTF-16 without a BOM. */
const ICONV_0_4_UTF16_WINDOW = 64

/**
 * compat(v1): body-parser 1.x decodes with iconv-lite 0.4, whose `utf-16` without a BOM guesses the byte order from
 * the first 64 bytes (iconv-lite 0.7 looks at 200): more ASCII characters read as big-endian than as little-endian
 * makes it big-endian, else little-endian. For a body read whole this is 0.4's answer exactly (body-parser 1.x
 * decodes as the body arrives, so for a body in pieces it guesses from the first piece of 16 bytes or more).
 */
export function decodeBodyAsIconv04 (body: Buffer, charset: string): string {
  if (!isUtf16WithByteOrderToGuess(charset, body)) return decodeBody(body, charset)
  const length = Math.min(body.length - (body.length % 2), ICONV_0_4_UTF16_WINDOW)
  let asLittleEndian = 0
  let asBigEndian = 0
  for (let i = 0; i < length; i += 2) {
    if (body[i] === 0 && body[i + 1] !== 0) asBigEndian++
    if (body[i] !== 0 && body[i + 1] === 0) asLittleEndian++
  }
  return iconv.decode(body, asBigEndian > asLittleEndian ? 'utf-16be' : 'utf-16le')
}

/** Whether the charset is iconv-lite's `utf16` (which guesses the byte order) and the body has no BOM to say it. */
function isUtf16WithByteOrderToGuess (charset: string, body: Buffer): boolean {
  // iconv-lite's own name folding: lower case, only letters and digits.
  if (charset.toLowerCase().replace(/[^0-9a-z]/g, '') !== 'utf16') return false
  if (body.length < 2) return false
  return !((body[0] === 0xfe && body[1] === 0xff) || (body[0] === 0xff && body[1] === 0xfe))
}
