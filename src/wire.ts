// The bytes on the wire that are not the parsed body: a compressed body's wire count, and the bounded discard of an abandoned body.
import { EventEmitter } from 'events'
import type { IncomingMessage, ServerResponse } from 'http'
import type { ServerHttp2Stream } from 'http2'
import type { Socket } from 'net'
import type { Readable } from 'stream'
import type { HttpError } from 'http-errors'
import onFinished from 'on-finished'
import * as errors from './errors'
import type { DiscardBudget } from './options'
import { http2StreamOf } from './protocol'

/** A body that stops arriving for this long is given up on (nginx's `lingering_timeout`). */
export const DISCARD_IDLE_MS = 5000

/** Once bodykit half-closed a connection after its response, how long the client has to read it before it is destroyed. */
export const LINGER_MS = 2000

/**
 * Once the answer is out, a refused body that stops arriving for this long no longer keeps its connection alive: it is
 * half-closed (and still read off). Node's http client, piping an upload that was answered early on a kept-alive
 * connection, waits for good on a 'drain' that never comes; the half-close ends its request. A client that sends on
 * is read off as before; it only loses the connection's reuse.
 */
export const QUIET_AFTER_ANSWER_MS = 250

/** Content-Length as raw-body reads it: null when absent or not a number (so `''` gives NaN, as there). */
export function parseLength (header: string | undefined): number | null {
  return header != null && !Number.isNaN(Number(header)) ? parseInt(header, 10) : null
}

function byteLength (chunk: Buffer | string): number {
  // A stream with an encoding set emits strings; count what crossed the wire, not characters.
  return typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length
}

/**
 * Counts the bytes of a body read as a stream as they arrive and checks them against the declared length, and
 * reports an abort or a read error (`limit` on the wire is a LimitedInput's, src/stage-input.ts). It reports once:
 * `onError` with the first failure, or `onEnd` when the request ended with a consistent count.
 */
export class WireCounter {
  received = 0
  /** Whether the request's body has been read to its end. */
  ended: boolean
  private readonly body: Readable
  private readonly expected: number | null
  private readonly onError: (err: HttpError) => void
  private readonly onEnd: () => void

  constructor (body: Readable, expected: number | null, onError: (err: HttpError) => void, onEnd: () => void) {
    this.body = body
    this.expected = expected
    this.onError = onError
    this.onEnd = onEnd
    this.ended = body.readableEnded
    if (this.ended) return
    body.on('data', this.handleData)
    body.on('end', this.handleEnd)
    body.on('aborted', this.handleAborted)
    body.on('close', this.handleAborted)
    body.on('error', this.handleError)
  }

  /** Removes the listeners; safe to call more than once. */
  stop (): void {
    this.body.removeListener('data', this.handleData)
    this.body.removeListener('end', this.handleEnd)
    this.body.removeListener('aborted', this.handleAborted)
    this.body.removeListener('close', this.handleAborted)
    this.body.removeListener('error', this.handleError)
  }

  private fail (err: HttpError): void {
    this.stop()
    this.onError(err)
  }

  private readonly handleData = (chunk: Buffer | string): void => {
    this.received += byteLength(chunk)
  }

  private readonly handleEnd = (): void => {
    this.ended = true
    // Security (CVE-2026-54288): the declared length is checked against the bytes counted, never trusted alone.
    // compat: with an encoding set (a developer error) the chunks are re-encoded strings, not the wire
    // bytes; body-parser reports the zlib error that follows, so no length verdict is given here.
    if (this.expected !== null && this.received !== this.expected && this.body.readableEncoding === null) {
      this.fail(errors.sizeMismatch(this.received, this.expected))
      return
    }
    this.stop()
    this.onEnd()
  }

  private readonly handleAborted = (): void => {
    this.fail(errors.requestAborted(this.received, this.expected))
  }

  private readonly handleError = (err: unknown): void => {
    this.fail(errors.readFailed(err))
  }
}

