// A Node request as a source: its headers, its protocol's word on the body, its body read from the request itself when
// it is a stream (else from a stream fed by its events), its connection watched, and the rest of a refused body read off.
import { EventEmitter } from 'events'
import type { IncomingMessage } from 'http'
import type { Socket } from 'net'
import { PassThrough, type Readable } from 'stream'
import { hasBody } from '../protocol'
import { discardRest } from '../wire'
import type { RequestSource } from './request-source'

/** The source of an `IncomingMessage` (HTTP/1.x or HTTP/2), or of a stream or emitter with `headers` as tests build them. */
export const nodeSource: RequestSource = {
  header: (req, name) => req.headers[name] as string | undefined,
  hasBody,
  // Node's HTTP parser refuses such a length before any middleware runs.
  malformedLength: () => null,
  claimBody: () => true,
  bodyStream: bodyStreamOf,
  readWhole: () => false,
  watchConnection: endReadWithConnection,
  discardRest
}

/**
 * The stream the pipeline reads a request's body from. A real request, a `PassThrough` or `Readable.from()`
 * with `headers` (as users' tests build them) is read itself. A request-like that is only an event emitter
 * (node-mocks-http's, whose `send()` emits 'data' and 'end') is read through a stream fed by its events, so
 * that piping, pausing and the read-off after an error work on it too; the request object itself is left as it is.
 */
function bodyStreamOf (req: IncomingMessage): Readable {
  return isReadableStream(req) ? req : streamFromEvents(req)
}

function isReadableStream (req: IncomingMessage): boolean {
  return typeof req.pipe === 'function' && typeof req.pause === 'function' && typeof req.resume === 'function' &&
    typeof req.read === 'function' && typeof req.unpipe === 'function'
}

/**
 * A stream of what an event-emitting request-like emits. Its listeners stay until the request ends, errs or
 * closes: such a fake pushes its body whatever the reader does, so there is no backpressure to give.
 */
function streamFromEvents (req: IncomingMessage): Readable {
  const body = new PassThrough()
  const emitter = req as unknown as NodeJS.EventEmitter
  const onData = (chunk: unknown): void => {
    if (body.destroyed || body.writableEnded) return
    body.write(typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : String(chunk))
  }
  const onEnd = (): void => {
    detach()
    if (!body.destroyed) body.end()
  }
  const onError = (err: unknown): void => {
    detach()
    body.destroy(err instanceof Error ? err : new Error(String(err)))
  }
  const onClose = (): void => {
    detach()
    // A request that closes before its end was cut short: the reader sees an aborted body, as from Node's request.
    if (body.writableEnded) return
    body.emit('aborted')
    body.destroy()
  }
  const detach = (): void => {
    emitter.removeListener('data', onData)
    emitter.removeListener('end', onEnd)
    emitter.removeListener('error', onError)
    emitter.removeListener('close', onClose)
  }
  if (typeof emitter.on === 'function') {
    emitter.on('data', onData)
    emitter.on('end', onEnd)
    emitter.on('error', onError)
    emitter.on('close', onClose)
  } else {
    // Not even an event emitter: there is no body to wait for.
    body.end()
  }
  return body
}

/**
 * Ends the read of a request whose connection closes before its body has ended, and returns what stops watching
 * (null when there is nothing to watch). Node aborts such a request itself only while its response is unfinished: once an app or a timeout middleware has
 * answered first (say a 503 with `Connection: close`), the socket closes and nothing more happens on the request, so
 * a reader waiting for its end or its abort would wait for good, holding its buffers, files and descriptors.
 * Destroying the request there does what Node does for an unanswered one: 'aborted', then 'close'.
 */
function endReadWithConnection (req: IncomingMessage, body: Readable): (() => void) | null {
  const socket = (req as { socket?: unknown }).socket
  // A fake's stream or an event-fed body ends with the fake; an HTTP/2 stream's session is not this request's.
  if (body !== req || !(socket instanceof EventEmitter) || req.httpVersionMajor === 2) return null
  const onClose = (): void => {
    if (!req.complete && !req.destroyed) req.destroy()
  }
  if ((socket as Socket).destroyed) {
    process.nextTick(onClose)
    return null
  }
  socket.once('close', onClose)
  return () => { socket.removeListener('close', onClose) }
}
