// Bytes in the Web build: pieces of a body joined without Buffer.

/** The pieces as one array, copied once; a body in one piece is that piece, uncopied. */
export function joinBytes (pieces: readonly Uint8Array[], size: number): Uint8Array {
  if (pieces.length === 1) return pieces[0]
  const bytes = new Uint8Array(size)
  let at = 0
  for (const piece of pieces) {
    bytes.set(piece, at)
    at += piece.byteLength
  }
  return bytes
}