/**
 * Reads off what is left of a request bodykit answers with an error, within `budget`: its bytes, its time,
 * and DISCARD_IDLE_MS without data. An ordinary client thus finishes its upload and reads the response even if
 * it reads only once its upload is done. Past a bound the request is no longer read and, once the response is
 * out, the connection is closed (HTTP/1.x) or the request's stream alone is reset (HTTP/2: the session's other
 * streams are other requests). `onSettled` (if given) runs once the body ended or was given up on.
 * Start it before the response is finished, or Node starts its own, unbounded, read-off. `body` is the stream
 * the body is read from: the request itself, or the stream fed by an event-only fake's events. A request
 * without a socket (a stream built by a test) has no connection to close: only the stream is read off or paused.
 * This is a Node request's read-off (a Request's body is cancelled instead: sources/web.ts).
 */
export function discardRest (req: IncomingMessage, body: Readable, res: ServerResponse | undefined, budget: DiscardBudget, onSettled?: () => void): void {
  if (body.readableEnded || body.destroyed) {
    if (onSettled) process.nextTick(onSettled)
    return
  }
  const stream = http2StreamOf(req)
  const socket = req.complete || stream !== null ? null : closableSocketOf(req)
  // RFC 9112 §9.6: closing a connection with unread request bytes makes the kernel send RST, and a client
  // still uploading can then lose the response. Node closes a `Connection: close` response's socket with
  // destroySoon() right after the response; on this socket that becomes a half-close and a grace period.
  if (socket !== null) socket.destroySoon = lingerThenDestroy
  const declared = parseLength(req.headers['content-length'])
  // A client that reads only after its upload cannot be served anyway: reading any of it would be wasted.
  if (!req.complete && declared !== null && declared > budget.bytes) {
    stopReading(req, body, res, socket, stream)
    if (onSettled) process.nextTick(onSettled)
    return
  }
  if (socket !== null) discarding.add(socket)
  let left = budget.bytes
  let quiet: NodeJS.Timeout | null = null
  const onData = (chunk: Buffer | string): void => {
    left -= byteLength(chunk)
    if (left < 0) giveUp()
    else {
      idle.refresh()
      quiet?.refresh()
    }
  }
  let settled = false
  const cleanup = (): void => {
    settled = true
    clearTimeout(timer)
    clearTimeout(idle)
    if (quiet !== null) clearTimeout(quiet)
    body.removeListener('data', onData)
    if (socket !== null) {
      discarding.delete(socket)
      if (lingering.has(socket)) destroyLater(socket)
    }
  }
  const giveUp = (): void => {
    cleanup()
    stopReading(req, body, res, socket, stream)
    onSettled?.()
  }
  // A body still trickling in gets the budget's time, not a connection (the bytes already here cost nothing).
  const timer = setTimeout(giveUp, budget.ms).unref()
  const idle = setTimeout(giveUp, Math.min(DISCARD_IDLE_MS, budget.ms)).unref()
  body.on('data', onData)
  // Once the answer is out, a body that goes quiet gives up its connection's reuse (QUIET_AFTER_ANSWER_MS).
  if (socket !== null && isResponse(res)) {
    onFinished(res, () => {
      if (!settled) quiet = setTimeout(() => { if (!settled) lingerThenDestroy.call(socket) }, QUIET_AFTER_ANSWER_MS).unref()
    })
  }
  // on-finished, as body-parser's read-off: the end of the body, or of its socket (Node no longer aborts a
  // request whose response is out when the socket closes).
  whenBodyFinished(req, body, () => {
    if (settled) return
    cleanup()
    onSettled?.()
  })
  body.resume()
}

/**
 * Stops reading the request (TCP or HTTP/2 flow control holds the client), then closes the connection or resets
 * the HTTP/2 stream after the response.
 */
function stopReading (req: IncomingMessage, body: Readable, res: ServerResponse | undefined, socket: Socket | null, stream: ServerHttp2Stream | null): void {
  body.pause()
  // Throws away what is buffered (already in memory) and, by reading, marks the request as consumed: Node
  // then does not read the whole body off (`_dump`) when the response finishes. Backpressure does the rest.
  while (body.read() !== null);
  if (stream !== null) {
    resetAfterResponse(req, stream)
    return
  }
  // Without a real response (a promise API, a fake) the connection is left to its owner: backpressure holds it.
  if (!isResponse(res) || socket === null || socket.destroyed) return
  if (!res.headersSent) res.setHeader('Connection', 'close')
  onFinished(res, () => { lingerThenDestroy.call(socket) })
}

