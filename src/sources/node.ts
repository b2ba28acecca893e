// A Node request as a source: its headers, its protocol's word on the body, its body read from the request itself when
// it is a stream (else from a stream fed by its events), its connection watched, and the rest of a refused body read off.
import { EventEmitter } from 'events'
import { IncomingMessage } from 'http'
import type { Socket } from 'net'
import { PassThrough, type Readable } from 'stream'
import { hasBody } from '../protocol'
import { discardRest } from '../wire'
import type { ReadLifetime, RequestSource } from './request-source'

/** The source of an `IncomingMessage` (HTTP/1.x or HTTP/2), or of a stream or emitter with `headers` as tests build them. */
export const nodeSource: RequestSource = {
  header: (req, name) => req.headers[name] as string | undefined,
  hasBody,
  // Node's HTTP parser refuses such a length before any middleware runs.
  malformedLength: () => null,
  claimBody: () => true,
  bodyStream: bodyStreamOf,
  readWhole: () => false,
  watchRead,
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
    if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)))
  }
  const onClose = (): void => {
    detach()
    // A request that closes before its end was cut short: the reader sees an aborted body, as from Node's request.
    if (body.writableEnded) return
    body.emit('aborted')
    body.destroy()
  }
  const detach = (): void => {
    // A fake may have `on` and nothing to remove a listener with: its listeners then stay, and find the body ended.
    const remove = typeof emitter.removeListener === 'function' ? emitter.removeListener : typeof emitter.off === 'function' ? emitter.off : null
    if (remove === null) return
    remove.call(emitter, 'data', onData)
    remove.call(emitter, 'end', onEnd)
    remove.call(emitter, 'error', onError)
    remove.call(emitter, 'close', onClose)
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
 * Ends the read of a request whose connection or stream closes before its body has ended, tells `lifetime.onGone`
 * when the connection closes while the read still waits (on a storage engine, say), and returns what stops watching.
 * - Node aborts a request itself only while its response is unfinished: once an app or a timeout middleware has
 *   answered first (a 503 with `Connection: close`), the socket closes and nothing more happens on the request, and a
 *   reader waiting for its end or its abort would wait for good, holding its buffers, files and descriptors.
 *   Destroying the request there does what Node does for an unanswered one: 'aborted', then 'close'.
 * - A stream with `headers` (a test's PassThrough) destroyed before its end emits only 'close', which raw-body does not
 *   hear: it is told 'aborted', as a request cut short. Node's own request emits 'aborted' itself when it is destroyed
 *   before its end (IncomingMessage's _destroy), so only other streams (an HTTP/2 request, a test's stream) need their
 *   close watched: an HTTP/1 request costs one listener on its socket, and nothing is allocated where there is
 *   nothing to watch. `on`, not `once`: each event comes at most once, the release removes the listeners, and `once`
 *   costs a wrapper per listener.
 */
function watchRead (req: IncomingMessage, body: Readable, lifetime: ReadLifetime): (() => void) | null {
  // An event-fed body is told of its fake's close by streamFromEvents.
  if (body !== req) return null
  const socket = (req as { socket?: unknown }).socket
  // Only a server's connection: an HTTP/2 stream's session is not this request's, and a test's IncomingMessage over a
  // bare socket never gets `complete`, so its socket's close says nothing of its body.
  const watchSocket = socket instanceof EventEmitter && (socket as { server?: unknown }).server != null && req.httpVersionMajor !== 2
  const watchBody = !(req instanceof IncomingMessage)
  if (!watchSocket && !watchBody) return null
  const bodyWatch = watchBody ? watchClose(body) : null
  if (!watchSocket) return bodyWatch
  const onSocketClose = (): void => {
    // A read waiting on user code is answered first: its cleanup may wait on that code for good.
    lifetime.onGone?.()
    if (!req.complete && !req.destroyed) req.destroy()
  }
  if ((socket as Socket).destroyed) process.nextTick(onSocketClose)
  else socket.on('close', onSocketClose)
  return () => {
    socket.removeListener('close', onSocketClose)
    if (bodyWatch !== null) bodyWatch()
  }
}

/** Tells a stream that closes before its end that it was aborted, as Node's request says it; returns the release. */
function watchClose (body: Readable): () => void {
  let aborted = false
  const onAborted = (): void => { aborted = true }
  const onClose = (): void => {
    if (!aborted && !body.readableEnded) body.emit('aborted')
  }
  body.on('aborted', onAborted)
  body.on('close', onClose)
  return () => {
    body.removeListener('aborted', onAborted)
    body.removeListener('close', onClose)
  }
}
