// Content-Encodings in the Web build: the runtime's DecompressionStream, with the formats it has.

/** bodykit's Content-Encoding names and the DecompressionStream formats that read them ('br' is 'brotli' where it exists). */
const FORMATS: ReadonlyArray<readonly [string, string]> = [['gzip', 'gzip'], ['deflate', 'deflate'], ['br', 'brotli'], ['zstd', 'zstd']]

let formats: ReadonlyMap<string, string> | null = null

/**
 * The Content-Encodings this runtime inflates, each with its format: asked of the runtime once, on first use (Node 20
 * and workerd have gzip and deflate, Deno adds brotli, Bun zstd too; Vercel's edge-runtime has no DecompressionStream,
 * so every encoding is 415 `encoding.unsupported` there).
 */
export function webDecompressors (): ReadonlyMap<string, string> {
  if (formats !== null) return formats
  const found = new Map<string, string>()
  if (typeof DecompressionStream === 'function') {
    for (const [encoding, format] of FORMATS) {
      try {
        new DecompressionStream(format as 'gzip')
        found.set(encoding, format)
      } catch {
        // Not offered here: 415 for this encoding.
      }
    }
  }
  return (formats = found)
}