// RFC 9113 §7's NO_ERROR (http2.constants.NGHTTP2_NO_ERROR): a constant, so that HTTP/1 apps never load node:http2 for it.
const HTTP2_NO_ERROR = 0

/**
 * Once an HTTP/2 stream's response has been sent, gives its client LINGER_MS to stop the upload itself, then
 * resets the stream alone with NO_ERROR (RFC 9113 §8.1's way to ask a client to stop sending a request whose
 * complete response it has) and drains the window of DATA it still holds: a closed stream is freed only at the
 * end of its readable side, which a paused request never reaches. The stream's own 'finish' is the signal: the
 * compat response emits its 'finish' only when the stream closes. Resetting at once raced the response's last
 * frame under load (curl: "Stream error in the HTTP/2 framing layer"); CANCEL is an error for curl (exit 92).
 */
function resetAfterResponse (req: IncomingMessage, stream: ServerHttp2Stream): void {
  const release = (): void => {
    if (stream.destroyed) return
    if (!stream.closed) stream.close(HTTP2_NO_ERROR)
    req.resume()
  }
  const linger = (): void => {
    const timer = setTimeout(release, LINGER_MS).unref()
    stream.once('close', () => clearTimeout(timer))
  }
  if (stream.writableFinished) linger()
  else stream.once('finish', linger)
}

/** Sockets whose abandoned body is still being read off: their destruction waits for the end of it. */
const discarding = new WeakSet<Socket>()
/** Sockets half-closed after the response. */
const lingering = new WeakSet<Socket>()
const doomed = new WeakSet<Socket>()

/** Half-closes the connection after the response; it is destroyed LINGER_MS after the body was read off or given up on. */
function lingerThenDestroy (this: Socket): void {
  if (lingering.has(this) || this.destroyed) return
  lingering.add(this)
  this.end()
  if (!discarding.has(this)) destroyLater(this)
}

/** Destroys the socket LINGER_MS from now, unless the client closes it first. */
function destroyLater (socket: Socket): void {
  if (doomed.has(socket)) return
  doomed.add(socket)
  const timer = setTimeout(() => socket.destroy(), LINGER_MS).unref()
  socket.once('close', () => clearTimeout(timer))
}

/** Whether `res` is a real response (the fake ones of tests and benchmarks are plain objects). */
export function isResponse (res: ServerResponse | undefined): res is ServerResponse {
  return res != null && typeof res === 'object' && typeof res.setHeader === 'function' && typeof res.on === 'function'
}

/** The request's socket when it is a real, open one that can be half-closed (fakes, socket-less streams and HTTP/2 aside). */
function closableSocketOf (req: IncomingMessage): Socket | null {
  const socket = (req as { socket?: unknown }).socket as Socket | null | undefined
  if (socket == null || typeof socket !== 'object') return null
  return !socket.destroyed && typeof socket.end === 'function' && typeof socket.destroySoon === 'function' ? socket : null
}

/**
 * Calls back once the body has been read to its end or its connection is gone: on-finished's answer (the end of
 * the request, or the close of its socket) for a request read itself, with a real socket or none. A fake socket
 * that is not an event emitter (serverless-express's plain object) cannot be watched, nor does an event-fed body
 * have one: there the body stream's own end, error or close is the signal.
 */
function whenBodyFinished (req: IncomingMessage, body: Readable, callback: () => void): void {
  const socket = (req as { socket?: unknown }).socket
  // on-finished takes a stream that can be written (a test's PassThrough) for a response, and waits for its 'finish'.
  const writable = typeof (req as { write?: unknown }).write === 'function'
  if (body === req && !writable && (socket == null || socket instanceof EventEmitter)) {
    onFinished(req, callback)
    return
  }
  let called = false
  const once = (): void => {
    if (called) return
    called = true
    body.removeListener('end', once)
    body.removeListener('error', once)
    body.removeListener('close', once)
    callback()
  }
  body.on('end', once)
  body.on('error', once)
  body.on('close', once)
}
