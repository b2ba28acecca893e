// The bench clients' way to send a large upload: `size` bytes of one reused chunk, waiting for 'drain' when the socket is full.
import type { ClientRequest } from 'node:http'

/**
 * Writes `head`, then `size` bytes made of `chunk` repeated (the client's memory stays flat whatever the size),
 * then ends the request with `tail`; each write that fills the socket's buffer waits for 'drain'.
 */
export function writeRepeated (req: ClientRequest, head: Uint8Array, chunk: Uint8Array, size: number, tail: Uint8Array): void {
  let sent = 0
  const write = (): void => {
    while (sent < size) {
      const piece = size - sent >= chunk.length ? chunk : chunk.subarray(0, size - sent)
      sent += piece.length
      if (!req.write(piece)) {
        req.once('drain', write)
        return
      }
    }
    req.end(tail)
  }
  req.write(head)
  write()
}
